"""build-report.json in the published shape (PROTOCOL §1): per-language counts that add up, core
per year and cell, caps, no wall clock."""

import json

import pytest

from chpit_assets.bench.build_report import BuildReportError, build_report, report_langs, write_report
from chpit_assets.bench.items import BuildSettings, bench_path, core_path, write_core

from .conftest import long_text, run_builder
from .test_items import _corpus


def test_report_counts_core_and_determinism(store, tmp_path):
    _corpus(store, ["de", "fr"])
    s = BuildSettings(build="v-x", item_cap=12, core_size=5)
    for lang in ("de", "fr"):
        run_builder(store, lang, tmp_path, s)
        core = write_core(store, tmp_path, lang)
        flagged = [json.loads(line) for line in bench_path(tmp_path, lang).read_text().splitlines()]
        assert core == [i for i in flagged if i["core"]] and len(core) == 5
        assert core_path(tmp_path, lang).read_text().count("\n") == 5
    write_report(tmp_path / "one.json", build_report(store, "2026-09-04"))
    write_report(tmp_path / "two.json", build_report(store, "2026-09-04"))
    assert (tmp_path / "one.json").read_bytes() == (tmp_path / "two.json").read_bytes()
    report = json.loads((tmp_path / "one.json").read_text())
    assert list(report) == ["de", "fr", "seed", "caps", "built_at", "sources", "build"]
    assert report_langs(report) == ["de", "fr"]
    assert (report["build"], report["built_at"], report["seed"], report["sources"]) == (
        "v-x",
        "2026-09-04",
        20260825,
        ["fedlex"],
    )
    assert report["caps"] == {"per_lang_cap": 12, "per_act_cap": 50, "core_per_lang": 5}
    for lang in ("de", "fr"):
        section = report[lang]
        assert list(section) == ["changes_considered", "selected", "items", "skipped", "core"]
        # 3 acts x 5 articles x 2 changes, each with two discriminating halves: all 30 selected, the
        # loop stops after 6 (12 items), the other 24 kept changes are `capped` (PROTOCOL §1.8).
        assert (section["changes_considered"], section["selected"], section["items"]) == (30, 30, 12)
        assert section["skipped"] == {"capped": 24}
        assert list(section["core"]) == ["items", "per_year", "per_cell"] and section["core"]["items"] == 5
        assert sum(section["core"]["per_year"].values()) == sum(section["core"]["per_cell"].values()) == 5


def test_skipped_keys_follow_the_published_order_and_only_when_they_occurred(store, corpus, tmp_path):
    # B8/B9 first, per-row B7/B4-B5 next, then the loop's B11/B12, then capped (PROTOCOL §1.3-§1.8).
    from .test_eligibility import NEW, OLD, two_editions

    act = corpus.act("a")
    short = {"art_1": ("1", "1 kurz.")}, {"art_1": ("1", "1 kürzer.")}
    deletion = long_text("Die Frist beträgt 30 Tage.", "Sie kann auf Gesuch hin einmal um 10 Tage verlängert werden.")
    two_editions(
        corpus,
        act,
        articles_old={**short[0], "art_2": ("2", deletion), "art_3": (None, OLD), "art_4": ("4", OLD)},
        articles_new={
            **short[1],
            "art_2": ("2", long_text("Die Frist beträgt 30 Tage.")),
            "art_3": (None, NEW),
            "art_4": ("4", NEW),
        },
    )
    corpus.flush()
    run_builder(store, "de", tmp_path, BuildSettings(item_cap=0))
    section = build_report(store, None)["de"]
    # No cap: art_2 (a deletion, its `after` has no unit of its own) and art_4 give 3 items, and no
    # `capped` key, as nothing was capped.
    assert list(section["skipped"].items()) == [
        ("no_article_number", 1),
        ("identical_or_short", 1),
        ("no_discriminating_unit", 1),
    ]
    assert (section["changes_considered"], section["selected"], section["items"]) == (4, 2, 3)
    run_builder(store, "de", tmp_path, BuildSettings(item_cap=1))
    section = build_report(store, None)["de"]
    assert list(section["skipped"])[:2] == ["no_article_number", "identical_or_short"]
    assert list(section["skipped"])[-1] == "capped" and section["items"] == 1


def test_languages_built_with_different_settings_are_refused(store, tmp_path):
    _corpus(store, ["de", "fr"], n_acts=1)
    run_builder(store, "de", tmp_path, BuildSettings(build="v1"))
    run_builder(store, "fr", tmp_path, BuildSettings(build="v2"))
    with pytest.raises(BuildReportError, match="fr was built with"):
        build_report(store, None)


def test_nothing_built_is_a_clear_error(store):
    with pytest.raises(BuildReportError, match="no language has been built"):
        build_report(store, None)
