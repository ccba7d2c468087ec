"""The CRITICAL gate's rules on the real sample candidate, each broken on purpose: a failing rule
names the language and the item id (or count) it failed on, and only that rule fails."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chpit_assets.corpus.store import Store
from chpit_assets.pit.tools import PitTools
from chpit_assets.publish import (
    CRITICAL_CHECKS,
    Candidate,
    CountBounds,
    GateFailed,
    OracleCheck,
    content_hash,
    evaluate_gate,
    load_candidate,
    oracle_check,
    publish,
)
from chpit_assets.publish.gate import act_counts
from chpit_assets.publish.schema import ITEM_FIELDS, schema_errors
from chpit_assets.synthetic import SYNTHETIC_ELI_ROOT

LANGS = ("de", "fr", "it")


@pytest.fixture
def candidate(data) -> Candidate:
    return load_candidate(data / "build", data / "results", data / "report", LANGS)


def checked(candidate: Candidate, offenders=()) -> OracleCheck:
    """What the gate's oracle reports when it looked up exactly this candidate."""
    return OracleCheck(list(offenders), {lang: content_hash(items) for lang, items in candidate.items.items()})


def gate(
    candidate: Candidate,
    *,
    frozen=None,
    previous=None,
    bounds=None,
    failures=(),
    scored=None,
    oracle=None,
    failed_editions=(),
    errored_lines=(),
    unstamped=(),
):
    """`previous`: the live publication's items per language (their per-act counts are what the gate sees)."""
    scored = scored if scored is not None else {lang: {i["id"] for i in candidate.core(lang)} for lang in LANGS}
    return evaluate_gate(
        candidate,
        failed_editions=failed_editions,
        errored_lines=errored_lines,
        unstamped=unstamped,
        oracle_failures=list(failures),
        oracle_scored_ids=scored,
        published_oracle=oracle or checked(candidate),
        frozen=frozen or {},
        previous_acts={lang: act_counts(items) for lang, items in (previous or {}).items()},
        bounds=bounds or CountBounds(),
    )


def failed(report) -> dict[str, list[str]]:
    return {o.name: o.offenders for o in report.outcomes if not o.passed}


def with_de(candidate: Candidate, items: list[dict]) -> Candidate:
    report = copy.deepcopy(candidate.build_report)
    report["de"]["items"] = len(items)
    return Candidate(report, {**candidate.items, "de": items}, candidate.results_md)


def test_the_sample_passes_every_critical_check_with_the_default_bounds(candidate):
    assert [len(candidate.items[lang]) for lang in LANGS] == [9, 1, 0]
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
    assert offenders == {
        "texts_not_empty": [f"de: {items[2]['id']}: empty gold.text", f"de: {items[3]['id']}: empty question"]
    }


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


def test_counts_catch_a_collapse_and_name_the_acts_that_changed(candidate):
    de = candidate.items["de"]
    acts = act_counts(de)
    assert len(acts) >= 2  # the sample's German items come from more than one act
    gone = max(acts, key=lambda a: acts[a][1])
    label, n_gone = acts[gone]
    report = gate(
        with_de(candidate, [i for i in de if i["act_id"] != gone]), previous={"de": de, "fr": candidate.items["fr"]}
    )
    assert failed(report) == {
        "item_counts_in_bounds": [
            f"de: {len(de) - n_gone} items, the previous publication had {len(de)}: {n_gone} fewer, more than the "
            f"{0.01 * len(de):g} allowed (min(1%, 25))",
            f"de: {label}: all {n_gone} items lost",
        ]
    }
    assert report.count_changes == [f"de: {len(de)} -> {len(de) - n_gone} items", f"de: {label}: {n_gone} -> 0 items"]
    # The same build against itself: nothing changed, nothing listed.
    same = gate(candidate, previous={"de": de, "fr": candidate.items["fr"]})
    assert same.passed and same.count_changes == []
    offenders = failed(gate(candidate, bounds=CountBounds({"de": 10, "it": 1}, max_items=8)))["item_counts_in_bounds"]
    assert offenders == [
        "de: 9 items, below the floor of 10",
        "de: 9 items, above the maximum of 8",
        "it: 0 items, below the floor of 1",
    ]


