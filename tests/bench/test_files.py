"""Atomic writes of the build outputs: readable like any file the process writes, no temp left behind."""

from __future__ import annotations

import os
import stat

import pytest

from chpit_assets.files import write_atomic


@pytest.fixture
def umask():
    """Set the process umask for one test (mkstemp's 0600 would ignore it), then restore it."""
    previous = os.umask(0o022)
    yield os.umask
    os.umask(previous)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_written_files_get_the_umasks_mode_not_0600(tmp_path, umask, mask, mode):
    umask(mask)
    path = tmp_path / "build" / "bench-de.jsonl"
    write_atomic(path, b"{}\n")
    assert stat.S_IMODE(path.stat().st_mode) == mode
    path.chmod(0o600)  # a file left by an older build is replaced, mode and all
    write_atomic(path, b"{}\n{}\n")
    assert (path.read_bytes(), stat.S_IMODE(path.stat().st_mode)) == (b"{}\n{}\n", mode)
    assert os.listdir(path.parent) == ["bench-de.jsonl"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "report.json"
    write_atomic(path, b"old")
    with pytest.raises(TypeError):
        write_atomic(path, "not bytes")  # type: ignore[arg-type]
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["report.json"]
