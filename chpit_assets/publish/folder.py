"""Swapping a staged publication into `data/publish/` so the live folder is always one whole build.

The staged folder is built next to the live one (same filesystem, so `rename` is atomic); the live
folder is renamed aside, the staged one renamed into its place, and only then is the previous one
deleted. A reader sees the old build or the new one, never a mix. The only window is between the
two renames, where the live path briefly does not exist; a crash inside it leaves
`<publish>.previous`, which `recover` (run before every swap) renames back.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

PREVIOUS_SUFFIX = ".previous"


def _previous(publish_dir: Path) -> Path:
    return publish_dir.with_name(publish_dir.name + PREVIOUS_SUFFIX)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def recover(publish_dir: Path) -> None:
    """Undo a swap interrupted between its two renames: the previous build becomes live again."""
    previous = _previous(publish_dir)
    if previous.exists() and not publish_dir.exists():
        os.rename(previous, publish_dir)
    elif previous.exists():
        shutil.rmtree(previous)  # the swap completed; only the clean-up was interrupted


def new_staging_dir(publish_dir: Path) -> Path:
    """An empty folder next to `publish_dir` (same filesystem, so the swap is a rename)."""
    publish_dir.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{publish_dir.name}-next-", dir=publish_dir.parent))
    # mkdtemp makes it 0700; once swapped in it is the published folder, readable like any other.
    umask = os.umask(0)
    os.umask(umask)
    staged.chmod(0o777 & ~umask)
    return staged


def swap_in(staged: Path, publish_dir: Path) -> None:
    """Make `staged` the live `publish_dir`; the previous build is kept until the new one is in place."""
    recover(publish_dir)
    previous = _previous(publish_dir)
    had_previous = publish_dir.exists()
    if had_previous:
        os.rename(publish_dir, previous)
    try:
        os.rename(staged, publish_dir)
    except BaseException:
        if had_previous:
            os.rename(previous, publish_dir)
        raise
    _fsync_dir(publish_dir.parent)
    if had_previous:
        shutil.rmtree(previous)


def published_counts(publish_dir: Path) -> dict[str, int]:
    """Items per language in the live publication (from the full shards' parquet footers). Read-only:
    after a crash between the swap's renames the live build is the one in `<publish>.previous`."""
    live = publish_dir if publish_dir.exists() else _previous(publish_dir)
    counts: dict[str, int] = defaultdict(int)
    for shard in sorted(live.glob("data/*/full-*.parquet")):
        counts[shard.parent.name] += pq.read_metadata(shard).num_rows
    return dict(counts)


def folder_files(folder: Path) -> dict[str, bytes]:
    """{relative path: bytes} of every file under `folder`, for byte-for-byte comparisons."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