def test_a_new_act_is_listed_without_blocking(candidate):
    de = candidate.items["de"]
    first = de[0]["act_id"]
    report = gate(candidate, previous={"de": [i for i in de if i["act_id"] != first]})
    assert report.passed
    label, n = act_counts(de)[first]
    assert f"de: {label}: 0 -> {n} items" in report.count_changes


def _fake(n_acts: int, per_act: int) -> list[dict]:
    return [
        {"id": f"{a}-{k}", "act_id": a, "sr_number": str(a), "abbreviation": f"A{a}"}
        for a in range(n_acts)
        for k in range(per_act)
    ]


@settings(max_examples=60, deadline=None)
@given(
    before=st.integers(1, 6000),
    lost=st.integers(0, 200),
    share=st.sampled_from([0.01, 0.05]),
    cap=st.sampled_from([25, 100]),
)
def test_a_language_may_lose_at_most_min_share_or_items(before, lost, share, cap):
    lost = min(lost, before - 1)
    previous = _fake(1, before)  # one act, so losing some never loses the act
    now = previous[: before - lost]
    candidate = Candidate({"de": {"items": len(now)}}, {"de": now}, None)
    bounds = CountBounds({}, max_items=10_000, max_drop_share=share, max_drop_items=cap)
    report = evaluate_gate(
        candidate,
        failed_editions=[],
        errored_lines=[],
        unstamped=[],
        oracle_failures=[],
        oracle_scored_ids={},
        published_oracle=checked(candidate),
        frozen={},
        previous_acts={"de": act_counts(previous)},
        bounds=bounds,
    )
    counts = next(o for o in report.outcomes if o.name == "item_counts_in_bounds").offenders
    assert bool(counts) == (lost > min(share * before, cap))
    assert report.count_changes == (
        []
        if lost == 0
        else [f"de: {before} -> {before - lost} items", f"de: SR 0 A0 (act_id 0): {before} -> {before - lost} items"]
    )


def test_counts_must_agree_with_the_build_report(candidate):
    stale = Candidate(candidate.build_report, {**candidate.items, "de": candidate.items["de"][:8]}, None)
    assert failed(gate(stale))["item_counts_in_bounds"] == ["de: build-report.json says 9 items, bench-de.jsonl has 8"]


def test_the_oracle_must_have_proved_exactly_the_published_core(candidate):
    core = {i["id"] for i in candidate.core("de")}
    missing = min(core)
    offenders = failed(gate(candidate, scored={"de": core - {missing}, "fr": {i["id"] for i in candidate.core("fr")}}))
    assert offenders == {"oracle_one": [f"de: 1 core items without an oracle verdict, e.g. ['{missing}']"]}
    reason = "de: 8/9 grounded_correct; first failing ids ['x']"
    assert failed(gate(candidate, failures=[reason])) == {"oracle_one": [reason]}


def test_a_mismatched_oracle_verdict_blocks(candidate):
    stale = checked(with_de(candidate, candidate.items["de"][:8]))  # looked up something else
    offenders = failed(gate(candidate, oracle=stale))
    assert offenders == {"oracle_published": ["the oracle looked up other items than this candidate's"]}
    bad = checked(candidate, ["de: x: oracle ungrounded"])
    assert failed(gate(candidate, oracle=bad)) == {"oracle_published": ["de: x: oracle ungrounded"]}


@pytest.fixture
def tools(data):
    pit = PitTools(Store(data / "chpit.duckdb"))
    with pit.session():
        yield pit


