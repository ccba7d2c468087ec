"""The search track: CH-PiT items whose question quotes the article instead of numbering it.

An extra config beside `core`/`full`, never mixed into them. For each benchmark item, the question
gives the act (abbreviation and SR number), the date and a distinctive phrase of the article's
wording, and asks which article contained it; gold and distractor are the item's own, so the same
scorer scores it. A system must search the right edition, then quote it.

How the phrase is chosen (each rule prevents the failure named):
 T1 From the wording both editions share: a window of consecutive words of the gold text whose
    normalised form (S1) occurs in both editions' normalised texts. The phrase must not give away
    which edition is asked for; both have it, so only the date decides.
 T2 PHRASE_WORDS words, at least MIN_PHRASE_CHARS characters, no paragraph number in it: a short
    phrase ("der Verantwortliche") is in half the act and names nothing.
 T3 Unique: the phrase occurs in no other article of either edition (normalised comparison), so
    exactly one article answers the question.
 T4 The first window in text order that passes; with none at PHRASE_WORDS words, the same at
    LONG_PHRASE_WORDS (a longer phrase is more often unique). Deterministic.
An item without such a phrase is skipped and counted (`no_shared_phrase`: T1/T2 found no window;
`phrase_not_unique`: every window failed T3).

Ids: first 16 hex of sha1(f"search|{id}") of the item the question is made from, so a search item
never collides with a core/full id and stays stable with it (B17).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from chpit_assets.bench.questions import format_date
from chpit_scorer import normalise

PHRASE_WORDS = 8
LONG_PHRASE_WORDS = 14
MIN_PHRASE_CHARS = 40
SKIPS = ("no_shared_phrase", "phrase_not_unique")

TEMPLATES = {
    "de": "Welcher Artikel des {abbr} (SR {sr}) enthielt am {date} die Wendung «{phrase}»? Zitiere ihn.",
    "fr": "Quel article de l'acte {abbr} (RS {sr}) contenait le {date} l'expression « {phrase} » ? Citez-le.",
    "it": "Quale articolo dell'atto {abbr} (RS {sr}) conteneva il {date} l'espressione «{phrase}»? Citalo.",
}

_MARKER = re.compile(r"^\d+[a-z]*\s+")  # a paragraph number at the start of a line (S2)


class TrackError(ValueError):
    """No search-track template for a language."""


def windows(text: str, size: int) -> Iterable[str]:
    """Every run of `size` consecutive words of each line of `text`, paragraph numbers left out (T2)."""
    for line in text.splitlines():
        words = _MARKER.sub("", line.strip()).split()
        for start in range(len(words) - size + 1):
            yield " ".join(words[start : start + size])


def distinctive_phrase(gold: str, distractor: str, others: Iterable[str]) -> tuple[str | None, str | None]:
    """(phrase, None) or (None, skip reason) for one article: T1-T4."""
    gold_n, distractor_n = normalise(gold), normalise(distractor)
    other_n = [normalise(t) for t in others]
    shared_any = False
    for size in (PHRASE_WORDS, LONG_PHRASE_WORDS):
        for window in windows(gold, size):
            phrase = window.rstrip(",;:")  # a quotation ends on a word, not on the clause's comma
            n = normalise(phrase)
            if len(n) < MIN_PHRASE_CHARS or n not in gold_n or n not in distractor_n:
                continue
            shared_any = True
            if not any(n in t for t in other_n):
                return phrase, None
    return None, "phrase_not_unique" if shared_any else "no_shared_phrase"


def search_question(lang: str, abbreviation: str, sr_number: str, as_of: date, phrase: str) -> str:
    if lang not in TEMPLATES:
        raise TrackError(f"no search-track template for language {lang!r}")
    return TEMPLATES[lang].format(abbr=abbreviation, sr=sr_number, date=format_date(as_of, lang), phrase=phrase)


def search_item_id(item_id: str) -> str:
    return hashlib.sha1(f"search|{item_id}".encode()).hexdigest()[:16]


def track_path(build_dir: Path | str, lang: str) -> Path:
    """The search track's file beside the build's bench-{lang}.jsonl."""
    return Path(build_dir) / f"search-{lang}.jsonl"


@dataclass
class TrackBuild:
    items: list[dict]
    skipped: Counter = field(default_factory=Counter)


def build_track(items: Iterable[dict], other_articles: Callable[[int, str], list[str]]) -> TrackBuild:
    """Search-track items from benchmark items, sorted by id. `other_articles(version_id, e_id)`
    gives the texts of every other article of that edition (T3)."""
    out = TrackBuild([])
    for item in items:
        others = other_articles(item["gold"]["version_id"], item["e_id"]) + other_articles(
            item["distractor"]["version_id"], item["e_id"]
        )
        phrase, skip = distinctive_phrase(item["gold"]["text"], item["distractor"]["text"], others)
        if phrase is None:
            out.skipped[skip] += 1
            continue
        question = search_question(
            item["lang"], item["abbreviation"], item["sr_number"], date.fromisoformat(item["as_of"]), phrase
        )
        out.items.append(
            {**item, "id": search_item_id(item["id"]), "question": question, "phrase": phrase, "core": False}
        )
    out.items.sort(key=lambda i: i["id"])
    return out


def other_articles_from(con) -> Callable[[int, str], list[str]]:
    """`build_track`'s `other_articles` over a store connection: one read per edition, kept."""
    cache: dict[int, list[tuple[str, str]]] = {}

    def others(version_id: int, e_id: str) -> list[str]:
        if version_id not in cache:
            cache[version_id] = con.execute(
                "SELECT e_id, text FROM ch_act_article WHERE version_id = ?", [version_id]
            ).fetchall()
        return [text for other, text in cache[version_id] if other != e_id]

    return others
