"""Partition, discriminating units, coverage and labels: spec rules S3-S8.

One skeleton serves both paths; ``fast`` only chooses the matching
primitives (`chpit_scorer.fast` or the plain-difflib `chpit_scorer.reference`)
and whether per-pair and per-call work is cached. The label logic therefore
exists once, and the fast == slow property reduces to the primitives plus
the caches, which tests/scorer/test_fast_equals_reference.py checks on
whole verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from . import fast as _fast
from . import reference as _reference
from .text import (
    MIN_FALLBACK_UNIT_LEN,
    MIN_UNIT_LEN,
    normalise,
    normalised_chunks,
    units,
)

__all__ = [
    "GROUNDED_CORRECT",
    "GROUNDED_WRONG_VERSION",
    "UNGROUNDED",
    "LABELS",
    "STRONG",
    "WEAK",
    "FALLBACK_STRONG",
    "Partition",
    "Discriminating",
    "Verdict",
    "partition",
    "is_discriminating",
    "discriminating",
    "score",
]

GROUNDED_CORRECT = "grounded_correct"
GROUNDED_WRONG_VERSION = "grounded_wrong_version"
UNGROUNDED = "ungrounded"
LABELS = (GROUNDED_CORRECT, GROUNDED_WRONG_VERSION, UNGROUNDED)

#: S7: "found it" on a partition. With one unit per side coverage is 0 or 1,
#: so 0.6/0.2 reads "found" vs "not found"; the gap between them marks a
#: partial match to several discriminating units as ungrounded, not guessed.
STRONG = 0.6
#: S7: the most the other side may leak for a grounded label.
WEAK = 0.2
#: S7 fallback threshold for distractor_all_coverage, higher than STRONG
#: because its set uses the 8-char floor: on a two-unit set, finding only the
#: unchanged paragraph reads 0.5, which cleared 0.6's mirror but not 0.8.
FALLBACK_STRONG = 0.8


class _Matcher(NamedTuple):
    similar: Callable[[str, str], bool]
    window_found: Callable[[str, str], bool]


_MATCHERS = {
    True: _Matcher(_fast.similar, _fast.window_found),
    False: _Matcher(_reference.similar, _reference.window_found),
}


@dataclass(frozen=True)
class Partition:
    """S3: the three-way split of both editions' units (25-char floor).

    ``gold_only``: gold units not contained in the normalised distractor
    text; ``distractor_only``: the mirror; ``shared``: the union of both unit
    sets minus the two only-sets. Containment, not equality: when an
    amendment appends words, the old paragraph sits inside the new one, so
    it is shared. Equality filed it as distractor-only and 1,097 verbatim
    correct answers scored ungrounded on the first full build.
    """

    gold_only: frozenset[str]
    distractor_only: frozenset[str]
    shared: frozenset[str]


@dataclass(frozen=True)
class Discriminating:
    """S4: the only-units that may be found by exact substring only."""

    gold: frozenset[str]
    distractor: frozenset[str]


@dataclass(frozen=True)
class Verdict:
    """The scorer's decision for one (answer, gold, distractor), with its reasons.

    Coverages are distinct units found / distinct units, 0.0 for an empty
    set. ``*_units`` are the set sizes, ``*_found`` how many were found, so
    every coverage is ``found / units`` and a report can explain each label.
    ``amended_found`` is the S7 fallback's second condition; it is ``None``
    when the label was decided without consulting the fallback (it is then
    not computed at all, as it cannot change the label).
    """

    label: str
    gold_coverage: float
    distractor_coverage: float
    distractor_all_coverage: float
    shared_coverage: float
    gold_only_units: int
    distractor_only_units: int
    shared_units: int
    gold_discriminating_units: int
    distractor_discriminating_units: int
    distractor_all_units: int
    amended_units: int
    gold_only_found: int
    distractor_only_found: int
    shared_found: int
    distractor_all_found: int
    amended_found: bool | None


def _partition(
    gold_units: frozenset[str], distractor_units: frozenset[str], norm_gold: str, norm_distractor: str
) -> Partition:
    gold_only = frozenset(u for u in gold_units if u not in norm_distractor)
    distractor_only = frozenset(u for u in distractor_units if u not in norm_gold)
    shared = (gold_units | distractor_units) - gold_only - distractor_only
    return Partition(gold_only, distractor_only, shared)


def partition(gold: str, distractor: str) -> Partition:
    """S3 on two raw edition texts. The builder's B12 keeps a half only when
    its gold side's only-set is non-empty (a pure deletion leaves the shorter
    edition with none: a correct answer is a fragment of the wrong one)."""
    return _partition(frozenset(units(gold)), frozenset(units(distractor)), normalise(gold), normalise(distractor))


def is_discriminating(unit: str, other_text: str, other_units: Iterable[str], *, fast: bool = True) -> bool:
    """S4 for one only-unit: may it be found by exact substring only?

    ``other_text`` is the other edition's NORMALISED text, ``other_units`` ALL
    of its 25-floor units (shared included). Rule: if fuzzy matching would
    find this unit in the other edition, fuzzy matching is not allowed for it.
    Prevents: a one-number change ("180 Tagen" -> "30 Tagen", ratio ~0.98)
    window-matching the other edition, which made both coverages 1.0 and a
    verbatim answer ungrounded. Two tests, OR-ed:

    * unit pair: ``SequenceMatcher(None, unit, other).ratio() >= 0.92`` for
      some other unit. Needed because the window test has no window when the
      other text is shorter than 0.8x the unit (a one-paragraph article with
      a clause appended, 0.96 unit to unit).
    * window: the S5 window test against ``other_text``, the very computation
      later run against the answer, so a verbatim quote of the other edition
      can never fuzzily find the unit (SR 142.203 Art. 3: a reworded sentence
      plus appended clause, 0.84 pairwise but >= 0.92 in a window; 222+
      verbatim-correct oracle answers scored ungrounded without it). The
      20,000-character cap applies here too, as published.
    """
    m = _MATCHERS[fast]
    return any(m.similar(unit, other) for other in other_units) or m.window_found(unit, other_text)


class _PairAnalysis(NamedTuple):
    """Everything about one (gold, distractor) pair that does not depend on the answer."""

    partition: Partition
    disc: Discriminating
    distractor_all: frozenset[str]  # S6: set(units(distractor, 8))
    amended: frozenset[str]  # S7: set(units(distractor, 8)) - set(units(gold, 8))


def _analyse(gold: str, distractor: str, fast: bool) -> _PairAnalysis:
    norm_gold, norm_distractor = normalise(gold), normalise(distractor)
    # Split and normalise each text once; the 25 and 8 floors filter the same chunks.
    gold_chunks, distractor_chunks = normalised_chunks(gold), normalised_chunks(distractor)
    gold_units = frozenset(u for u in gold_chunks if len(u) >= MIN_UNIT_LEN)
    distractor_units = frozenset(u for u in distractor_chunks if len(u) >= MIN_UNIT_LEN)
    part = _partition(gold_units, distractor_units, norm_gold, norm_distractor)
    # Argument order follows S4: the only-unit first, the other edition second.
    disc = Discriminating(
        gold=frozenset(g for g in part.gold_only if is_discriminating(g, norm_distractor, distractor_units, fast=fast)),
        distractor=frozenset(d for d in part.distractor_only if is_discriminating(d, norm_gold, gold_units, fast=fast)),
    )
    distractor_all = frozenset(u for u in distractor_chunks if len(u) >= MIN_FALLBACK_UNIT_LEN)
    amended = distractor_all - frozenset(u for u in gold_chunks if len(u) >= MIN_FALLBACK_UNIT_LEN)
    return _PairAnalysis(part, disc, distractor_all, amended)


# The pair analysis (normalising, splitting and the S4 tests) is most of the
# work and does not depend on the answer: every system's answer to one item
# reuses it. Bounded so a long-running process cannot grow without limit;
# 4,096 pairs of ~2 KB articles plus their units is on the order of 50 MB.
@lru_cache(maxsize=4096)
def _analyse_cached(gold: str, distractor: str) -> _PairAnalysis:
    return _analyse(gold, distractor, True)


def _pair_analysis(gold: str, distractor: str, fast: bool) -> _PairAnalysis:
    # The cache is keyed on the raw strings; normalise/units treat None as "".
    gold, distractor = gold or "", distractor or ""
    return _analyse_cached(gold, distractor) if fast else _analyse(gold, distractor, False)


def discriminating(gold: str, distractor: str, *, fast: bool = True) -> Discriminating:
    """S4 for every only-unit of the pair (see `is_discriminating`)."""
    return _pair_analysis(gold, distractor, fast).disc


def score(answer: str, gold: str, distractor: str, *, fast: bool = True) -> Verdict:
    """Label ``answer`` against the two editions (S3-S8).

    ``grounded_correct``: gold_coverage >= 0.6 and distractor_coverage <= 0.2,
    tested first (on a pure addition a correct answer also covers every
    distractor unit). ``grounded_wrong_version``: gold_coverage <= 0.2 and
    either distractor_coverage >= 0.6, or, only when there is no
    distractor-only unit (a pure addition makes distractor_coverage 0 by
    construction), distractor_all_coverage >= 0.8 AND the answer contains an
    amended unit (unit-set membership at the 8 floor, so "Er ist zu
    begründen." counts although it sits inside the new paragraph; this stops
    five shared paragraphs of six units, 0.833, from carrying the label
    alone). Everything else, including a correct quote in another language
    (S8: it shares no units), is ``ungrounded``.

    Discriminating units are found by exact substring only, in every
    coverage they take part in (S4, S6); shared units never are. ``fast=False``
    runs the plain-difflib reference path with no caching.
    """
    pair = _pair_analysis(gold, distractor, fast)
    part, disc = pair.partition, pair.disc
    text = normalise(answer)
    match = _MATCHERS[fast]
    # Fast path: a unit can sit in several sets (distractor-only and
    # distractor_all, shared and distractor_all, amended); memoise its
    # lookup per call, keyed with its exact-only status in that set.
    memo: dict[tuple[str, bool], bool] | None = {} if fast else None

    def found(unit: str, exact_only: frozenset[str]) -> bool:
        """S5: substring of the answer, else (not exact-only) the window test."""
        key = (unit, unit in exact_only)
        if memo is not None and key in memo:
            return memo[key]
        hit = unit in text or (not key[1] and match.window_found(unit, text))
        if memo is not None:
            memo[key] = hit
        return hit

    def count(unit_set: Collection[str], exact_only: frozenset[str] = frozenset()) -> int:
        return sum(1 for u in unit_set if found(u, exact_only))

    def coverage(n_found: int, unit_set: Collection[str]) -> float:
        return n_found / len(unit_set) if unit_set else 0.0

    # Exact-only sets per S4/S6/S7: gold-only with gold's discriminating
    # units, every distractor-side set with the distractor's, shared with none.
    g_found = count(part.gold_only, disc.gold)
    d_found = count(part.distractor_only, disc.distractor)
    s_found = count(part.shared)
    all_found = count(pair.distractor_all, disc.distractor)
    gold_cov = coverage(g_found, part.gold_only)
    dist_cov = coverage(d_found, part.distractor_only)
    all_cov = coverage(all_found, pair.distractor_all)

    amended_found: bool | None = None
    if gold_cov >= STRONG and dist_cov <= WEAK:
        label = GROUNDED_CORRECT
    elif gold_cov <= WEAK and dist_cov >= STRONG:
        label = GROUNDED_WRONG_VERSION
    elif gold_cov <= WEAK and not part.distractor_only and all_cov >= FALLBACK_STRONG:
        amended_found = any(found(u, disc.distractor) for u in sorted(pair.amended))
        label = GROUNDED_WRONG_VERSION if amended_found else UNGROUNDED
    else:
        label = UNGROUNDED

    return Verdict(
        label=label,
        gold_coverage=gold_cov,
        distractor_coverage=dist_cov,
        distractor_all_coverage=all_cov,
        shared_coverage=coverage(s_found, part.shared),
        gold_only_units=len(part.gold_only),
        distractor_only_units=len(part.distractor_only),
        shared_units=len(part.shared),
        gold_discriminating_units=len(disc.gold),
        distractor_discriminating_units=len(disc.distractor),
        distractor_all_units=len(pair.distractor_all),
        amended_units=len(pair.amended),
        gold_only_found=g_found,
        distractor_only_found=d_found,
        shared_found=s_found,
        distractor_all_found=all_found,
        amended_found=amended_found,
    )
