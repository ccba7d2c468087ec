"""How a run worker captures its stdout and stderr (issue 27.2): into the files Dagster's local
compute log manager reads, mirrored to the worker's console by a thread, with no child process.

Each capture runs in a process of its own: it swaps the process's file descriptors 1 and 2, which
pytest's own capture must not see swapped."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import dagster as dg
import pytest

from chpit_assets.orchestration.launcher import ThreadedComputeLogManager, with_threaded_log_capture

ROOT = Path(__file__).resolve().parents[2]

CAPTURE = textwrap.dedent(
    """
    import os, subprocess, sys
    from chpit_assets.orchestration.launcher import ThreadedComputeLogManager

    def refuse(*args, **kwargs):
        raise AssertionError(f"the capture started a process: {args}")

    subprocess.Popen = refuse  # Dagster's manager starts `tail -F` and a watcher through it
    manager = ThreadedComputeLogManager(sys.argv[1])
    with manager.capture_logs(["run", "key"]):
        print("from Python")
        sys.stdout.flush()
        os.write(1, b"from the descriptor\\n")
        os.system("echo from a child of the step")  # inherits the captured descriptors
        print("to stderr", file=sys.stderr)
        sys.stdout.write("x" * int(sys.argv[2]))
    if not int(sys.argv[2]):
        print("after the capture")
    """
)


def _capture(tmp_path: Path, size: int = 0, **run) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", CAPTURE, str(tmp_path / "logs"), str(size)], env=env, timeout=120, **run
    )


def test_a_capture_writes_the_files_dagster_reads_and_mirrors_them_to_the_console(tmp_path) -> None:
    done = _capture(tmp_path, capture_output=True)
    assert done.returncode == 0, done.stderr
    captured = b"from Python\nfrom the descriptor\nfrom a child of the step\n"
    # The console got every line, in order, and what came after the capture.
    assert done.stdout == captured + b"after the capture\n"
    assert done.stderr == b"to stderr\n"
    # Dagster's own manager (the webserver's) reads the same files, and sees the capture complete.
    local_manager = ThreadedComputeLogManager.__bases__[0]
    assert local_manager.__name__ == "LocalComputeLogManager"
    local = local_manager(str(tmp_path / "logs"))
    data = local.get_log_data(["run", "key"])
    assert data.stdout == captured and data.stderr == b"to stderr\n"
    assert local.is_capture_complete(["run", "key"])


def test_a_console_nobody_reads_does_not_fail_the_run_and_the_file_keeps_everything(tmp_path) -> None:
    read, write = os.pipe()
    os.close(read)  # the console is gone: each copy to it fails (EPIPE)
    try:
        done = _capture(tmp_path, size=1 << 20, stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert done.returncode == 0 and done.stderr == b"to stderr\n", done.stderr
    out = (tmp_path / "logs" / "run" / "key.out").read_bytes()
    assert out.startswith(b"from Python\nfrom the descriptor\n") and out.endswith(b"x" * (1 << 20))
    assert (tmp_path / "logs" / "run" / "key.complete").exists()


def test_a_stream_without_a_descriptor_is_left_alone(tmp_path) -> None:
    """A test's capture (or any stream object with no file descriptor) is not redirected, as Dagster's
    own manager leaves it; the files are still created and the capture marked complete."""

    class NoDescriptor:
        def write(self, text: str) -> int:
            raise AssertionError("not written through")

        def fileno(self) -> int:
            raise OSError("no descriptor")

        def flush(self) -> None:
            pass

    manager = ThreadedComputeLogManager(str(tmp_path))
    out, err = NoDescriptor(), NoDescriptor()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdout", out)
        patch.setattr(sys, "stderr", err)
        with manager.capture_logs(["run", "plain"]):
            assert sys.stdout is out and sys.stderr is err
    assert (tmp_path / "run" / "plain.out").read_bytes() == b""
    assert manager.is_capture_complete(["run", "plain"])


def test_the_worker_opens_its_instance_with_the_threaded_capture_in_the_same_folder() -> None:
    with dg.instance_for_test() as instance:
        ref = instance.get_ref()
        worker = with_threaded_log_capture(ref)
        assert worker is not None and worker.compute_logs_data.class_name == "ThreadedComputeLogManager"
        assert worker.compute_logs_data.config_yaml == ref.compute_logs_data.config_yaml
        assert worker._replace(compute_logs_data=ref.compute_logs_data) == ref  # nothing else changes
        with dg.DagsterInstance.from_ref(worker) as opened:
            manager = opened.compute_log_manager
            assert isinstance(manager, ThreadedComputeLogManager)
            assert manager._base_dir == instance.compute_log_manager._base_dir
        # Another manager (a cloud bucket's, or none) is left as configured.
        other = ref._replace(
            compute_logs_data=ref.compute_logs_data._replace(
                module_name="dagster_aws.s3", class_name="S3ComputeLogManager"
            )
        )
        assert with_threaded_log_capture(other) is other
        assert with_threaded_log_capture(None) is None
