"""Byte-stable JSON lines and atomic file writes for the build outputs."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path


def item_line(item: Mapping) -> str:
    """One item as its jsonl line: field order as given (the spec's), UTF-8 text unescaped."""
    return json.dumps(item, ensure_ascii=False, separators=(", ", ": "))


def jsonl_bytes(items: Iterable[Mapping]) -> bytes:
    return lines_bytes(item_line(i) for i in items)


def lines_bytes(lines: Iterable[str]) -> bytes:
    """A jsonl file's bytes from its lines (already serialised, e.g. as stored in bench_item)."""
    return "".join(line + "\n" for line in lines).encode("utf-8")


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


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder and rename, so a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temp(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
