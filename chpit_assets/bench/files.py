"""Byte-stable JSON lines for the build outputs (written with `chpit_assets.files.write_atomic`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping


def item_line(item: Mapping) -> str:
    """One item as its jsonl line: field order as given (the spec's), UTF-8 text unescaped."""
    return json.dumps(item, ensure_ascii=False, separators=(", ", ": "))


def jsonl_bytes(items: Iterable[Mapping]) -> bytes:
    return lines_bytes(item_line(i) for i in items)


def lines_bytes(lines: Iterable[str]) -> bytes:
    """A jsonl file's bytes from its lines (already serialised, e.g. as stored in bench_item)."""
    # One join and one encode: a new string per line cost twice as much on a 15 MB file.
    lines = list(lines)
    return "\n".join(lines).encode("utf-8") + b"\n" if lines else b""
