"""Text folding and unit splitting: spec rules S1 and S2.

These two functions are also imported by the builder (rule B12: a half is
kept only when its gold edition has a unit not contained in the other
edition's normalised text), so their names and signatures are part of the
public API and must not drift from the published scorer's behaviour.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MIN_UNIT_LEN", "MIN_FALLBACK_UNIT_LEN", "TYPOGRAPHIC_FOLDS", "normalise", "normalised_chunks", "units"]

#: S2: the default unit floor. Shorter chunks (a "a." list marker, a one-word
#: "Aufgehoben" stub) cannot tell two editions apart and inflate similarity
#: ratios by chance.
MIN_UNIT_LEN = 25

#: S6/S7 only: the floor for `distractor_all_coverage` and the amended-unit
#: set. With 25 a short old paragraph ("Er ist zu begründen.", 20 chars) fell
#: out of the set and an answer quoting only an unrelated unchanged paragraph
#: scored 1.0 and was labelled wrong-version.
MIN_FALLBACK_UNIT_LEN = 8

# S1: quote and dash families, unified within a family (double -> '"',
# single -> "'") so an apostrophe inside "l'article" never becomes '"'.
# Applied as str.replace per character present: ~10x faster than
# str.translate with a dict on article-length strings, and equivalent
# because no replacement produces a character that is itself folded.
TYPOGRAPHIC_FOLDS = (
    ("\u00ab", '"'),  # «
    ("\u00bb", '"'),  # »
    ("\u201c", '"'),  # “
    ("\u201d", '"'),  # ”
    ("\u201e", '"'),  # „
    ("\u201f", '"'),  # ‟
    ("\u2018", "'"),  # ‘
    ("\u2019", "'"),  # ’
    ("\u201a", "'"),  # ‚
    ("\u201b", "'"),  # ‛
    ("\u2010", "-"),  # hyphen
    ("\u2011", "-"),  # non-breaking hyphen
    ("\u2012", "-"),  # figure dash
    ("\u2013", "-"),  # en dash
    ("\u2014", "-"),  # em dash
    ("\u2212", "-"),  # minus sign
    ("\u2026", "..."),  # horizontal ellipsis (NFKC already does this; kept explicit)
    ("\u00ad", ""),  # soft hyphen: a Fedlex line-break artefact, no content
)

# S2: a paragraph marker is a number with an optional letter suffix ("1bis",
# "3ter", "4a") at the START of a line of the RAW text, followed by
# whitespace. Matching mid-line would split at every "Art. 5 " reference.
_PARAGRAPH_MARKER = re.compile(r"(?m)^(\d+[a-z]*)\s+")
# S2 fallback for marker-less text: break at whitespace preceded by . ; :
# (the delimiter stays with the chunk it ends, then is stripped below).
_SENTENCE_BREAK = re.compile(r"(?<=[.;:])\s+")
# S2: stripped from the end of every normalised chunk so "…Partei." and
# "…Partei" are the same unit wherever the sentence happens to end.
_TRAILING = " \t.,;:!?"


def normalise(text: str | None) -> str:
    """S1: fold cosmetic typesetting differences out of ``text``.

    NFKC, lower-case, unify quotes and dashes, ``…`` -> ``...``, drop soft
    hyphens, collapse whitespace runs to one space, strip. Prevents: a
    re-typeset edition (curly vs straight quotes, NBSP, a soft hyphen at a
    line break, en dash vs hyphen) or an answer typed on a different keyboard
    counting as different wording. ``None`` is treated as the empty string.

    The order matters and follows the published scorer: NFKC runs first
    (it turns NBSP into a space and U+2011 into U+2010), then lower-casing,
    then the character folds, then whitespace. Trailing punctuation is NOT
    stripped here: this also runs on whole answers, where the final "." is
    text, not a unit boundary.
    """
    folded = unicodedata.normalize("NFKC", text or "").lower()
    for char, replacement in TYPOGRAPHIC_FOLDS:
        if char in folded:
            folded = folded.replace(char, replacement)
    # Same as re.sub(r"\s+", " ", folded).strip(): str.split() and the re
    # module's \s use the same Unicode whitespace test (checked for every
    # code point in tests/scorer/test_text.py), and split() is faster.
    return " ".join(folded.split())


def _chunks(text: str) -> list[str]:
    """Raw chunks of S2: paragraphs after line-start markers, else sentences.

    Text before the first marker (a heading, a stray footnote number on the
    article's first line) is dropped, as in the published scorer.
    """
    marks = list(_PARAGRAPH_MARKER.finditer(text))
    if not marks:
        return _SENTENCE_BREAK.split(text)
    ends = [m.start() for m in marks[1:]] + [len(text)]
    return [text[m.end() : end] for m, end in zip(marks, ends)]


def normalised_chunks(text: str | None) -> list[str]:
    """S2 chunks, each normalised with trailing `` \\t.,;:!?`` stripped, no floor.

    ``units(text, n)`` is exactly the chunks of length >= n; callers needing
    both floors (S3 at 25, S6/S7 at 8) split and normalise once.
    """
    return [normalise(chunk).rstrip(_TRAILING) for chunk in _chunks(text or "")]


def units(text: str | None, min_len: int = MIN_UNIT_LEN) -> list[str]:
    """S2: split ``text`` into normalised matching units, in text order.

    Each chunk is normalised, trailing `` \\t.,;:!?`` are stripped and it is
    kept when at least ``min_len`` characters long. Duplicates are kept
    (callers that need distinct units take ``set(...)``, as S3 coverage is
    over distinct units). Prevents: whole-article similarity, which is
    dominated by unchanged paragraphs and barely moves between two editions
    that differ in one paragraph. Use ``min_len=MIN_FALLBACK_UNIT_LEN`` (8)
    only for S6/S7.

    The split runs on the RAW text because normalisation collapses the
    newlines the paragraph markers need. An article whose paragraphs are not
    each on their own line starting with the number is a single unit.
    ``None`` is treated as the empty string (no units).
    """
    return [unit for unit in normalised_chunks(text) if len(unit) >= min_len]
