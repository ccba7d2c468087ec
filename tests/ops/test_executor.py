"""The code location's executor runs a run's steps in the run's own process unless run config asks
for another mode: a process per step made a rebuild after one new edition almost seven times
slower (docs/benchmarks.md)."""

from __future__ import annotations

import dagster as dg
import pytest

from chpit_assets.definitions import defs
from chpit_assets.defs.partitions import register_langs
from chpit_assets.executors import chpit_executor
from chpit_assets.instance import pool_granularity

from .conftest import SAMPLE


def _build_job() -> dg.JobDefinition:
    return defs.resolve_job_def("build")


def _worker_events(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    return [
        r.dagster_event.step_key
        for r in instance.all_logs(run_id)
        if r.dagster_event is not None and r.dagster_event_type == dg.DagsterEventType.STEP_WORKER_STARTED
    ]


def test_a_launched_build_run_executes_its_steps_in_its_own_process(tmp_path, monkeypatch):
    """Launched as the daemon launches a schedule's or sensor's run (a reconstructable job, no
    execution config): every step succeeds and none starts a worker process."""
    monkeypatch.setenv("CHPIT_DATA_DIR", str(tmp_path / "data"))
    config = {
        "loggers": {"console": {"config": {"log_level": "WARNING"}}},
        "resources": {"fedlex": {"config": {"sample_dir": str(SAMPLE)}}},
    }
    with dg.instance_for_test() as instance:
        register_langs(instance, ["de"])
        with dg.execute_job(
            dg.reconstructable(_build_job), instance=instance, run_config=config, tags={"dagster/partition": "de"}
        ) as result:
            assert result.success
            steps = {e.step_key for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_SUCCESS}
            assert {"parsed_articles", "bench_items", "core_split"} <= steps
            assert _worker_events(instance, result.run_id) == []


@pytest.mark.parametrize("mode", ["in_process", "multiprocess", "celery"])
def test_every_mode_stays_selectable_by_run_config(mode):
    schema = chpit_executor.config_schema.config_type
    assert mode in schema.fields
    assert chpit_executor.config_schema.default_value == {"in_process": {}}


@pytest.mark.parametrize("granularity", ["run", "op"])
def test_a_run_that_owns_the_writer_pool_opens_the_store_once(tmp_path, monkeypatch, granularity):
    """With run-level pool slots (dagster.yaml), consecutive steps share one connection (a warm
    database, one checkpoint) and the file is free for other processes when the run ends. With
    per-step slots, every connection is opened afresh: a run must not keep the file while another
    run's step holds the slot and waits for it. Holding it, the run also reads the language's item
    lines once for the checks, core_split and search_track (`Store.memo`, issue 27.2); without, once
    each, since another run may write the file between its steps."""
    from chpit_assets.bench import items
    from chpit_assets.corpus import store as store_module

    data = tmp_path / "data"
    opened = []
    real_open = store_module.Store._open
    monkeypatch.setattr(
        store_module.Store, "_open", lambda self, read_only: opened.append(read_only) or real_open(self, read_only)
    )
    lines_read = []
    real_read = items._read_lines
    monkeypatch.setattr(items, "_read_lines", lambda store, lang: lines_read.append(lang) or real_read(store, lang))
    config = {
        "loggers": {"console": {"config": {"log_level": "WARNING"}}},
        "resources": {"fedlex": {"config": {"sample_dir": str(SAMPLE)}}, "chpit": {"config": {"data_dir": str(data)}}},
    }
    with dg.instance_for_test(overrides={"concurrency": {"pools": {"granularity": granularity}}}) as instance:
        register_langs(instance, ["de"])
        result = _build_job().execute_in_process(instance=instance, partition_key="de", run_config=config)
    assert result.success
    checks = [e for e in result.all_events if e.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION]
    assert checks and all(e.event_specific_data.passed for e in checks)
    # Writers (ingest, act_changes, eligible_changes, bench_items) and readers (checks, core_split).
    assert opened == [False] if granularity == "run" else (opened.count(False) >= 4 and opened.count(True) >= 2)
    assert lines_read == (["de"] if granularity == "run" else ["de", "de", "de"])
    build = data / "build"
    bench = (build / "bench-de.jsonl").read_bytes().splitlines()
    assert (build / "core-de.jsonl").read_bytes().splitlines() == [
        line for line in bench if line.endswith(b'"core": true}')
    ]
    assert store_module._HELD == {}
    # Opened again from scratch: not through a connection the run left behind.
    before = len(opened)
    assert store_module.Store(data / "chpit.duckdb").frame("SELECT count(*) AS n FROM bench_item")["n"].item() > 0
    assert opened[before:] == [True]


def test_the_shipped_instance_gives_a_run_the_writer_pool_for_the_whole_run(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    (home / "dagster.yaml").write_text((SAMPLE.parents[1] / "dagster.yaml").read_text())
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert pool_granularity(instance) == "run"
