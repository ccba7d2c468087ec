"""Swapping a staged publication into `data/publish/` so the live folder is always one whole build.

The staged folder is built next to the live one (same filesystem, so `rename` is atomic); the live
folder is renamed aside, the staged one renamed into its place, and only then is the previous one
deleted. A reader sees the old build or the new one, never a mix. The only window is between the
two renames, where the live path briefly does not exist; a crash inside it leaves
`<publish>.previous`, which `recover` renames back.

Only one publisher at a time (`publisher_lock`, an flock beside the folder): two swaps at once
would rename into each other's `.previous` (Errno 39, directory not empty). Whoever takes the
lock first repairs what a killed publisher left (`recover`): an interrupted swap is undone or
completed, staged folders and the build's temp files from dead writers are removed.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow.parquet as pq

from chpit_assets.faults import kill_point

from .errors import PublishError
from .gate import ActCounts, act_counts

PREVIOUS_SUFFIX = ".previous"
LOCK_SUFFIX = ".lock"
PROCESS_STARTED = time.time()
"""When this process loaded the publisher: a build temp file older than that was left by a process
that died (a live writer's temp file exists for the milliseconds of one write), see `recover`."""


def _previous(publish_dir: Path) -> Path:
    return publish_dir.with_name(publish_dir.name + PREVIOUS_SUFFIX)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _staging_prefix(publish_dir: Path) -> str:
    return f".{publish_dir.name}-next-"


@contextmanager
def publisher_lock(publish_dir: Path, wait_s: float = 600.0, poll_s: float = 0.2) -> Iterator[None]:
    """Hold the one publisher lock of `publish_dir`, waiting up to `wait_s` for another publisher to
    finish; then PublishError naming the lock file. The kernel drops the lock when its holder dies,
    so a killed publisher never blocks the next one."""
    publish_dir.parent.mkdir(parents=True, exist_ok=True)
    path = publish_dir.with_name(f".{publish_dir.name}{LOCK_SUFFIX}")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise PublishError(
                        f"another publication of {publish_dir} is running (it holds {path}); "
                        f"waited {wait_s:g} s, nothing was changed"
                    ) from None
                time.sleep(poll_s)
        yield
    finally:
        os.close(fd)  # releases the lock


def recover(publish_dir: Path, build_dir: Path | None = None, *, older_than: float = PROCESS_STARTED) -> list[str]:
    """Repair what a killed publisher or build left; call it holding `publisher_lock`. Returns what it did.

    - `<publish>.previous` without `<publish>`: killed between the swap's renames, so the previous
      build goes back (the new one is still staged and is discarded below).
    - both: killed after the swap, before the clean-up: the swap is complete, the previous goes.
    - `.<publish>-next-*` folders: staged by a dead publisher (the lock says none is running).
    - `build_dir/.*.tmp` older than `older_than`: `files.write_atomic` temp files whose writer died."""
    done = []
    previous = _previous(publish_dir)
    if previous.exists() and not publish_dir.exists():
        os.rename(previous, publish_dir)
        done.append(f"restored {publish_dir} from {previous.name} (a swap was interrupted)")
    elif previous.exists():
        shutil.rmtree(previous)
        done.append(f"removed {previous.name} (a swap completed, its clean-up was interrupted)")
    if publish_dir.parent.exists():
        for staged in sorted(publish_dir.parent.glob(_staging_prefix(publish_dir) + "*")):
            shutil.rmtree(staged)
            done.append(f"removed the staged folder {staged.name} of an interrupted publication")
    if build_dir is not None and build_dir.exists():
        for tmp in sorted(build_dir.glob(".*.tmp")):
            if tmp.is_file() and tmp.stat().st_mtime < older_than:
                tmp.unlink()
                done.append(f"removed {tmp.name}, left in {build_dir} by a killed writer")
    return done


def new_staging_dir(publish_dir: Path) -> Path:
    """An empty folder next to `publish_dir` (same filesystem, so the swap is a rename)."""
    publish_dir.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=_staging_prefix(publish_dir), dir=publish_dir.parent))
    # mkdtemp makes it 0700; once swapped in it is the published folder, readable like any other.
    umask = os.umask(0)
    os.umask(umask)
    staged.chmod(0o777 & ~umask)
    return staged


def swap_in(staged: Path, publish_dir: Path) -> None:
    """Make `staged` the live `publish_dir`; the previous build is kept until the new one is in place.
    Call it holding `publisher_lock`, after `recover`."""
    previous = _previous(publish_dir)
    if previous.exists():
        raise PublishError(f"{previous} exists: run recover() under the publisher lock before swapping")
    had_previous = publish_dir.exists()
    if had_previous:
        os.rename(publish_dir, previous)
        kill_point("publish.swap_aside")
    try:
        os.rename(staged, publish_dir)
    except BaseException:
        if had_previous:
            os.rename(previous, publish_dir)
        raise
    _fsync_dir(publish_dir.parent)
    kill_point("publish.swap_in")
    if had_previous:
        shutil.rmtree(previous)


def _live(publish_dir: Path) -> Path:
    # After a crash between the swap's renames the live build is the one in `<publish>.previous`.
    return publish_dir if publish_dir.exists() else _previous(publish_dir)


def published_acts(publish_dir: Path) -> dict[str, ActCounts]:
    """Per language {act_id: (label, items)} of the live publication's full shards (`gate.act_counts`). Read-only."""
    rows: dict[str, list[dict]] = defaultdict(list)
    for shard in sorted(_live(publish_dir).glob("data/*/full-*.parquet")):
        rows[shard.parent.name] += pq.read_table(shard, columns=["act_id", "sr_number", "abbreviation"]).to_pylist()
    return {lang: act_counts(items) for lang, items in rows.items()}


def folder_files(folder: Path) -> dict[str, bytes]:
    """{relative path: bytes} of every file under `folder`, for byte-for-byte comparisons."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
