"""chpit_scorer: the deterministic CH-PiT grounding scorer (spec S1-S8).

Pure: standard library plus rapidfuzz, no I/O, no global mutable state
(the only module-level state is two size-bounded ``functools.lru_cache``
memos of pure functions). Same three strings in, same `Verdict` out.

Decisions where the spec text alone was not explicit (checked against the
published scorer, github overthelex/ch-pit ``src/chpit/score.py``):

* ``units()`` returns a list in text order with duplicates; coverage is over
  ``set(units(...))`` (S3 "distinct units").
* The 20,000-character cap of S5 also applies inside S4's window test, where
  the searched text is the other edition's normalised text.
* S2's sentence fallback splits the RAW text at ``(?<=[.;:])\\s+``; the
  paragraph regex's ``\\s+`` may run across newlines.
* S7's amended-unit test uses the distractor's discriminating units as
  exact-only, like distractor_all_coverage; it is only evaluated when the
  fallback is reached (``Verdict.amended_found`` is ``None`` otherwise).
* ``None`` for any text is treated as ``""`` (the published ``units`` would
  raise on ``None``; an empty text has no units either way).
"""

from .core import (
    FALLBACK_STRONG,
    GROUNDED_CORRECT,
    GROUNDED_WRONG_VERSION,
    LABELS,
    STRONG,
    UNGROUNDED,
    WEAK,
    Discriminating,
    Partition,
    Verdict,
    discriminating,
    is_discriminating,
    partition,
    score,
)
from .reference import RATIO_THRESHOLD, WINDOW_ANSWER_CAP
from .text import MIN_FALLBACK_UNIT_LEN, MIN_UNIT_LEN, normalise, units

__all__ = [
    "normalise",
    "units",
    "partition",
    "is_discriminating",
    "discriminating",
    "score",
    "Verdict",
    "Partition",
    "Discriminating",
    "GROUNDED_CORRECT",
    "GROUNDED_WRONG_VERSION",
    "UNGROUNDED",
    "LABELS",
    "STRONG",
    "WEAK",
    "FALLBACK_STRONG",
    "RATIO_THRESHOLD",
    "WINDOW_ANSWER_CAP",
    "MIN_UNIT_LEN",
    "MIN_FALLBACK_UNIT_LEN",
]
