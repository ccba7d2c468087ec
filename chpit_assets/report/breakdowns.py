"""Breakdowns the card asks for (R4, issue 25 items 4-5), each cell with its n and 95% interval:

- by `kind`, by the `as_of` year and by article length (card, "Known limits": a long single-
  paragraph article is effectively a verbatim-only item, so its share measures recall as much as
  date grounding; such items get their own bin);
- the training-cutoff split: per model system with a cutoff date (`--cutoff`, recorded in each
  line's receipt), the date-sensitive items with `as_of` (and, separately, `change_date`) on or
  before the cutoff against after it. A model that has not seen an amendment answers the old
  wording after its cutoff (staleness: wrong version on dates after it); one that has seen it may
  answer the newer wording for earlier dates (recency bias: wrong version before it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from chpit_assets.runs.systems import parse_system_key
from chpit_scorer import GROUNDED_CORRECT, GROUNDED_WRONG_VERSION

from .stats import line_interval, line_intervals, pct

LONG_PARAGRAPH_CHARS = 1000  # one paragraph this long is one unit the answer must reproduce exactly
LENGTH_BINS = ("< 500 chars", "500–1,999 chars", "≥ 2,000 chars", f"one paragraph ≥ {LONG_PARAGRAPH_CHARS:,} chars")


def length_bin(line: dict) -> str:
    """The gold text's length bin; a single long paragraph is its own bin (verbatim-only)."""
    chars, paragraphs = line.get("gold_chars"), line.get("gold_paragraphs")
    if chars is None:
        return "unknown"
    if paragraphs == 1 and chars >= LONG_PARAGRAPH_CHARS:
        return LENGTH_BINS[3]
    return LENGTH_BINS[0] if chars < 500 else LENGTH_BINS[1] if chars < 2000 else LENGTH_BINS[2]


def _correct(line: dict) -> bool:
    return line["verdict"]["label"] == GROUNDED_CORRECT


def _wrong(line: dict) -> bool:
    return line["verdict"]["label"] == GROUNDED_WRONG_VERSION


def cell(lines: list[dict], easy: Mapping[str, bool]) -> dict:
    """Correct share over `lines` and over their date-sensitive part, with n and intervals."""
    sensitive = [line for line in lines if easy.get(line["id"]) is False]
    return {
        "n": len(lines),
        "correct_pct": pct(sum(map(_correct, lines)), len(lines)),
        "n_date_sensitive": len(sensitive),
        "correct_date_sensitive_pct": pct(sum(map(_correct, sensitive)), len(sensitive)),
        "ci": {
            "correct": line_interval(lines, _correct),
            "correct_date_sensitive": line_interval(sensitive, _correct),
        },
    }


BREAKDOWNS: tuple[tuple[str, Callable[[dict], str]], ...] = (
    ("kind", lambda line: line["kind"]),
    ("as_of year", lambda line: str(line["as_of"])[:4]),
    ("article length", length_bin),
)


def _bin_order(by: str, value: str) -> tuple:
    return (
        (LENGTH_BINS.index(value) if value in LENGTH_BINS else len(LENGTH_BINS), value)
        if by == "article length"
        else (value,)
    )


def breakdown_rows(lists: Mapping[str, list[dict]], systems: list[str], easy: Mapping[str, bool]) -> list[dict]:
    """{by, bin, system, n, correct_pct, n_date_sensitive, correct_date_sensitive_pct, ci} per
    breakdown, bin (in order) and system (in report order), pooled over languages."""
    rows = []
    for by, key in BREAKDOWNS:
        bins = sorted({key(line) for lines in lists.values() for line in lines}, key=lambda v: _bin_order(by, v))
        for value in bins:
            for system in systems:
                subset = [line for line in lists[system] if key(line) == value]
                if subset:
                    rows.append({"by": by, "bin": value, "system": system, **cell(subset, easy)})
    return rows


SIDES = ("on or before", "after")


def cutoff_rows(lists: Mapping[str, list[dict]], systems: list[str], easy: Mapping[str, bool]) -> list[dict]:
    """Per model system and cutoff (the lines' receipts say which), the date-sensitive items split
    by `as_of` and by `change_date` on or before / after the cutoff: correct and wrong-version shares."""
    rows = []
    for system in systems:
        if parse_system_key(system).slug is None:
            continue
        sensitive = [line for line in lists[system] if easy.get(line["id"]) is False and line.get("cutoff")]
        for cutoff in sorted({line["cutoff"] for line in sensitive}):
            own = [line for line in sensitive if line["cutoff"] == cutoff]
            for field in ("as_of", "change_date"):
                for side in SIDES:
                    subset = [
                        line
                        for line in own
                        if line.get(field) is not None and (str(line[field]) <= cutoff) == (side == SIDES[0])
                    ]
                    rows.append(
                        {
                            "system": system,
                            "cutoff": cutoff,
                            "split": field,
                            "side": side,
                            "n": len(subset),
                            "correct_pct": pct(sum(map(_correct, subset)), len(subset)),
                            "wrong_version_pct": pct(sum(map(_wrong, subset)), len(subset)),
                            "ci": line_intervals(subset, {"correct": _correct, "wrong_version": _wrong}),
                        }
                    )
    return rows
