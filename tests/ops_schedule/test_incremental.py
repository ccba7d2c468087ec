"""One new edition, end to end: the sensor's request, run as the daemon would run it, fetches and parses only
that edition; its change reaches act_changes, bench_items and the build report; published items stay as they were."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg

from chpit_assets.bench.frozen import changed_items, load_frozen, record_published
from chpit_assets.corpus.schema import version_id_for
from chpit_assets.defs.bench import assets as bench
from chpit_assets.defs.fedlex import assets as fedlex_assets
from chpit_assets.defs.ops.jobs import build_job
from chpit_assets.defs.ops.sensors import ACTS_TAG, new_edition_sensor
from chpit_assets.defs.partitions import register_langs
from chpit_assets.defs.resources import ChpitStore, FedlexSource
from chpit_assets.fedlex.catalog import Catalog
from chpit_assets.fedlex.catalog_diff import Snapshot, record_built
from tests.fedlex.conftest import FakeFedlex

from .conftest import NEW_EDITION, NEW_FILE, file_hits, serve

QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def metadata(result: dg.ExecuteInProcessResult, key: str) -> dict:
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == key]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def items(data: Path) -> list[dict]:
    return [json.loads(line) for line in (data / "build" / "bench-de.jsonl").read_text().splitlines()]


def test_one_new_edition_costs_one_download_and_one_parse_and_reaches_items_and_report(
    tmp_path: Path, fake_fedlex: FakeFedlex, before: Catalog, after: Catalog
):
    data, frozen = tmp_path / "data", tmp_path / "frozen"
    chpit = ChpitStore(data_dir=str(data))
    fedlex = FedlexSource(mode="live", sparql_url=fake_fedlex.endpoint)
    defs = dg.Definitions(
        assets=[
            fedlex_assets.fedlex_catalog,
            fedlex_assets.fedlex_editions,
            fedlex_assets.parsed_articles,
            bench.act_changes,
            bench.eligible_changes,
            bench.bench_items,
            bench.core_split,
            bench.build_report,
        ],
        jobs=[build_job],
        resources={"chpit": chpit, "fedlex": fedlex},
    )

    def build(instance: dg.DagsterInstance, release: str, tags: dict[str, str] | None = None):
        config = {**QUIET, "ops": {"bench_items": {"config": {"build": release}}}}
        result = defs.resolve_job_def("build").execute_in_process(
            run_config=config, instance=instance, partition_key="de", tags=tags
        )
        report = defs.resolve_implicit_global_asset_job_def().execute_in_process(
            run_config={**QUIET, "ops": {"build_report": {"config": {"build_date": "2026-09-04"}}}},
            instance=instance,
            asset_selection=[bench.build_report.key],
        )
        assert result.success and report.success
        return result, json.loads((data / "build" / "build-report.json").read_text())

    def tick(instance: dg.DagsterInstance) -> dg.SensorResult:
        with dg.build_sensor_context(
            instance=instance, resources={"fedlex": fedlex, "chpit": chpit}, repository_def=defs.get_repository_def()
        ) as context:
            return new_edition_sensor(context)

    with dg.instance_for_test() as instance:
        register_langs(instance, ["de"])
        serve(fake_fedlex, before)
        first, first_report = build(instance, "v1")
        # What the pipeline records once the run is published: the sensor's baseline.
        record_built(chpit.built_catalog_path(fedlex.source_id), Snapshot.of({"de": fedlex.load_catalog("de")}))
        published = items(data)
        record_published(frozen, "de", published)
        fetched_before = file_hits(fake_fedlex)
        assert NEW_FILE not in fetched_before and set(fetched_before.values()) == {1}
        assert metadata(first, "parsed_articles")["reparsed"] == len(fetched_before)

        serve(fake_fedlex, after)
        [request] = tick(instance).run_requests
        second, second_report = build(instance, "v2", tags=request.tags)

    # Fetch and parse: the new edition only; every other file from the cache, every other edition reused.
    new_hits = {p: n - fetched_before.get(p, 0) for p, n in file_hits(fake_fedlex).items()}
    assert {p: n for p, n in new_hits.items() if n} == {NEW_FILE: 1}
    parsed = metadata(second, "parsed_articles")
    assert (parsed["reparsed"], parsed["reused_unchanged"]) == (1, len(fetched_before))
    assert metadata(second, "fedlex_editions")["by_stage"] == {
        "cached": len(fetched_before),
        "downloaded": 1,
        "no_file": 1,
    }
    assert second.dagster_run.tags[ACTS_TAG] == "cc-2022-491"

    # The builder: the new edition's changes, and items for them, stamped with the new build.
    new_version = version_id_for(NEW_EDITION, "de")
    changes = chpit.store.frame("SELECT change_type FROM ch_act_change WHERE new_version_id = ?", [new_version])
    assert changes["change_type"].to_list() == ["modified", "modified"]
    assert metadata(second, "act_changes")["changes"] == metadata(first, "act_changes")["changes"] + 2
    rebuilt = items(data)
    added = [i for i in rebuilt if i["id"] not in {p["id"] for p in published}]
    assert added and all(i["change_date"] == "2025-04-01" and i["build"] == "v2" for i in added)

    # Published items are emitted exactly as published; the report counts the additions.
    assert changed_items(load_frozen(frozen, "de"), rebuilt) == []
    assert first_report["de"]["items"] == len(published)
    assert second_report["de"]["items"] == len(published) + len(added)
