"""Point 7: DuckDB has one writer at a time, so every step that writes the store holds the
one slot of the `duckdb_writer` pool, and concurrent partition runs queue for it."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import dagster as dg

from chpit_assets.corpus.store import Store
from chpit_assets.definitions import defs
from chpit_assets.defs.resources import ChpitStore, FedlexSource

from .conftest import SAMPLE, Proc, Spawn

POOL = "duckdb_writer"
PARSE = ["fedlex_catalog", "fedlex_editions", "parsed_articles"]


def test_every_asset_of_kind_duckdb_is_in_the_writer_pool_and_only_those():
    """`kinds` containing "duckdb" is how an asset says it writes the store (and shows it in the UI)."""
    writers, pooled = set(), set()
    for assets_def in defs.resolve_asset_graph().assets_defs:
        if not assets_def.is_executable:
            continue
        for spec in assets_def.specs:
            key = spec.key.to_user_string()
            if "duckdb" in spec.kinds:
                writers.add(key)
            if assets_def.op.pool == POOL:
                pooled.add(key)
    assert "parsed_articles" in writers  # the rule is not vacuous
    assert writers == pooled, f"kind duckdb without the pool: {writers - pooled}; pool without the kind: {pooled - writers}"


def test_every_step_that_opens_the_store_writable_is_in_the_writer_pool(tmp_path, monkeypatch):
    """Kinds are a declaration; this watches the real connections of the per-language build."""
    opened: set[tuple[str, str | None]] = set()
    connect = Store.connect

    @contextmanager
    def watched(self: Store, read_only: bool = False) -> Iterator:
        if not read_only:
            context = dg.OpExecutionContext.get()
            assert context is not None, "the store was opened for writing outside a Dagster step"
            opened.add((context.op_def.name, context.op_def.pool))
        with connect(self, read_only) as con:
            yield con

    monkeypatch.setattr(Store, "connect", watched)
    # Every per-language asset that runs offline; the unpartitioned report and the LLM runs are left out.
    selection = dg.AssetSelection.groups("fedlex", "bench") - dg.AssetSelection.assets("build_report")
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [*defs.assets, *defs.asset_checks], selection=selection, partition_key="de", instance=instance,
            resources={"chpit": ChpitStore(data_dir=str(tmp_path / "data")), "fedlex": FedlexSource(sample_dir=str(SAMPLE))},
            run_config={"ops": {"bench_items": {"config": {"frozen_dir": str(tmp_path / "frozen")}}}},
        )
    assert result.success
    assert ("parsed_articles", POOL) in opened
    assert {op for op, pool in opened if pool != POOL} == set()


def _materialize(spawn: Spawn, env: dict[str, str], lang: str) -> Proc:
    """`dagster asset materialize` of the per-language parse, as an operator or a backfill would run it.
    In-process execution keeps the test quick; pools are claimed the same way by every executor."""
    return spawn(
        [sys.executable, "-m", "dagster", "asset", "materialize", "-m", "chpit_assets.definitions",
         "--select", ",".join(PARSE), "--partition", lang,
         "--config-json", json.dumps({"execution": {"config": {"in_process": {}}}})],
        env, f"materialize-{lang}",
    )


def _blocked_on_pool(instance: dg.DagsterInstance, run_id: str) -> bool:
    return any(
        record.dagster_event is not None
        and record.dagster_event.step_key == "parsed_articles"
        and f"blocked by limit for pool {POOL}" in (record.dagster_event.message or "")
        for record in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
    )


def _step_window(instance: dg.DagsterInstance, run_id: str, step: str) -> tuple[float, float]:
    times = {
        r.dagster_event_type: r.timestamp
        for r in instance.all_logs(run_id)
        if r.dagster_event is not None and r.dagster_event.step_key == step
        and r.dagster_event_type in (dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS)
    }
    return times[dg.DagsterEventType.STEP_START], times[dg.DagsterEventType.STEP_SUCCESS]


def test_two_partition_runs_at_once_queue_for_the_writer_slot(base_env, dagster_home, spawn, monkeypatch):
    """A writer already holds the slot and the DuckDB file lock; runs for de and fr start meanwhile.
    Both must wait for the slot (not fail on the lock), then write one after the other."""
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    store = Store(Path(base_env["CHPIT_DATA_DIR"]) / "chpit.duckdb")
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance, ExitStack() as holder:
        events = instance.event_log_storage
        # The limit comes from dagster.yaml alone: nothing was set on this fresh instance.
        events.initialize_concurrency_limit_to_default(POOL)
        assert events.get_concurrency_info(POOL).slot_count == 1
        assert events.claim_concurrency_slot(POOL, "holder-run", "holder-step").is_claimed
        holder.callback(events.free_concurrency_slot_for_step, "holder-run", "holder-step")
        holder.enter_context(store.connect())  # the exclusive file lock a running writer holds

        runs = {lang: _materialize(spawn, base_env, lang) for lang in ("de", "fr")}
        deadline = time.monotonic() + 120
        while True:
            run_ids = [r.run_id for r in instance.get_runs()]
            if len(run_ids) == 2 and all(_blocked_on_pool(instance, run_id) for run_id in run_ids):
                break
            for lang, proc in runs.items():
                assert proc.popen.poll() is None, f"{lang} ended while the slot was taken:\n{proc.output()[-4000:]}"
            assert time.monotonic() < deadline, "the runs never queued on the pool"
            time.sleep(0.5)
        holder.close()  # the writer finishes: lock and slot released

        for proc in runs.values():
            proc.wait_ok(timeout=120)
        by_lang = {r.tags["dagster/partition"]: r for r in instance.get_runs()}
        assert {lang: r.status for lang, r in by_lang.items()} == {
            "de": dg.DagsterRunStatus.SUCCESS, "fr": dg.DagsterRunStatus.SUCCESS}
        first, second = sorted(_step_window(instance, r.run_id, "parsed_articles") for r in by_lang.values())
        assert first[1] <= second[0], "the two parsed_articles steps wrote at the same time"
        assert events.get_concurrency_info(POOL).claimed_slots == []  # every slot given back

    langs = dict(store.frame("SELECT lang, count(*) FROM ch_act_version GROUP BY lang").rows())
    assert langs.get("de", 0) > 0 and langs.get("fr", 0) > 0
