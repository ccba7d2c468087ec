"""The Dagster layer end to end on the real sample: every bench asset and check, one language."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg

from chpit_assets.corpus.ingest import ingest_language
from chpit_assets.defs.bench import assets, checks
from chpit_assets.defs.resources import ChpitStore
from chpit_assets.fedlex.catalog import load_sample_catalog

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"


def test_bench_assets_and_checks_on_the_sample(tmp_path):
    chpit = ChpitStore(data_dir=str(tmp_path / "data"))
    ingest_language(chpit.store, load_sample_catalog(SAMPLE), "de", tmp_path / "cache")
    per_lang = [assets.act_changes, assets.eligible_changes, assets.bench_items, assets.core_split]
    check_defs = [checks.ids_unique, checks.as_of_in_gold_edition, checks.has_discriminating_unit,
                  checks.published_items_unchanged, checks.cap_respected]
    run_config = {"ops": {"bench_items": {"config": {"frozen_dir": str(tmp_path / "frozen"), "build": "v-test"}}}}
    result = dg.materialize([*per_lang, *check_defs], partition_key="de", resources={"chpit": chpit},
                            run_config=run_config)
    assert result.success
    evaluations = result.get_asset_check_evaluations()
    assert len(evaluations) == 5 and all(e.passed for e in evaluations)
    report = dg.materialize([assets.build_report], resources={"chpit": chpit},
                            run_config={"ops": {"build_report": {"config": {"build_date": "2026-09-04"}}}})
    assert report.success
    built = json.loads((tmp_path / "data" / "build" / "build-report.json").read_text())
    bench = (tmp_path / "data" / "build" / "bench-de.jsonl").read_text().splitlines()
    core = (tmp_path / "data" / "build" / "core-de.jsonl").read_text().splitlines()
    assert (built["build"], built["build_date"], built["languages"]) == ("v-test", "2026-09-04", ["de"])
    assert built["de"]["items"] == len(bench) == len(core) == built["de"]["core"]["size"]  # under 500: all core
    assert built["de"]["changes_considered"] == sum(built["de"]["skips"].values()) + built["de"]["selected"]
