"""The Dagster layer on the real sample build: oracle gate + blocking check, results and scored
results per (system, lang), the report; a failing oracle stops everything downstream."""

from __future__ import annotations

import json
import shutil

import dagster as dg
import pytest

from chpit_assets.defs.runs.pipeline import run_benchmark
from chpit_assets.runs.errors import UnknownSystemError
from tests.dagster_defs import defs_for

from .conftest import TODAY


def _copy(sample, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(sample.store.path, data / "chpit.duckdb")
    shutil.copytree(sample.build_dir, data / "build")
    return data


RUN_CONFIG = {"ops": {"results": {"config": {"today": TODAY.isoformat()}}}}


def test_oracle_and_recite_through_dagster_to_the_report(sample, tmp_path):
    data = _copy(sample, tmp_path)
    lines: list[str] = []
    with dg.instance_for_test() as instance:
        assert run_benchmark(defs_for(data), instance, ("oracle", "recite"), ("de",), RUN_CONFIG, echo=lines.append)
        assert set(instance.get_dynamic_partitions("systems")) == {"oracle", "recite"}
    n = len(sample.items["de"])
    oracle = [json.loads(l) for l in (data / "results" / "oracle" / "de.scored.jsonl").read_text().splitlines()]
    assert len(oracle) == n and {l["verdict"]["label"] for l in oracle} == {"grounded_correct"}
    assert (data / "results" / "oracle" / "fr.scored.jsonl").read_text() == ""  # no French changes: passes vacuously
    report = json.loads((data / "report" / "report.json").read_text())
    recite = next(h for h in report["headline"] if h["system"] == "recite")
    assert recite["n"] == n and recite["recite_easy_correct_pct"] == 100.0 and recite["date_sensitive_correct_pct"] == 0.0
    assert (data / "report" / "report.html").exists() and "oracle_gate: passed" in lines[0]


def test_a_failing_oracle_blocks_results_and_report(sample, tmp_path):
    data = _copy(sample, tmp_path)
    core = data / "build" / "core-de.jsonl"
    items = [json.loads(l) for l in core.read_text().splitlines()]
    items[0]["e_id"] = "art_13_a" if items[0]["e_id"] != "art_13_a" else "art_5"  # the oracle now quotes another article
    core.write_text("".join(json.dumps(i) + "\n" for i in items))
    lines: list[str] = []
    with dg.instance_for_test() as instance:
        assert not run_benchmark(defs_for(data), instance, ("oracle", "recite"), ("de",), RUN_CONFIG, echo=lines.append)
        check = instance.event_log_storage.get_latest_asset_check_execution_by_key(
            [dg.AssetCheckKey(dg.AssetKey("oracle_gate"), "oracle_scores_one")])
        evaluation = next(iter(check.values())).event.dagster_event.event_specific_data
        assert evaluation.passed is False
        assert "de: " in evaluation.metadata["failures"].value
    assert lines == [lines[0]] and "FAILED" in lines[0]
    assert not (data / "results" / "recite").exists() and not (data / "report").exists()


def test_unknown_system_keys_never_reach_the_partition_axis(tmp_path):
    with dg.instance_for_test() as instance:
        with pytest.raises(UnknownSystemError):
            run_benchmark(defs_for(tmp_path), instance, ("oracle", "gpt/summarise"), ("de",), echo=lambda s: None)
        assert instance.get_dynamic_partitions("systems") == []


def test_the_oracle_gate_asks_again_instead_of_resuming_old_answers(sample, tmp_path):
    data = _copy(sample, tmp_path)
    core = [json.loads(l) for l in (data / "build" / "core-de.jsonl").read_text().splitlines()]
    # A log left by an earlier build: every answer stale (another text than today's gold).
    stale = data / "results" / "oracle" / "de.jsonl"
    stale.parent.mkdir(parents=True)
    stale.write_text("".join(json.dumps({"id": i["id"], "answer": "stale", "error": None}) + "\n" for i in core))
    lines: list[str] = []
    with dg.instance_for_test() as instance:
        assert run_benchmark(defs_for(data), instance, ("oracle",), ("de",), RUN_CONFIG, echo=lines.append)
    assert "stale" not in stale.read_text()
    assert "oracle_gate: passed" in lines[0]
