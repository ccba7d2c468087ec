"""Cite or abstain: keep only what the law in force on the date says word for word.

The rule of the neighbouring assistant Belegt, applied to any system's answer after the fact, with
no model involved. The caller gives the answer and the evidence: the text of every article the
system cited (named in its answer) or retrieved (through a tool or its context), each fetched
from the edition in force on the question's date. Then, sentence by sentence:

 V1 `verbatim`: the sentence, typographically normalised (`typographic`), occurs in an evidence
    text normalised the same way. Prevents: an invented or paraphrased sentence passing as law.
 V2 `long_enough`: a sentence of fewer than MIN_QUOTE characters ("1", "a.", "Art. 5") is kept
    when verbatim but is no evidence on its own: it cannot make an answer non-abstaining.
    Prevents: a list marker that occurs in every article "proving" an answer.
 V3 `cites_verified`: every article reference the sentence makes ("Art. 25 DSG") names an
    evidence article that supports some verbatim sentence, or is part of the law's own wording
    (it occurs in the supporting text itself, as "gemäss Art. 5" does inside a quoted paragraph).
    Prevents: a real quote presented under the wrong article number.
 V4 abstain when no sentence of MIN_QUOTE characters or more survives: the answer becomes "" and
    `abstained` is True.

Typographic normalisation only (NFKC, one quote and one dash per family, soft hyphens dropped,
white space collapsed): case, spelling and punctuation are the answer's own and must match.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from chpit_assets.search.index import number_key
from chpit_scorer.text import TYPOGRAPHIC_FOLDS

MIN_QUOTE = 20

# The scorer's quote, dash, ellipsis and soft-hyphen folds (S1), plus the single guillemets.
_TYPOGRAPHY = (*TYPOGRAPHIC_FOLDS, ("\u2039", "'"), ("\u203a", "'"))
_BREAK = re.compile(r"[.;:!?]\s+(?=\S)")
# A full stop after these is no sentence end: "Art. 5", "Abs. 2", "al. 3", "lit. a", "1. April", "a. ein Grund".
_NO_END = frozenset(
    {
        "art",
        "abs",
        "al",
        "cpv",
        "lit",
        "let",
        "bst",
        "ziff",
        "ch",
        "nr",
        "n",
        "cf",
        "vgl",
        "bzw",
        "z",
        "b",
        "s",
        "sr",
        "rs",
        "cst",
        "cost",
        "e",
        "g",
        "i",
        "u",
        "d",
        "h",
        "etc",
        "ss",
        "sec",
    }
)
_REFERENCE = re.compile(
    r"\b(?:Art(?:ikel|icle|icolo)?|art(?:icle|icolo)?)\.?\s*(\d+[a-z]?(?:\s?(?:bis|ter|quater|quinquies|sexies))?)\b"
    r"(?:\s+(?:Abs|al|cpv|para)\.?\s*\d+[a-z]*)?(?:\s+([A-Z][A-Za-z\u00c0-\u017f]*\.?))?"
)


def typographic(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text)
    for char, replacement in _TYPOGRAPHY:
        folded = folded.replace(char, replacement)
    return " ".join(folded.split())


@dataclass(frozen=True)
class Evidence:
    """One cited or retrieved article, as the edition in force on the question's date words it."""

    sr_number: str
    abbreviation: str | None
    article_number: str
    text: str
    version_id: int | None = None


@dataclass(frozen=True)
class SentenceCheck:
    sentence: str
    verbatim: bool  # V1
    long_enough: bool  # V2
    cites_verified: bool  # V3
    supported_by: list[str]  # "SR 235.1 Art. 24" of the evidence containing it
    kept: bool

    def as_dict(self) -> dict:
        return {
            "sentence": self.sentence,
            "verbatim": self.verbatim,
            "long_enough": self.long_enough,
            "cites_verified": self.cites_verified,
            "supported_by": self.supported_by,
            "kept": self.kept,
        }


@dataclass(frozen=True)
class Verification:
    answer: str  # the kept sentences, in order, lines as the answer had them
    abstained: bool  # V4
    checks: list[SentenceCheck] = field(default_factory=list)
    verified_citations: list[str] = field(default_factory=list)

    def receipt(self) -> dict:
        return {
            "abstained": self.abstained,
            "verified_citations": self.verified_citations,
            "checks": [c.as_dict() for c in self.checks],
        }


def _label(e: Evidence) -> str:
    return f"SR {e.sr_number} Art. {e.article_number}"


def references(sentence: str) -> list[tuple[str, str | None]]:
    """(article number, abbreviation or None) of every article the sentence names."""
    return [
        (number, m[2].rstrip(".") if m[2] else None)
        for m in _REFERENCE.finditer(sentence)
        if (number := number_key(m[1]))  # the pattern's number group is never empty
    ]


def sentences(answer: str) -> list[tuple[int, str]]:
    """(line number, sentence) in order: each line split after . ; : ! ? followed by white space."""
    out = []
    for n, line in enumerate(answer.splitlines()):
        line, start = line.strip(), 0
        for m in _BREAK.finditer(line):
            before = line[start : m.start()].rsplit(None, 1)[-1] if line[start : m.start()].strip() else ""
            word = before.rsplit(".", 1)[-1].casefold()
            if line[m.start()] == "." and (word in _NO_END or word.isdigit() or len(word) == 1):
                continue
            out.append((n, line[start : m.start() + 1]))
            start = m.end()
        if line[start:]:
            out.append((n, line[start:]))
    return out


def verify_answer(answer: str, evidence: list[Evidence]) -> Verification:
    """Apply V1-V4 to `answer` against `evidence` (see the module docstring)."""
    texts = [(e, typographic(e.text)) for e in evidence]
    parts = sentences(answer or "")
    first: list[tuple[int, str, str, list[Evidence]]] = []
    for line, sentence in parts:
        norm = typographic(sentence)
        first.append((line, sentence, norm, [e for e, t in texts if norm and norm in t]))
    verified = {
        number_key(e.article_number): e for _, _, norm, support in first for e in support if len(norm) >= MIN_QUOTE
    }
    abbreviations = {(e.abbreviation or "").rstrip(".").casefold() for e in verified.values()}
    checks: list[SentenceCheck] = []
    for _, sentence, norm, support in first:
        long_enough = len(norm) >= MIN_QUOTE
        own_wording = [t for e, t in texts if e in support]
        cites_ok = all(
            (number in verified and (abbr is None or abbr.casefold() in abbreviations))
            or any(_reference_in(number, t) for t in own_wording)
            for number, abbr in references(sentence)
        )
        kept = bool(support) and cites_ok
        checks.append(
            SentenceCheck(sentence, bool(support), long_enough, cites_ok, sorted({_label(e) for e in support}), kept)
        )
    substantial = any(c.kept and c.long_enough for c in checks)
    if not substantial:
        return Verification("", True, checks, [])
    lines: dict[int, list[str]] = {}
    for (line, _), check in zip(parts, checks):
        if check.kept:
            lines.setdefault(line, []).append(check.sentence)
    kept_text = "\n".join(" ".join(ss) for _, ss in sorted(lines.items()))
    return Verification(kept_text, False, checks, sorted({_label(e) for e in verified.values()}))


def _reference_in(number: str, text: str) -> bool:
    return any(n == number for n, _ in references(text))
