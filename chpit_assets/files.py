"""Atomic file writes: a reader sees the old file or all of the new one, never half of one."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def _create_temp(path: Path) -> tuple[int, Path]:
    """A new, exclusively created temp file next to `path`. Mode 0666 minus the umask (0644 under
    the usual 022), like any file the process writes: mkstemp's fixed 0600 would leave published
    files unreadable to the group and others (the web server, a second operator account)."""
    while True:
        tmp = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666), tmp
        except FileExistsError:
            continue


def write_atomic(path: Path | str, data: bytes, *, durable: bool = True) -> None:
    """Write via a temp file in the same folder and rename.

    `durable` also fsyncs the content before the rename (about 10 ms a file here): worth it for
    outputs and cached editions, not for a cache index entry whose loss only costs a re-fetch.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temp(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
