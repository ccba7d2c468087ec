"""The CRITICAL gate's rules on the real sample candidate, each broken on purpose: a failing rule
names the language and the item id (or count) it failed on, and only that rule fails."""

from __future__ import annotations

import copy

import pytest

from chpit_assets.publish import (
    CRITICAL_CHECKS,
    Candidate,
    CountBounds,
    evaluate_gate,
    load_candidate,
)
from chpit_assets.publish.schema import ITEM_FIELDS, schema_errors
from chpit_assets.synthetic import SYNTHETIC_ELI_ROOT

LANGS = ("de", "fr", "it")


@pytest.fixture
def candidate(data) -> Candidate:
    return load_candidate(data / "build", data / "results", data / "report", LANGS)


def gate(candidate: Candidate, *, frozen=None, previous=None, bounds=None, failures=(), scored=None):
    scored = scored if scored is not None else {lang: {i["id"] for i in candidate.core(lang)} for lang in LANGS}
    return evaluate_gate(candidate, oracle_failures=list(failures), oracle_scored_ids=scored,
                         frozen=frozen or {}, previous_counts=previous or {}, bounds=bounds or CountBounds())


def failed(report) -> dict[str, list[str]]:
    return {o.name: o.offenders for o in report.outcomes if not o.passed}


def with_de(candidate: Candidate, items: list[dict]) -> Candidate:
    report = copy.deepcopy(candidate.build_report)
    report["de"]["items"] = len(items)
    return Candidate(report, {**candidate.items, "de": items}, candidate.results_md)


def test_the_sample_passes_every_critical_check_with_the_default_bounds(candidate):
    assert [len(candidate.items[lang]) for lang in LANGS] == [9, 0, 0]
    report = gate(candidate)
    assert report.passed and [o.name for o in report.outcomes] == list(CRITICAL_CHECKS)
    assert {i["recite_label"] for i in candidate.items["de"]} >= {"grounded_correct", "grounded_wrong_version"}


def test_schema_names_the_item_and_what_is_wrong(candidate):
    items = copy.deepcopy(candidate.items["de"])
    items[0]["act_id"] = str(items[0]["act_id"])
    items[1]["extra"] = 1
    del items[2]["gold"]["eli"]
    items[3]["core"] = 1  # an int, not a boolean
    items[4]["as_of"] = "1.4.2025"
    items[5] = {k: items[5][k] for k in reversed(list(items[5]))}
    assert failed(gate(with_de(candidate, items))).keys() == {"schema_exact"}
    errors = schema_errors(items)
    assert [e.split(":")[0] for e in errors] == [i["id"] for i in items[:6]]
    assert "act_id: '" in errors[0] and "extra ['extra']" in errors[1] and "gold: missing ['eli']" in errors[2]
    assert "core: 1 is not bool" in errors[3] and "as_of: '1.4.2025' is not date" in errors[4]
    assert "order" in errors[5]
    assert list(ITEM_FIELDS) == list(candidate.items["de"][0])  # the spec's fields are the builder's


def test_empty_texts_are_named_by_field(candidate):
    items = copy.deepcopy(candidate.items["de"])
    items[2]["gold"]["text"] = " \n"
    items[3]["question"] = ""
    offenders = failed(gate(with_de(candidate, items)))
    assert offenders == {"texts_not_empty": [f"de: {items[2]['id']}: empty gold.text",
                                             f"de: {items[3]['id']}: empty question"]}


def test_a_synthetic_act_is_refused(candidate):
    items = copy.deepcopy(candidate.items["de"])
    items[4]["distractor"]["eli"] = f"{SYNTHETIC_ELI_ROOT}/2020/1/20200101"
    offenders = failed(gate(with_de(candidate, items)))
    assert list(offenders) == ["no_synthetic_acts"] and items[4]["id"] in offenders["no_synthetic_acts"][0]


def test_duplicate_ids_and_changed_published_items(candidate):
    items = copy.deepcopy(candidate.items["de"])
    published = copy.deepcopy(items[:3])
    published[1]["gold"]["text"] += " (as published)"
    items[8]["id"] = items[7]["id"]
    offenders = failed(gate(with_de(candidate, items), frozen={"de": published}))
    assert offenders["ids_unique"] == [f"de: {items[7]['id']}: duplicate id"]
    assert offenders["published_items_frozen"] == [f"de: {published[1]['id']}: published, but missing or changed"]
    # core and the recite stamps may change between publications (bench.frozen.FREE_FIELDS)
    published = copy.deepcopy(candidate.items["de"][:3])
    published[0]["recite_label"], published[0]["core"] = "ungrounded", False
    assert gate(candidate, frozen={"de": published}).passed


def test_counts_catch_a_collapse_but_let_the_sample_publish_german_only(candidate):
    shrunk = with_de(candidate, candidate.items["de"][:3])
    offenders = failed(gate(shrunk, previous={"de": 9}))
    assert offenders == {"item_counts_in_bounds": ["de: 3 items, the previous publication had 9 (more than 10% fewer)"]}
    assert gate(candidate, previous={"de": 9, "fr": 0}).passed
    offenders = failed(gate(candidate, bounds=CountBounds({"de": 10, "fr": 1}, max_items=8)))["item_counts_in_bounds"]
    assert offenders == ["de: 9 items, below the floor of 10", "de: 9 items, above the maximum of 8",
                         "fr: 0 items, below the floor of 1"]
    lost = failed(gate(with_de(candidate, []), previous={"de": 9}))["item_counts_in_bounds"]
    assert lost[0] == "de: 0 items, below the floor of 1" and "previous publication had 9" in lost[1]


def test_counts_must_agree_with_the_build_report(candidate):
    stale = Candidate(candidate.build_report, {**candidate.items, "de": candidate.items["de"][:8]}, None)
    assert failed(gate(stale))["item_counts_in_bounds"] == ["de: build-report.json says 9 items, bench-de.jsonl has 8"]


def test_the_oracle_must_have_proved_exactly_the_published_core(candidate):
    core = {i["id"] for i in candidate.core("de")}
    missing = min(core)
    offenders = failed(gate(candidate, scored={"de": core - {missing}}))
    assert offenders == {"oracle_one": [f"de: 1 core items without an oracle verdict, e.g. ['{missing}']"]}
    reason = "de: 8/9 grounded_correct; first failing ids ['x']"
    assert failed(gate(candidate, failures=[reason])) == {"oracle_one": [reason]}
