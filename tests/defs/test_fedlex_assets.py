"""The Dagster layer of the first slice: assets, partitions, metadata, data versions, the code location."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg

from chpit_assets.defs.fedlex.assets import (
    fedlex_catalog,
    fedlex_editions,
    parsed_articles,
)
from chpit_assets.defs.resources import ChpitStore, FedlexSource

ROOT = Path(__file__).resolve().parents[2]


def materialize(tmp_path: Path, lang: str, instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [fedlex_catalog, fedlex_editions, parsed_articles],
        partition_key=lang,
        instance=instance,
        resources={
            "chpit": ChpitStore(data_dir=str(tmp_path / "data")),
            "fedlex": FedlexSource(sample_dir=str(ROOT / "data" / "fedlex-sample")),
        },
    )


def metadata(result: dg.ExecuteInProcessResult, key: str) -> dict:
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == key]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def test_german_partition_materialises_with_counts_and_failures(tmp_path):
    with dg.instance_for_test() as instance:
        result = materialize(tmp_path, "de", instance)
        assert result.success
        parsed = metadata(result, "parsed_articles")
        assert (parsed["editions"], parsed["parsed"], parsed["articles"]) == (7, 6, 521)
        assert parsed["failures_by_stage"] == {"no_file": 1}
        assert "20220701" in parsed["failures"]
        assert "DSG" in parsed["preview"] or "BV" in parsed["preview"]
        catalog = metadata(result, "fedlex_catalog")
        assert (catalog["acts"], catalog["editions_with_file"], catalog["editions_without_file"]) == (3, 6, 1)
        assert (tmp_path / "data" / "chpit.duckdb").is_file()


def test_unchanged_rerun_keeps_data_versions_and_parses_nothing(tmp_path):
    with dg.instance_for_test() as instance:
        materialize(tmp_path, "fr", instance)
        first = data_version(instance)
        again = materialize(tmp_path, "fr", instance)
        second = data_version(instance)
        assert metadata(again, "parsed_articles")["reparsed"] == 0
        assert metadata(again, "fedlex_editions")["by_stage"] == {"cached": 1, "no_file": 6}
        assert first is not None and first == second


def data_version(instance: dg.DagsterInstance) -> str | None:
    record = instance.get_latest_data_version_record(dg.AssetKey("parsed_articles"), partition_key="fr")
    return record.event_log_entry.asset_materialization.tags.get("dagster/data_version")


def test_code_location_loads_with_language_partitions():
    from chpit_assets.definitions import defs

    graph = defs.resolve_asset_graph()
    for key in ("fedlex_catalog", "fedlex_editions", "parsed_articles"):
        partitions = graph.get(dg.AssetKey(key)).partitions_def
        assert partitions.get_partition_keys() == ["de", "fr", "it", "en", "rm"]


def test_workspace_yaml_loads_in_the_dagster_cli(tmp_path):
    env = dict(os.environ, DAGSTER_HOME=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "dagster", "definitions", "validate", "-w", str(ROOT / "workspace.yaml")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "chpit" in done.stdout + done.stderr


def test_an_empty_language_catalog_is_refused_not_treated_as_all_withdrawn(tmp_path):
    import json

    import pytest

    from chpit_assets.fedlex.catalog import CatalogError

    sample = ROOT / "data" / "fedlex-sample"
    raw = json.loads((sample / "catalog.json").read_text(encoding="utf-8"))
    for act in raw["acts"]:
        act["editions"] = [e for e in act["editions"] if e["lang"] != "rm"]
    (tmp_path / "catalog.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(CatalogError, match="no edition in 'rm'"):
        FedlexSource(sample_dir=str(tmp_path)).load_catalog("rm")
    assert FedlexSource(sample_dir=str(sample)).load_catalog("rm").editions
