"""build-report.json: per-language counts that add up, core per year and cell, no wall clock."""

import json

import pytest

from chpit_assets.bench.build_report import BuildReportError, build_report, write_report
from chpit_assets.bench.items import BuildSettings, bench_path, core_path, write_core

from .conftest import run_builder
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
    assert (report["build"], report["build_date"], report["languages"]) == ("v-x", "2026-09-04", ["de", "fr"])
    for lang in ("de", "fr"):
        section = report[lang]
        assert section["sources"] == ["fedlex"] and section["items"] == 12
        assert section["changes_considered"] == sum(section["skips"].values()) + section["selected"]
        assert sum(section["core"]["years"].values()) == sum(section["core"]["cells"].values()) == 5
        assert section["skips"]["capped"] == section["changes_considered"] - section["selected"]


def test_languages_built_with_different_settings_are_refused(store, tmp_path):
    _corpus(store, ["de", "fr"], n_acts=1)
    run_builder(store, "de", tmp_path, BuildSettings(build="v1"))
    run_builder(store, "fr", tmp_path, BuildSettings(build="v2"))
    with pytest.raises(BuildReportError, match="fr was built with"):
        build_report(store, None)


def test_nothing_built_is_a_clear_error(store):
    with pytest.raises(BuildReportError, match="no language has been built"):
        build_report(store, None)
