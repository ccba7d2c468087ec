"""Issue 23.7/23.8: Ctrl-C in the middle of `python -m chpit_assets run`, as a terminal sends it: SIGINT
to the whole process group (the CLI, its code server and the run worker asking a model)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import dagster as dg

from chpit_assets.cli import EXIT_INTERRUPTED
from tests.runs.conftest import ScriptedServer, completion
from tests.test_cli import ROOT, run_cli

INTERRUPT_AT = 2
"""The request during which Ctrl-C is pressed: the model is still answering it."""


def _files(folder) -> dict:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_ctrl_c_mid_backfill_cancels_it_starts_no_new_call_and_leaves_the_publication_whole(tmp_path):
    first = run_cli(tmp_path)  # a whole build, published: what the interrupted run must not touch
    assert first.returncode == 0, first.stdout + first.stderr
    published = _files(tmp_path / "data" / "publish")
    assert published

    asked = threading.Event()
    release = threading.Event()

    def slow(body):
        if len(server.hits) == INTERRUPT_AT:
            asked.set()
            release.wait(30)  # the answer arrives only after the interrupt
        return 200, completion("1 Irgendein Text.")

    server = ScriptedServer(slow)
    env = dict(os.environ, DAGSTER_HOME=str(tmp_path / "home"), CHPIT_DATA_DIR=str(tmp_path / "data"))
    env.pop("CHPIT_PG_URL", None)
    args = ["--langs", "de", "--systems", "slow/closed", "--model-slug", "slow", "--base-url", server.base_url]
    try:
        cli = subprocess.Popen(
            [sys.executable, "-m", "chpit_assets", "run", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, as a terminal's foreground job has
            # a test runner may ignore SIGINT, and a child inherits that: the CLI must see it as a shell's would
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            assert asked.wait(300), "the model was never asked"
            os.killpg(cli.pid, signal.SIGINT)
            release.set()
            out, err = cli.communicate(timeout=300)
        finally:
            if cli.poll() is None:
                os.killpg(cli.pid, signal.SIGKILL)
    finally:
        release.set()
        server.close()
    assert cli.returncode == EXIT_INTERRUPTED, out + err
    assert "interrupted" in err and "kept" in err, out + err
    assert len(server.hits) == INTERRUPT_AT, "a model call started after the interrupt"
    assert _files(tmp_path / "data" / "publish") == published
    with dg.DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        latest = max(instance.get_backfills(), key=lambda b: b.backfill_timestamp)
        assert latest.status.value == "CANCELED", (latest.status, out, err)
        runs = instance.get_runs(dg.RunsFilter(tags={"dagster/backfill": latest.backfill_id}))
        assert runs and all(r.is_finished for r in runs)
    log = tmp_path / "data" / "results" / "slow" / "closed" / "de.jsonl"
    kept = log.read_text().splitlines()
    assert INTERRUPT_AT - 1 <= len(kept) <= INTERRUPT_AT  # the answers before it, and the one in flight if it landed
    assert f"slow/closed [de]: {len(kept)} answer(s) kept in {log}, not asked again" in err, err
