"""PROTOCOL §9: recite_label/recite_as_of are stamped at publication from the recite run, in the
card's field position (after `source`, before `licence`), recite_as_of one date: the run's finish."""

from __future__ import annotations

import pytest

from chpit_assets.report import StampError, stamp_recite
from chpit_assets.report.stamp import recite_finished

# The published item key order without the two stamped keys (PROTOCOL §1).
BUILD_KEYS = [
    "id",
    "lang",
    "act_id",
    "sr_number",
    "abbreviation",
    "article_number",
    "e_id",
    "as_of",
    "kind",
    "change_date",
    "question",
    "gold_is_current",
    "gold",
    "distractor",
    "source",
    "licence",
    "build",
    "core",
]


def item(item_id: str) -> dict:
    return {k: (item_id if k == "id" else f"{k}-value") for k in BUILD_KEYS}


def recite(label: str, day: str | None, error: str | None = None) -> dict:
    return {"error": error, "verdict": {"label": label}, "lookup": None if day is None else {"as_of": day}}


def test_keys_go_after_source_and_the_date_is_the_runs_last_day():
    log = {
        "a": recite("grounded_correct", "2026-09-03"),
        "b": recite("grounded_wrong_version", "2026-09-04"),  # the run finished on its latest lookup day
        "c": recite("ungrounded", None, error="UnknownArticle: no Art. 336a in SR 220"),
    }
    a, b, c, d = stamp_recite([item(i) for i in "abcd"], log)
    stamped_order = BUILD_KEYS[:15] + ["recite_label", "recite_as_of"] + BUILD_KEYS[15:]
    assert list(a) == list(b) == list(c) == stamped_order
    assert (a["recite_label"], a["recite_as_of"]) == ("grounded_correct", "2026-09-04")
    assert (b["recite_label"], b["recite_as_of"]) == ("grounded_wrong_version", "2026-09-04")
    assert (c["recite_label"], c["recite_as_of"]) == (None, None)  # card: null where the tool could not resolve
    assert d == item("d")  # no recite line: nothing measured, nothing stamped


def test_a_stale_stamp_is_replaced_not_duplicated_and_the_input_is_not_mutated():
    old = item("a")
    stale = {
        **{k: v for k, v in old.items() if k != "licence"},
        "recite_label": "ungrounded",
        "recite_as_of": "2020-01-01",
        "licence": old["licence"],
    }
    before = dict(stale)
    [out] = stamp_recite([stale], {"a": recite("grounded_correct", "2026-09-04T10:22:00+00:00")})
    assert list(out).count("recite_label") == 1 and list(out).index("recite_label") == BUILD_KEYS.index("source") + 1
    assert (out["recite_label"], out["recite_as_of"]) == ("grounded_correct", "2026-09-04")
    assert stale == before


def test_stamping_is_a_function_of_the_log_not_of_its_order():
    log = {"a": recite("grounded_correct", "2026-09-04"), "b": recite("ungrounded", "2026-09-02")}
    reversed_log = dict(reversed(list(log.items())))
    assert stamp_recite([item("a"), item("b")], log) == stamp_recite([item("a"), item("b")], reversed_log)
    assert recite_finished({}) is None


def test_a_recite_line_without_a_lookup_date_is_a_clear_error():
    with pytest.raises(StampError, match="'b'.*lookup.as_of"):
        stamp_recite([item("a")], {"a": recite("grounded_correct", "2026-09-04"), "b": recite("ungrounded", None)})


def test_an_item_without_source_cannot_be_stamped_silently():
    bad = {k: v for k, v in item("a").items() if k != "source"}
    with pytest.raises(StampError, match="'a'.*source"):
        stamp_recite([bad], {"a": recite("grounded_correct", "2026-09-04")})
