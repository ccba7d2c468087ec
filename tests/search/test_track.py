"""Search-track phrases (T1-T4) on real text: SR 235.1 Art. 24, 2023-09-01 vs 2025-04-01 (para. 5bis added)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from chpit_assets.akn.parser import parse_edition
from chpit_assets.search.track import (
    MIN_PHRASE_CHARS,
    PHRASE_WORDS,
    TrackError,
    build_track,
    distinctive_phrase,
    search_item_id,
    search_question,
)
from chpit_scorer import normalise


class Memory:
    """`Editions` over texts in memory, fingerprinted by their content; records what is read."""

    def __init__(self, by_version: dict[int, dict[str, str]]) -> None:
        self.by_version = by_version
        self.read: list[list[int]] = []

    def fingerprints(self, version_ids):
        return {v: repr(sorted(self.by_version[v].items())) for v in version_ids if v in self.by_version}

    def articles(self, version_ids):
        self.read.append(list(version_ids))
        return {v: list(self.by_version[v].items()) for v in version_ids if v in self.by_version}


SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample" / "cc-2022-491"


def _articles(name: str) -> dict[str, str]:
    return {a.e_id: a.text for a in parse_edition((SAMPLE / name).read_bytes(), name).articles}


@pytest.fixture(scope="module")
def editions():
    return _articles("20230901-de.xml"), _articles("20250401-de.xml")


def test_the_phrase_is_shared_long_enough_and_unique(editions):
    old, new = editions
    others = [t for e, t in new.items() if e != "art_24"] + [t for e, t in old.items() if e != "art_24"]
    phrase, skip = distinctive_phrase(new["art_24"], old["art_24"], others)
    assert skip is None
    n = normalise(phrase)
    assert len(phrase.split()) == PHRASE_WORDS and len(n) >= MIN_PHRASE_CHARS
    assert n in normalise(new["art_24"]) and n in normalise(old["art_24"])  # T1: both editions
    assert not any(n in normalise(t) for t in others)  # T3: one article
    assert not phrase[0].isdigit()  # T2: no paragraph number


def test_skips_say_why():
    text = "1 Dieser Satz ist lang genug, um eine Wendung von acht Wörtern zu tragen."
    assert distinctive_phrase(text, "1 Etwas ganz anderes steht hier.", []) == (None, "no_shared_phrase")
    assert distinctive_phrase(text, text, [text]) == (None, "phrase_not_unique")
    assert distinctive_phrase("1 Kurz.", "1 Kurz.", []) == (None, "no_shared_phrase")


def test_questions_name_act_date_and_phrase_but_not_the_article():
    q = search_question("de", "DSG", "235.1", date(2025, 4, 1), "eine Wendung aus dem Gesetz")
    assert (
        q
        == "Welcher Artikel des DSG (SR 235.1) enthielt am 1. April 2025 die Wendung «eine Wendung aus dem Gesetz»? Zitiere ihn."
    )
    assert "1 avril 2025" in search_question("fr", "LPD", "235.1", date(2025, 4, 1), "x")
    assert "1 aprile 2025" in search_question("it", "LPD", "235.1", date(2025, 4, 1), "x")
    with pytest.raises(TrackError):
        search_question("rm", "LPD", "235.1", date(2025, 4, 1), "x")


def test_build_track_keeps_gold_and_distractor_and_counts_skips(editions):
    old, new = editions
    gold = {"version_id": 2, "text": new["art_24"]}
    distractor = {"version_id": 1, "text": old["art_24"]}
    item = {
        "id": "abc",
        "lang": "de",
        "sr_number": "235.1",
        "abbreviation": "DSG",
        "article_number": "24",
        "e_id": "art_24",
        "as_of": "2025-04-01",
        "gold": gold,
        "distractor": distractor,
        "core": True,
    }
    stub = {
        "id": "def",
        "lang": "de",
        "sr_number": "235.1",
        "abbreviation": "DSG",
        "article_number": "1",
        "e_id": "art_1",
        "as_of": "2025-04-01",
        "gold": {"version_id": 2, "text": "1 Kurz."},
        "distractor": {"version_id": 1, "text": "1 Kurz."},
        "core": False,
    }
    track = build_track([item, stub], Memory({1: old, 2: new}))
    assert [i["id"] for i in track.items] == [search_item_id("abc")]
    made = track.items[0]
    assert made["gold"] == gold and made["distractor"] == distractor and made["core"] is False
    assert "24" not in made["question"].split("SR 235.1")[1].replace("2025", "")
    assert track.skipped == {"no_shared_phrase": 1}
