"""Query handling for the article search: folding, sanitising, n-grams and citations.

The index and the query go through the same `fold`, so whatever the folding does it does to
both sides. What it does, and the failure each step prevents:
 * NFKD, combining marks dropped, case folded: "Prüfung", "PRÜFUNG" and "Prufung" are one word
   (the index's tokenizer, `unicode61 remove_diacritics 2`, does the same; folding first also
   lets the 5-grams below see plain letters);
 * German only, `ae/oe/ue` -> `a/o/u` after that: "Pruefung" (typed without umlauts, common in
   older texts and on foreign keyboards) finds "Prüfung". Applied to the indexed text too, so a
   word that really contains "ue" ("Feuer") is folded identically on both sides;
 * every character that is not a letter or digit becomes a space: apostrophes ("l'article"),
   hyphens, slashes and FTS5 syntax characters never reach the MATCH expression.
Every token is then quoted in the MATCH expression (`"or"`), so no word of a question is read as
an FTS5 operator: the Code of Obligations' abbreviation "OR" (and "AND", "NOT", "NEAR") stays a
word. The case-law search engine this follows keeps operators that have operands on both sides;
a question in natural language never means them, so here none is kept.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date

from chpit_assets.bench.questions import MONTHS

GRAM = 5  # character n-grams for German compounds ("Datenschutzgesetz" shares grams with "Datenschutz")
# Only words this long get grams: compounds and long inflected forms, which whole-word BM25 misses.
# Short words are the words strategies' job, and their grams made the index three times larger.
GRAM_MIN_WORD = 10

_NON_WORD = re.compile(r"[^0-9a-z]+")
_UMLAUT_SPELLINGS = (("ae", "a"), ("oe", "o"), ("ue", "u"))


def fold(text: str, lang: str) -> str:
    """`text` as the index and the queries compare it: see the module docstring."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    if lang == "de":
        for spelling, vowel in _UMLAUT_SPELLINGS:
            plain = plain.replace(spelling, vowel)
    return _NON_WORD.sub(" ", plain).strip()


def words(text: str, lang: str) -> list[str]:
    return fold(text, lang).split()


def grams(folded: str, n: int = GRAM, min_word: int = GRAM_MIN_WORD) -> list[str]:
    """The character n-grams of every word of at least `min_word` letters of a folded text. Indexed
    as one space-separated column, so BM25 over grams rewards shared parts of long words."""
    out: list[str] = []
    for word in folded.split():
        if len(word) >= min_word:
            out.extend(word[i : i + n] for i in range(len(word) - n + 1))
    return out


def match_expression(tokens: list[str], operator: str) -> str | None:
    """An FTS5 MATCH expression joining the quoted `tokens` with AND or OR; None without tokens.
    Tokens come from `fold`, so they hold only [0-9a-z] and quoting needs no escaping."""
    if operator not in ("AND", "OR"):
        raise ValueError(f"operator must be AND or OR, not {operator!r}")
    unique = list(dict.fromkeys(tokens))
    return f" {operator} ".join(f'"{t}"' for t in unique) or None


# «…», "…", „…“ or “…”: a span the asker marked as the law's own words.
_QUOTED = re.compile(r"«\s*([^»]+?)\s*»|\"([^\"]+)\"|„([^“”]+)[“”]|“([^”]+)”")


def quoted_phrases(text: str) -> list[str]:
    """The quoted spans of a query, in order (empty ones left out)."""
    return [
        next(g for g in m.groups() if g is not None)
        for m in _QUOTED.finditer(text)
        if any(g and g.strip() for g in m.groups())
    ]


def phrase_expression(phrase: str, lang: str) -> str | None:
    """An FTS5 phrase query (the folded words in this order, adjacent) for a quoted span."""
    tokens = words(phrase, lang)
    return '"' + " ".join(tokens) + '"' if tokens else None


@dataclass(frozen=True)
class Citation:
    """What a question names, read from its text alone (not from an item's fields)."""

    article: str | None  # "24", "336a", "5bis", "268a bis"
    abbreviation: str | None  # "DSG", "CO", "LPD"
    sr_number: str | None  # "235.1", "0.107"
    as_of: date | None


# The month names the question templates write (B19), folded as the parser compares them.
_MONTHS = {lang: tuple(fold(m, lang) for m in MONTHS[lang]) for lang in ("de", "fr", "it")}
_LATIN = r"(?:bis|ter|quater|quinquies|sexies|septies|octies|novies|decies)"
# "Art. 24", "art. 336a", "Art. 5bis", "Art. 268a bis", "l'art. 7", "Artikel 12"; the abbreviation
# follows the number (optionally after a paragraph reference such as "Abs. 2" / "al. 2" / "cpv. 2").
_ARTICLE = re.compile(
    rf"\b(?:art(?:icle|ikel|icolo)?\.?)\s*(\d+[a-z]?(?:\s?{_LATIN})?)\b"
    rf"(?:\s+(?:abs|al|cpv|para)\.?\s*\d+[a-z]*)?"
    rf"(?:\s+(?-i:([A-Z\u00c0-\u00de][A-Za-z\u00c0-\u017f.\-]*[A-Za-z.])))?",
    re.IGNORECASE,
)
_COLLECTIONS = ("SR", "RS", "CS")  # the systematic collection in de / fr, it / rm: not an act
_SR = re.compile(r"\b(?:SR|RS|CS)\s+(\d+(?:\.\d+)*)\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_WORD_DATE = re.compile(r"\b(\d{1,2})(?:\.|er|°)?\s+([a-z\u00e0-\u00ff]+)\s+(\d{4})\b", re.IGNORECASE)


def _date(text: str, lang: str) -> date | None:
    iso = _ISO_DATE.search(text)
    if iso:
        return _valid(int(iso[1]), int(iso[2]), int(iso[3]))
    months = _MONTHS.get(lang, ())
    for m in _WORD_DATE.finditer(text):
        month = fold(m[2], lang)
        if month in months:
            return _valid(int(m[3]), months.index(month) + 1, int(m[1]))
    return None


def _valid(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def parse_citation(text: str, lang: str) -> Citation:
    """The article, act abbreviation, SR number and date a question cites, each None when absent.

    Reads the forms the CH-PiT questions and people use in de/fr/it: "Art. 24 DSG (SR 235.1)",
    "l'art. 336a CO (RS 220)", dates "1. April 2025", "1 avril 2025", "1er avril 2025",
    "1° aprile 2025" or ISO. The abbreviation is the word right after the article number (or after
    its paragraph reference), kept as written."""
    article = abbreviation = None
    m = _ARTICLE.search(text)
    if m:
        article = re.sub(r"\s+", " ", m[1]).lower()
        abbreviation = m[2] if m[2] and m[2] not in _COLLECTIONS else None
    sr = _SR.search(text)
    return Citation(article, abbreviation, sr[1] if sr else None, _date(text, lang))
