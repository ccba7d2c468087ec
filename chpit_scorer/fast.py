"""Fast matching primitives with the same answers as `chpit_scorer.reference`.

Every shortcut here only ever REJECTS a candidate that provably cannot reach
the 0.92 threshold; anything that might reach it is confirmed with difflib
itself (`reference.similar`), so autojunk and difflib's non-optimal matching
blocks still decide. The bounds, for a pair (a, b) with T = len(a) + len(b)
and M = the matched characters difflib finds, ratio = 2.0 * M / T:

* M <= min(len(a), len(b)), so 2.0 * min / T < 0.92 rejects by length alone.
  For units of 10+ characters this removes S5's 0.8 L and 1.2 L window
  lengths outright (their bound is ~0.89 and ~0.91), a 3x saving.
* M <= LCS(a, b): difflib's matching blocks are a common subsequence, and
  autojunk only removes matches. rapidfuzz's ``Indel.similarity`` is exactly
  2 * LCS (an integer), so ``sim / T`` is an upper bound of the ratio. Both
  sides are one correctly rounded float division of exact values over the
  same T, so the comparison is monotone and there is no float slack to
  worry about (that is why the integer similarity is used rather than
  ``Indel.normalized_similarity``, which computes ``1 - dist / T``).
"""

from __future__ import annotations

from functools import lru_cache

from rapidfuzz.distance import Indel

from . import reference
from .reference import RATIO_THRESHOLD, WINDOW_ANSWER_CAP, window_lengths, window_starts

__all__ = ["similar", "window_found"]


@lru_cache(maxsize=65_536)  # keyed by one int; ~65k entries is a few MB at most
def _needed_similarity(total_len: int) -> int:
    """Smallest integer s with ``s / total_len >= 0.92``.

    Found by the same float comparison difflib's ratio goes through, so a
    pair rejected here (2 * LCS below s) has ``2.0 * M / T < 0.92`` in difflib
    too. Starts from the rounded estimate and corrects it both ways.
    """
    s = int(RATIO_THRESHOLD * total_len)
    while s > 0 and (s - 1) / total_len >= RATIO_THRESHOLD:
        s -= 1
    while s / total_len < RATIO_THRESHOLD:
        s += 1
    return s


def _length_can_reach(a_len: int, b_len: int) -> bool:
    """False when even a full match of the shorter string stays below 0.92."""
    return 2.0 * min(a_len, b_len) / (a_len + b_len) >= RATIO_THRESHOLD


def similar(a: str, b: str) -> bool:
    """Same answer as `reference.similar(a, b)`, rejecting early when it can."""
    total = len(a) + len(b)
    if total == 0:
        return reference.similar(a, b)  # difflib defines this ratio as 1.0
    if not _length_can_reach(len(a), len(b)):
        return False
    need = _needed_similarity(total)
    if Indel.similarity(a, b, score_cutoff=need) < need:
        return False
    return reference.similar(a, b)


def window_found(unit: str, text: str) -> bool:
    """Same answer as `reference.window_found(unit, text)`.

    Same grid (shared helpers), but window lengths that cannot reach 0.92 are
    skipped, and each window is pre-filtered with the LCS bound before
    difflib is asked.
    """
    if len(text) > WINDOW_ANSWER_CAP or not unit:
        return False
    n = len(unit)
    for wl in window_lengths(n):
        if not _length_can_reach(n, wl):
            continue
        need = _needed_similarity(n + wl)
        for start in window_starts(n, wl, len(text)):
            window = text[start : start + wl]
            if Indel.similarity(unit, window, score_cutoff=need) >= need and reference.similar(unit, window):
                return True
    return False
