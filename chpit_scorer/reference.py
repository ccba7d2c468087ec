"""The obviously-correct matching primitives: plain difflib, no shortcuts.

This is the slow path the fast one (`chpit_scorer.fast`) is proven against
(tests/scorer/test_fast_equals_reference.py, benchmarks/bench_scorer.py). It
is written to be read next to spec rules S4/S5, not to be quick: every window
of the S5 grid is scored with ``SequenceMatcher(None, unit, window).ratio()``
exactly as stated, in the stated argument order and with difflib's defaults
(``autojunk`` on), because those quirks change labels.
"""

from __future__ import annotations

from difflib import SequenceMatcher

__all__ = [
    "RATIO_THRESHOLD",
    "WINDOW_ANSWER_CAP",
    "window_lengths",
    "window_starts",
    "ratio",
    "similar",
    "window_found",
]

#: S4/S5: the similarity at which two strings count as "the same wording".
#: Tolerates a typo or two in an 80-200 character paragraph, rejects a merely
#: topically similar one.
RATIO_THRESHOLD = 0.92

#: S5: above this many characters in the searched (normalised) text the
#: window test is not run at all and only exact substrings count. Bounds the
#: cost of a runaway answer. The published scorer applies the same cap inside
#: the S4 window test (the "answer" there is the other edition's text), so
#: both uses stay the same computation.
WINDOW_ANSWER_CAP = 20_000


def window_lengths(unit_len: int) -> list[int]:
    """S5: the sorted set {lo, L, hi}; lo = max(1, round(0.8 L)), hi = max(lo, round(1.2 L)).

    Python's ``round`` (half to even) on the float products, as published:
    e.g. L = 10 gives lo = 8, hi = 12; L = 5 gives lo = 4, hi = 6.
    """
    lo = max(1, round(unit_len * 0.8))
    hi = max(lo, round(unit_len * 1.2))
    return sorted({lo, unit_len, hi})


def window_starts(unit_len: int, window_len: int, text_len: int) -> list[int]:
    """S5: starts 0, step, 2*step, ... with step = max(1, L // 4), plus the last
    possible start when the grid misses it (so the tail of the text is always
    probed). Empty when the window is longer than the text."""
    if window_len > text_len:
        return []
    last = text_len - window_len
    starts = list(range(0, last + 1, max(1, unit_len // 4)))
    if starts[-1] != last:
        starts.append(last)
    return starts


def ratio(a: str, b: str) -> float:
    """``SequenceMatcher(None, a, b).ratio()`` with difflib's defaults.

    ``b`` is the sequence difflib indexes, so with 200+ characters its
    popular characters are junked (autojunk) and the ratio can collapse:
    S5's 671-character pair differing in one number scores about 0.31.
    """
    return SequenceMatcher(None, a, b).ratio()


def similar(a: str, b: str) -> bool:
    """S4 unit-pair test: ``ratio(a, b) >= 0.92`` (argument order matters)."""
    return ratio(a, b) >= RATIO_THRESHOLD


def window_found(unit: str, text: str) -> bool:
    """S5 window test: some window of ``text`` on the grid matches ``unit``.

    Used twice with the same meaning: against the normalised answer (is a
    non-discriminating unit present, typos tolerated?) and, in S4, against the
    other edition's normalised text (would the fuzzy matcher find this unit
    in the wrong edition? then fuzzy matching is not allowed for it).
    Callers check exact containment first; this function does not.
    """
    if len(text) > WINDOW_ANSWER_CAP or not unit:
        return False
    n = len(unit)
    for wl in window_lengths(n):
        for start in window_starts(n, wl, len(text)):
            if similar(unit, text[start : start + wl]):
                return True
    return False
