"""``chpit-score``: score a JSONL file of answers, one verdict per line.

Input lines are items with an ``answer``: either benchmark items
(``gold.text`` / ``distractor.text``) or flat ``gold`` / ``distractor``
strings. ``id`` is copied to the output when present. Lines are read, scored
and written one at a time, so a file of any size streams in constant memory.
A bad line stops the run with its line number (exit status 2): a silently
skipped answer would shift every reported share. Stdin and files follow the
same rules: bytes must be UTF-8 (a bad byte is named by line and offset), a
line may nest JSON at most ``MAX_DEPTH`` levels (an item needs two), and an
input without a single line says so on stderr.

This module is the package's only I/O; the scorer itself stays pure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from typing import IO, Any, BinaryIO

from .core import score

__all__ = ["MAX_DEPTH", "InputError", "decoded_lines", "parse_item", "score_lines", "main"]

MAX_DEPTH = 32
"""Deepest JSON nesting a line may have; deeper input is refused before `json.loads` recurses."""
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


class InputError(ValueError):
    """A JSONL line that is not a scoreable item; names the line."""

    def __init__(self, line_no: int, reason: str):
        super().__init__(f"line {line_no}: {reason}")
        self.line_no = line_no
        self.reason = reason


def _edition_text(item: dict[str, Any], key: str, line_no: int) -> str:
    if key not in item:
        raise InputError(line_no, f"missing {key!r} (a string, or an object with 'text')")
    value = item[key]
    if isinstance(value, dict):
        if "text" not in value:
            raise InputError(line_no, f"{key!r} is an object without 'text'")
        value = value["text"]
    if not isinstance(value, str):
        raise InputError(line_no, f"{key!r} text must be a string, got {type(value).__name__}")
    return value


def _nesting(line: str) -> int:
    """The deepest bracket nesting of a JSON line, strings left out (so brackets in a text do not count)."""
    depth = deepest = 0
    for ch in _STRING.sub("", line):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_item(line: str, line_no: int) -> tuple[Any, str, str, str]:
    """One JSONL line -> (id or None, answer, gold text, distractor text).

    ``answer`` may be null (a run that produced no answer scores as empty),
    but must be present: a missing key is more likely a wrong file.
    """
    # Counting brackets is C-speed; only a line with more of them than MAX_DEPTH is scanned.
    if line.count("[") + line.count("{") > MAX_DEPTH and _nesting(line) > MAX_DEPTH:
        raise InputError(line_no, f"JSON nested deeper than {MAX_DEPTH} levels")
    try:
        item = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(line_no, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(item, dict):
        raise InputError(line_no, f"expected a JSON object, got {type(item).__name__}")
    if "answer" not in item:
        raise InputError(line_no, "missing 'answer'")
    answer = item["answer"]
    if answer is not None and not isinstance(answer, str):
        raise InputError(line_no, f"'answer' must be a string or null, got {type(answer).__name__}")
    return (
        item.get("id"),
        answer or "",
        _edition_text(item, "gold", line_no),
        _edition_text(item, "distractor", line_no),
    )


def decoded_lines(raw: Iterable[bytes]) -> Iterator[str]:
    """Lines of a binary stream as text, strictly UTF-8: the one decoder for stdin and files alike."""
    offset = 0
    for line_no, line in enumerate(raw, start=1):
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                line_no,
                f"not UTF-8 text ({exc.reason} at byte {exc.start} of the line, "
                f"byte {offset + exc.start} of the input)",
            ) from None
        offset += len(line)


def score_lines(lines: Iterable[str], *, fast: bool = True) -> Iterator[dict[str, Any]]:
    """Verdict records for JSONL ``lines`` (blank lines skipped), lazily."""
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        item_id, answer, gold, distractor = parse_item(line, line_no)
        record = asdict(score(answer, gold, distractor, fast=fast))
        yield {"id": item_id, **record} if item_id is not None else record


class _Progress:
    """A one-line progress display on a terminal; silent otherwise (no tqdm)."""

    def __init__(self, stream: IO[str], total: int | None):
        self.stream, self.total = stream, total
        self.enabled = stream.isatty()
        self.start = self.last = time.monotonic()
        self.done = 0

    def step(self) -> None:
        self.done += 1
        now = time.monotonic()
        if self.enabled and now - self.last >= 0.1:  # redraw at most 10x a second
            self.last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        rate = self.done / max(now - self.start, 1e-9)
        if self.total:
            width = 30
            filled = width * self.done // self.total
            bar = "#" * filled + "-" * (width - filled)
            text = f"[{bar}] {self.done}/{self.total} {rate:,.0f}/s"
        else:
            text = f"{self.done} scored {rate:,.0f}/s"
        self.stream.write("\r" + text)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()


def _count_lines(path: str) -> int:
    with open(path, "rb") as fh:
        return sum(1 for raw in fh if raw.strip())


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="chpit-score",
        description="Score CH-PiT answers: JSONL items with 'answer' and gold/distractor in, "
        "one verdict JSON per line out.",
    )
    p.add_argument("input", nargs="?", default="-", help="JSONL file (default: stdin)")
    p.add_argument("-o", "--out", default="-", help="output JSONL file (default: stdout)")
    p.add_argument(
        "--reference",
        action="store_true",
        help="use the slow plain-difflib reference path (same verdicts, for checking)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    where = "stdin" if args.input == "-" else args.input
    try:
        source: BinaryIO = sys.stdin.buffer if args.input == "-" else open(args.input, "rb")
    except OSError as exc:
        print(f"chpit-score: cannot read {args.input}: {exc.strerror}", file=sys.stderr)
        return 2
    total = None if args.input == "-" else _count_lines(args.input)
    progress = _Progress(sys.stderr, total)
    # A file output is written beside its target and renamed into place only when every line
    # scored: bad input never leaves half a verdict file under the final name.
    partial = None if args.out == "-" else f"{args.out}.{os.getpid()}.partial"
    try:
        sink = sys.stdout if partial is None else open(partial, "w", encoding="utf-8")
    except OSError as exc:
        print(f"chpit-score: cannot write {args.out}: {exc.strerror}", file=sys.stderr)
        return 2
    ok = False
    written = 0
    try:
        for record in score_lines(decoded_lines(source), fast=not args.reference):
            sink.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1
            progress.step()
        ok = True
    except InputError as exc:
        progress.close()
        print(f"chpit-score: {where}: {exc}", file=sys.stderr)
        return 2
    finally:
        if source is not sys.stdin.buffer:
            source.close()
        if partial is None:
            sink.flush()
        else:
            sink.close()
            if ok:
                os.replace(partial, args.out)
            else:
                os.unlink(partial)
    progress.close()
    if written == 0:
        # Not an error (an empty run log is a valid, empty result), but never silent: likely a wrong path or pipe.
        print(f"chpit-score: {where}: empty input, no JSON lines to score; 0 verdicts written", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover - `python -m chpit_scorer.cli`
    sys.exit(main())