def test_the_gates_oracle_looks_up_every_item_core_or_not(candidate, tools):
    result = oracle_check(candidate.items, tools)
    assert result.offenders == []
    assert result.checked == {lang: content_hash(items) for lang, items in candidate.items.items()}
    items = copy.deepcopy(candidate.items["de"])
    items[1]["core"] = False  # not core: the runs' oracle never sees it, the gate's does
    items[1]["gold"]["text"] = items[1]["gold"]["text"].replace(" ", "  ", 1) + " (geändert)"
    items[3]["gold"]["version_id"] = items[3]["distractor"]["version_id"]
    items[4]["act_id"] = 1
    items[5]["gold"] = None
    result = oracle_check({"de": items}, tools)
    assert [o.split(":")[1].strip() for o in result.offenders] == [items[n]["id"] for n in (1, 3, 4, 5)]
    assert "oracle grounded_wrong_version" in result.offenders[0] or "oracle ungrounded" in result.offenders[0]
    assert f"gold.version_id {items[3]['distractor']['version_id']} is not the edition" in result.offenders[1]
    assert "the oracle lookup failed" in result.offenders[2]
    assert "not an item the oracle can look up" in result.offenders[3]
    assert result.checked["de"] == content_hash(items) != content_hash(candidate.items["de"])


def test_the_staged_shards_must_hold_what_the_oracle_checked(candidate, tmp_path, monkeypatch):
    """Re-checked right before the swap: a change between the gate and the staged bytes blocks."""
    import chpit_assets.publish.publication as publication

    report = gate(candidate)
    real_stage = publication.stage

    def stage_changed(c: Candidate, folder, load_name):
        items = copy.deepcopy(c.items)
        items["de"][0]["gold"]["text"] += " (nach dem Gate geändert)"
        return real_stage(Candidate(c.build_report, items, c.results_md), folder, load_name)

    monkeypatch.setattr(publication, "stage", stage_changed)
    live = tmp_path / "out" / "publish"
    with pytest.raises(
        GateFailed, match=r"not what the gate checked: de: data/de/full-00000-of-00001\.parquet differs"
    ):
        publish(candidate, report, live, hub=None, local_reason="local", frozen_dir=tmp_path / "frozen", load_name="x")
    assert sorted(p.name for p in live.parent.iterdir()) == []  # nothing went live, nothing staged is left
    monkeypatch.setattr(publication, "stage", real_stage)
    published = publish(
        candidate, report, live, hub=None, local_reason="local", frozen_dir=tmp_path / "frozen", load_name="x"
    )
    assert sorted(published.files) == [
        "README.md",
        *[f"data/{lang}/{split}-00000-of-00001.parquet" for lang in ("de", "fr") for split in ("core", "full")],
    ]


def test_editions_on_their_last_good_file_are_named(data):
    """Issue 15.3, the gate's side: an edition whose new file failed while its last good parse is kept
    (recorded by the ingest in failed_stage/failed_url) is named in the gate's metadata."""
    from chpit_assets.publish.last_good import editions_on_last_good_file

    store = Store(data / "chpit.duckdb")
    assert editions_on_last_good_file(store) == []
    with store.transaction() as con:
        version_id, eli, sr = con.execute(
            "SELECT v.version_id, v.eli, c.sr_number FROM ch_act_version v JOIN ch_act c USING (act_id) "
            "WHERE v.lang = 'de' AND v.stage = 'parsed' ORDER BY v.version_id LIMIT 1"
        ).fetchone()
        con.execute(
            "UPDATE ch_act_version SET failed_stage = 'validate', failed_error = 'an HTML page', "
            "failed_url = 'https://example.invalid/x.xml' WHERE version_id = ?",
            [version_id],
        )
    assert editions_on_last_good_file(store) == [
        f"de: SR {sr} {eli}: new file failed at validate (https://example.invalid/x.xml); the last good file is kept"
    ]
    assert editions_on_last_good_file(Store(data / "absent.duckdb")) == []
