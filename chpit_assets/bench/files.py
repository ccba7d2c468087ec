"""Byte-stable JSON lines for the build outputs (written with `chpit_assets.files.write_atomic`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping


def item_line(item: Mapping) -> str:
    """One item as its jsonl line: field order as given (the spec's), UTF-8 text unescaped."""
    return json.dumps(item, ensure_ascii=False, separators=(", ", ": "))


def jsonl_bytes(items: Iterable[Mapping]) -> bytes:
    return lines_bytes([item_line(i).encode("utf-8") for i in items])


def lines_bytes(lines: Iterable[bytes]) -> bytes:
    """A jsonl file's bytes from its lines, each already UTF-8 (e.g. as stored in bench_line)."""
    # One join with an empty last line for the final newline: appending it after the join copied
    # the whole file (15 MB a language) a second time.
    lines = list(lines)
    return b"\n".join([*lines, b""]) if lines else b""
