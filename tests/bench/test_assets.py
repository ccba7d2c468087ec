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


def test_bench_assets_and_checks_on_the_sample(tmp_path, instance):
    chpit = ChpitStore(data_dir=str(tmp_path / "data"))
    ingest_language(chpit.store, load_sample_catalog(SAMPLE), "de", tmp_path / "cache")
    per_lang = [assets.act_changes, assets.eligible_changes, assets.bench_items, assets.core_split]
    check_defs = [checks.bench_items_checks]
    run_config = {"ops": {"bench_items": {"config": {"build": "v-test"}}}}
    result = dg.materialize(
        [*per_lang, *check_defs],
        partition_key="de",
        instance=instance,
        resources={"chpit": chpit},
        run_config=run_config,
    )
    assert result.success
    evaluations = result.get_asset_check_evaluations()
    assert sorted(e.check_name for e in evaluations) == sorted(checks.CHECKS)
    assert all(e.passed for e in evaluations)
    report = dg.materialize(
        [assets.build_report],
        instance=instance,
        resources={"chpit": chpit},
        run_config={"ops": {"build_report": {"config": {"build_date": "2026-09-04"}}}},
    )
    assert report.success
    built = json.loads((tmp_path / "data" / "build" / "build-report.json").read_text())
    bench = (tmp_path / "data" / "build" / "bench-de.jsonl").read_text().splitlines()
    core = (tmp_path / "data" / "build" / "core-de.jsonl").read_text().splitlines()
    assert (built["build"], built["built_at"], list(built)[:1]) == ("v-test", "2026-09-04", ["de"])
    assert built["de"]["items"] == len(bench) == len(core) == built["de"]["core"]["items"]  # under 500: all core
    before_loop = ("no_article_number", "ambiguous_article", "no_abbreviation", "identical_or_short")
    assert (
        built["de"]["changes_considered"]
        == sum(built["de"]["skipped"].get(r, 0) for r in before_loop) + built["de"]["selected"]
    )


def test_a_failing_check_names_the_item_and_the_other_checks_still_pass(tmp_path, instance):
    chpit = ChpitStore(data_dir=str(tmp_path / "data"))
    ingest_language(chpit.store, load_sample_catalog(SAMPLE), "de", tmp_path / "cache")
    per_lang = [assets.act_changes, assets.eligible_changes, assets.bench_items]
    run_config: dict = {}
    assert dg.materialize(
        per_lang, partition_key="de", instance=instance, resources={"chpit": chpit}, run_config=run_config
    ).success
    first, second = chpit.store.frame("SELECT id, fingerprint FROM bench_item ORDER BY id LIMIT 2").rows()
    with chpit.store.transaction() as con:  # the second item's line now repeats the first item
        con.execute(
            "UPDATE bench_line SET line = (SELECT line FROM bench_line WHERE fingerprint = ?) WHERE fingerprint = ?",
            [first[1], second[1]],
        )
    # bench_items reuses the stored line (nothing it is rendered from changed), so the checks read the damage.
    result = dg.materialize(
        [*per_lang, checks.bench_items_checks],
        partition_key="de",
        instance=instance,
        resources={"chpit": chpit},
        run_config=run_config,
        raise_on_error=False,
    )
    outcome = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert sorted(outcome) == sorted(checks.CHECKS)
    assert [name for name, e in outcome.items() if not e.passed] == ["ids_unique"]
    assert first[0] in outcome["ids_unique"].metadata["ids"].value
