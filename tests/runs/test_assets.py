"""The Dagster layer on the real sample build: oracle gate + blocking check, results and scored
results per (system, lang), the report; a failing oracle stops everything downstream."""

from __future__ import annotations

import json
import shutil

import dagster as dg
import pytest

from chpit_assets.runs.errors import UnknownSystemError
from chpit_assets.runs.sample import subsample
from chpit_assets.runs.systems import estimate_tokens
from tests.dagster_defs import defs_for, run_benchmark

from .conftest import TODAY, completion


def _copy(sample, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(sample.store.path, data / "chpit.duckdb")
    shutil.copytree(sample.build_dir, data / "build")
    return data


RUN_CONFIG = {"resources": {"runs": {"config": {"today": TODAY.isoformat()}}}}


def test_oracle_and_recite_through_dagster_to_the_report(sample, tmp_path):
    data = _copy(sample, tmp_path)
    lines: list[str] = []
    with dg.instance_for_test() as instance:
        assert run_benchmark(defs_for(data), instance, ("oracle", "recite"), ("de",), RUN_CONFIG, echo=lines.append)
        assert set(instance.get_dynamic_partitions("systems")) == {"oracle", "recite"}
    n = len(sample.items["de"])
    oracle = [json.loads(l) for l in (data / "results" / "oracle" / "de.scored.jsonl").read_text().splitlines()]
    assert len(oracle) == n and {l["verdict"]["label"] for l in oracle} == {"grounded_correct"}
    french = [json.loads(l) for l in (data / "results" / "oracle" / "fr.scored.jsonl").read_text().splitlines()]
    assert len(french) == len(sample.items["fr"]) and all(l["verdict"]["label"] == "grounded_correct" for l in french)
    assert (data / "results" / "oracle" / "it.scored.jsonl").read_text() == ""  # no Italian changes: passes vacuously
    run_report = json.loads((data / "report" / "run-report-recite.json").read_text())
    assert run_report["actual"]["recite"]["items"] == n and run_report["actual"]["recite"]["usd"] == 0.0
    report = json.loads((data / "report" / "report.json").read_text())
    recite = next(h for h in report["headline"] if h["system"] == "recite")
    assert (
        recite["n"] == n and recite["recite_easy_correct_pct"] == 100.0 and recite["date_sensitive_correct_pct"] == 0.0
    )
    assert (data / "report" / "report.html").exists() and "oracle_gate: passed" in lines[0]


def test_a_failing_oracle_blocks_results_and_report(sample, tmp_path):
    data = _copy(sample, tmp_path)
    core = data / "build" / "core-de.jsonl"
    items = [json.loads(l) for l in core.read_text().splitlines()]
    items[0]["e_id"] = (
        "art_13_a" if items[0]["e_id"] != "art_13_a" else "art_5"
    )  # the oracle now quotes another article
    core.write_text("".join(json.dumps(i) + "\n" for i in items))
    lines: list[str] = []
    with dg.instance_for_test() as instance:
        assert not run_benchmark(defs_for(data), instance, ("oracle", "recite"), ("de",), RUN_CONFIG, echo=lines.append)
        check = instance.event_log_storage.get_latest_asset_check_execution_by_key(
            [dg.AssetCheckKey(dg.AssetKey("oracle_gate"), "oracle_scores_one")]
        )
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


def _model_config(server, **extra) -> dict:
    runs = {"today": TODAY.isoformat(), **extra.pop("runs", {})}
    model = {"slug": "scripted", "base_url": server.base_url, "model": "vendor/model-a", **extra}
    return {"resources": {"runs": {"config": runs}, "model": {"config": model}}}


def test_a_model_run_asks_the_subsample_and_writes_the_run_report(sample, tmp_path, scripted):
    """PROTOCOL §6 (sample_per_lang), §8 (run-report-{mode}.json), issue 14 (limit, honest metadata)."""
    data = _copy(sample, tmp_path)
    fail = {"on": True}

    def respond(body):
        if fail["on"] and len(server.hits) == 2:
            return 400, {"error": "refused"}
        return 200, completion("1 Text.", cost=0.001, prompt_tokens=100, completion_tokens=10)

    server = scripted(respond)
    with dg.instance_for_test() as instance:
        defs = defs_for(data)
        assert run_benchmark(
            defs,
            instance,
            ("scripted/closed",),
            ("de",),
            _model_config(server, runs={"sample_per_lang": 4}, price_input_per_mtok=1.0, price_output_per_mtok=2.0),
            echo=lambda s: None,
        )
        event = instance.get_latest_materialization_event(dg.AssetKey("results"))
        meta = event.asset_materialization.metadata
        assert (meta["log_answered"].value, meta["log_errored"].value) == (3, 1)
        assert "HTTP 400" in meta["commonest_error"].value
    asked = [json.loads(l) for l in (data / "results/scripted/closed/de.jsonl").read_text().splitlines()]
    expected = subsample(sample.items["de"], 4)
    assert sorted(l["id"] for l in asked) == [i["id"] for i in expected] and len(server.hits) == 4
    report = json.loads((data / "report" / "run-report-closed.json").read_text())
    assert list(report) == [
        "mode",
        "estimate",
        "actual",
        "actual_total_usd",
        "sample_size",
        "started",
        "finished",
        "settings",
    ]
    est = sum(estimate_tokens("closed", i)[0] for i in expected), sum(estimate_tokens("closed", i)[1] for i in expected)
    assert report["estimate"]["vendor/model-a"] == {
        "items": 4,
        "input_tokens": est[0],
        "output_tokens": est[1],
        "usd": est[0] / 1e6 * 1.0 + est[1] / 1e6 * 2.0,
    }
    assert report["actual"]["vendor/model-a"] == {
        "items": 4,
        "answered": 3,
        "errors": 1,
        "input_tokens": 300,
        "output_tokens": 30,
        "usd": pytest.approx(0.003),
        "usd_reported": pytest.approx(0.003),
        "usd_from_tokens": pytest.approx(3 * (100e-6 + 20e-6)),
    }
    assert report["started"].endswith("+00:00") and report["started"] <= report["finished"]
    assert report["settings"] == {
        "reasoning_effort": "minimal",
        "workers": 1,
        "split": "core",
        "sample_per_lang": 4,
        "seed": 20260825,
        "temperature": 0.0,
        "max_tokens_ladder": [8192, 16384],
    }
    # A plain re-run asks only the errored item again (PROTOCOL §7) and the report follows.
    fail["on"] = False
    with dg.instance_for_test() as instance:
        assert run_benchmark(
            defs_for(data),
            instance,
            ("scripted/closed",),
            ("de",),
            _model_config(server, runs={"sample_per_lang": 4}, price_input_per_mtok=1.0, price_output_per_mtok=2.0),
            echo=lambda s: None,
        )
    assert len(server.hits) == 5
    report = json.loads((data / "report" / "run-report-closed.json").read_text())
    assert (report["actual"]["vendor/model-a"]["answered"], report["actual"]["vendor/model-a"]["errors"]) == (4, 0)


def test_the_model_free_systems_through_dagster_write_no_run_report_of_their_own(sample, tmp_path):
    """cite/* and search/* keys hold a "/": they are ours, not a published mode, so §8 gets no
    run-report for them (it once made `run-report-cite/current.json`, a folder and a file)."""
    from chpit_assets.search.index import build_index

    data = _copy(sample, tmp_path)
    with sample.store.connect(read_only=True) as con:
        build_index(con, "de", data / "search")
    with dg.instance_for_test() as instance:
        assert run_benchmark(
            defs_for(data),
            instance,
            ("oracle", "recite", "cite/pit", "search/pit"),
            ("de",),
            RUN_CONFIG,
            echo=lambda _: None,
        )
    for key in ("cite/pit", "search/pit"):
        scored = [json.loads(l) for l in (data / "results" / key / "de.scored.jsonl").read_text().splitlines()]
        assert len(scored) == len(sample.items["de"]) and {l["verdict"]["label"] for l in scored} == {
            "grounded_correct"
        }
    assert sorted(p.name for p in (data / "report").glob("run-report-*")) == ["run-report-recite.json"]


def test_a_models_run_report_holds_no_model_free_system_of_the_same_name(sample, tmp_path, scripted):
    """`cite/pit` and `search/pit` logs sit where a `<slug>/pit` log would (results/*/pit/): the
    run-report of the published pit mode is the models' alone (issue 26: the key is parsed, not globbed)."""
    from chpit_assets.defs.resources import ChpitStore
    from chpit_assets.pit.tools import PitTools
    from chpit_assets.runs.client import ChatClient, EndpointConfig
    from chpit_assets.runs.runner import results_path, run_items
    from chpit_assets.runs.stage import RunSettings, write_run_report
    from chpit_assets.runs.systems import build_system

    data = _copy(sample, tmp_path)
    chpit = ChpitStore(data_dir=str(data))
    tools = PitTools(sample.store, today=TODAY)
    items = sample.items["de"]
    run_items(build_system("cite/pit", tools=tools), items, results_path(chpit.results_dir, "cite/pit", "de"))
    server = scripted(lambda body: (200, completion("1 Text.")))
    with ChatClient(EndpointConfig(server.base_url, "vendor/model-a")) as client:
        system = build_system("scripted/pit", tools=tools, clients={"scripted": client})
        run_items(system, items[:3], results_path(chpit.results_dir, "scripted/pit", "de"))
    report = json.loads(write_run_report(chpit.layout, "pit", RunSettings(limit=3), {}).read_text())
    # PROTOCOL §8 keys by the model slug (issue 24)
    assert list(report["actual"]) == ["vendor/model-a"] and list(report["estimate"]) == ["vendor/model-a", "total_usd"]
    assert report["actual"]["vendor/model-a"]["answered"] == 3
