"""Byte-stable JSON lines and atomic file writes for the build outputs."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path


def item_line(item: Mapping) -> str:
    """One item as its jsonl line: field order as given (the spec's), UTF-8 text unescaped."""
    return json.dumps(item, ensure_ascii=False, separators=(", ", ": "))


def jsonl_bytes(items: Iterable[Mapping]) -> bytes:
    return "".join(item_line(i) + "\n" for i in items).encode("utf-8")


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder and rename, so a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
