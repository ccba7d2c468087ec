"""What the asset checks read from each item line, remembered by the line's bytes, so that a rebuild
decodes and checks only the lines that changed (issue 27.2: the checks re-read 15 MB and recomputed
B12 for every item on each rebuild).

A line's facts (`validate.item_facts`) depend on nothing but its bytes and the checking code. They
are kept under the sha256 of the line with its core flag false, as bench_line stores it (facts never
read the flag, and B16 moves hundreds of flags a rebuild), in a file stamped with a digest of that
code (a sealed file, `chpit_assets.files.sealed_bytes`). A remembered fact is
therefore reused only for bytes identical to the ones it was computed from, by code identical to
the code that would compute it now: it cannot hide a fault in a line, which would have different
bytes. The file is refused whole, and every line checked afresh, when it is unreadable, damaged
(its entries do not match the sha256 its head records), malformed, or written by other code.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ..corpus.store import Store
from ..files import SealedFileError, open_sealed, sealed_bytes, write_atomic
from . import eligibility, validate
from .eligibility import TextMemo
from .items import LINE_KEY_CODE, _load_lines, line_key

FACT_KEYS = (*validate.FACT_FIELDS, "dated", "discriminable")

# The code a fact is computed with: the text rules (eligibility.RULES digests normalise/units and
# TextMemo's module), the checks' predicates, this file's format and the lines' key.
RULES = hashlib.sha256(
    eligibility.RULES.encode()
    + Path(validate.__file__).read_bytes()
    + Path(__file__).read_bytes()
    + repr(FACT_KEYS).encode()
    + LINE_KEY_CODE
).hexdigest()[:16]


class MemoRefused(SealedFileError):
    """The memo file cannot be trusted; the message says why."""


def memo_path(cache_dir: Path | str, lang: str) -> Path:
    return Path(cache_dir) / f"bench-checks-{lang}.json"


def read_memo(path: Path) -> dict[str, dict]:
    """{line key (`items.line_key`): facts} from `path` ({} when there is none), or MemoRefused."""
    sealed = open_sealed(path, "a checks memo", {"rules": RULES}, MemoRefused)
    if sealed is None:
        return {}
    try:
        facts = {line: dict(zip(FACT_KEYS, values, strict=True)) for line, values in sealed[1].items()}
    except (ValueError, TypeError) as exc:
        raise MemoRefused(f"{path}: malformed: {exc!r}") from exc
    # A verdict that is not a bool would pass or fail by its truthiness: refused, never interpreted.
    if not all(isinstance(f["dated"], bool) and isinstance(f["discriminable"], bool) for f in facts.values()):
        raise MemoRefused(f"{path}: malformed: a verdict that is not true or false")
    return facts


def write_memo(path: Path, facts: dict[str, dict]) -> None:
    entries = {line: [f[k] for k in FACT_KEYS] for line, f in facts.items()}
    # Not fsynced: a memo lost to a crash only costs one full check.
    write_atomic(path, sealed_bytes({"rules": RULES}, entries), durable=False)


@dataclass
class Checked:
    """A language's item lines as the checks see them."""

    facts: list[dict]  # per line, in id order: validate.item_facts
    published: list[dict]  # the whole items whose id is published (B18 compares them with the record)
    checked_now: int = 0  # lines decoded and checked in this call; the rest were remembered
    refused: str | None = None  # why the memo was not used, when it was not


def check_language(store: Store, lang: str, memo_file: Path, published_ids: Collection[str]) -> Checked:
    """`check_lines` over the language's lines as written, in id order."""
    return check_lines(_load_lines(store, lang, core_only=False), memo_file, published_ids)


def check_lines(lines: list[bytes], memo_file: Path, published_ids: Collection[str]) -> Checked:
    """Facts of item `lines` (as written: core flags stamped), from the memo where a line's bytes
    are remembered; the memo file is brought up to date with exactly these lines."""
    refused = None
    try:
        known = read_memo(memo_file)
    except MemoRefused as exc:
        known, refused = {}, str(exc)
    texts = TextMemo()
    memo: dict[str, dict] = {}
    facts: list[dict] = []
    published: list[dict] = []
    checked_now = 0
    for line in lines:
        digest = line_key(line)
        fact = known.get(digest)
        if fact is None or fact["id"] in published_ids:
            item = json.loads(line)
            if fact is None:
                fact = validate.item_facts(item, texts)
                checked_now += 1
            if item["id"] in published_ids:
                published.append(item)
        memo[digest] = fact
        facts.append(fact)
    if memo.keys() != known.keys() or refused:
        write_memo(memo_file, memo)
    return Checked(facts, published, checked_now, refused)
