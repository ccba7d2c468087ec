"""Point 7: DuckDB has one writer at a time, so every step that writes the store is in the
`duckdb_writer` pool (one slot, given to whole runs), and runs started by hand wait for the file."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import dagster as dg

from chpit_assets.corpus.store import Store
from chpit_assets.definitions import defs
from chpit_assets.defs.resources import ChpitStore, FedlexSource
from chpit_assets.instance import pool_granularity

from .conftest import SAMPLE, Proc, Spawn, set_up_instance

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
    assert writers == pooled, (
        f"kind duckdb without the pool: {writers - pooled}; pool without the kind: {pooled - writers}"
    )


def test_every_step_that_opens_the_store_writable_is_in_the_writer_pool(tmp_path, monkeypatch, instance):
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
    result = dg.materialize(
        [*defs.assets, *defs.asset_checks],
        selection=selection,
        partition_key="de",
        instance=instance,
        resources={
            **(defs.resources or {}),  # the model and publication resources the selection's neighbours declare
            "chpit": ChpitStore(data_dir=str(tmp_path / "data")),
            "fedlex": FedlexSource(sample_dir=str(SAMPLE)),
        },
        run_config={},
    )
    assert result.success
    assert ("parsed_articles", POOL) in opened
    assert {op for op, pool in opened if pool != POOL} == set()


BUILD = [*PARSE, "act_changes", "eligible_changes", "bench_items", "core_split"]


def _materialize(spawn: Spawn, env: dict[str, str], lang: str) -> Proc:
    """`dagster asset materialize` of a language's build, as an operator runs it by hand: directly,
    not through the run queue, so only the store's file lock keeps the two runs apart."""
    return spawn(
        [
            sys.executable,
            "-m",
            "dagster",
            "asset",
            "materialize",
            "-m",
            "chpit_assets.definitions",
            "--select",
            ",".join(BUILD),
            "--partition",
            lang,
            "--config-json",
            json.dumps({"execution": {"config": {"in_process": {}}}}),
        ],
        env,
        f"materialize-{lang}",
    )


def _wait_until(done: Callable[[], bool], procs: dict[str, Proc], what: str, timeout: float = 240) -> None:
    """Poll `done` until it holds, failing with a process's output when one of `procs` ends first."""
    deadline = time.monotonic() + timeout
    while not done():
        for name, proc in procs.items():
            assert proc.popen.poll() is None, f"{name} ended early:\n{proc.output()[-4000:]}"
        assert time.monotonic() < deadline, what
        time.sleep(0.5)


def _started(instance: dg.DagsterInstance, run_id: str, step: str) -> bool:
    return any(
        r.dagster_event is not None and r.dagster_event.step_key == step
        for r in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_START)
    )


def test_two_partition_runs_started_by_hand_wait_for_the_store_and_both_succeed(
    base_env, dagster_home, spawn, monkeypatch
):
    """The shipped instance gives the writer pool to whole runs (the run queue starts one at a time),
    and such a run keeps the store open from its first step to its last. Runs started by hand skip
    the queue: here a writer already holds the file and runs for de and fr start meanwhile. Both
    must wait for the file (not fail on the lock), then each build in turn: the one holding the
    file between its steps never waits for anything the other holds."""
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    store = Store(Path(base_env["CHPIT_DATA_DIR"]) / "chpit.duckdb")
    set_up_instance(spawn, base_env)
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance, ExitStack() as holder:
        assert pool_granularity(instance) == "run"
        holder.enter_context(store.connect())  # the exclusive file lock a running writer holds
        runs = {lang: _materialize(spawn, base_env, lang) for lang in ("de", "fr")}

        def both_at_the_store() -> bool:
            run_ids = [r.run_id for r in instance.get_runs()]
            return len(run_ids) == 2 and all(_started(instance, run_id, "parsed_articles") for run_id in run_ids)

        _wait_until(both_at_the_store, runs, "the runs never reached the store", timeout=120)
        time.sleep(2)
        for lang, proc in runs.items():  # still waiting, not failed
            assert proc.popen.poll() is None, f"{lang} gave up on the lock:\n{proc.output()[-4000:]}"
        holder.close()  # the writer finishes: the file is free

        for proc in runs.values():
            proc.wait_ok(timeout=240)
        by_lang = {r.tags["dagster/partition"]: r for r in instance.get_runs()}
        assert {lang: r.status for lang, r in by_lang.items()} == {
            "de": dg.DagsterRunStatus.SUCCESS,
            "fr": dg.DagsterRunStatus.SUCCESS,
        }

    # Both languages went through the whole build (the sample's French changes make no items).
    built = store.frame("SELECT lang, step FROM bench_stats ORDER BY ALL").rows()
    assert built == [(lang, step) for lang in ("de", "fr") for step in ("bench_items", "eligible_changes")]
    assert dict(store.frame("SELECT lang, count(*) FROM ch_act_version GROUP BY lang").rows()).keys() == {"de", "fr"}


def _run_window(instance: dg.DagsterInstance, run_id: str) -> tuple[float, float]:
    times = {
        r.dagster_event_type: r.timestamp
        for r in instance.all_logs(run_id)
        if r.dagster_event_type in (dg.DagsterEventType.RUN_START, dg.DagsterEventType.RUN_SUCCESS)
    }
    return times[dg.DagsterEventType.RUN_START], times[dg.DagsterEventType.RUN_SUCCESS]


def test_the_run_queue_runs_the_language_builds_one_after_another(base_env, dagster_home, spawn, monkeypatch):
    """Schedules, sensors and backfills submit to the run queue. With the shipped instance the
    daemon starts one run that writes the store at a time, and that run owns the pool to its end:
    two language builds queued together run one after the other, and both succeed. Another
    process holds the store at first, so the first run is still in progress when the queue
    decides about the second."""
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    workspace = str(Path(__file__).resolve().parents[2] / "workspace.yaml")
    store = Store(Path(base_env["CHPIT_DATA_DIR"]) / "chpit.duckdb")
    set_up_instance(spawn, base_env)
    for lang in ("de", "fr"):  # both queued before the daemon starts: it finds them together
        launch = spawn(
            [
                sys.executable,
                "-m",
                "dagster",
                "job",
                "launch",
                "-w",
                workspace,
                "-j",
                "build",
                "--tags",
                json.dumps({"dagster/partition": lang}),
            ],
            base_env,
            f"launch-{lang}",
        )
        launch.wait_ok(timeout=120)
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance, ExitStack() as holder:
        assert [r.status for r in instance.get_runs()] == [dg.DagsterRunStatus.QUEUED] * 2
        # The queue learns a pool's default limit during its first pass and only applies it from the
        # next (Dagster 1.13); the limit is recorded here as any earlier run would have recorded it.
        instance.event_log_storage.initialize_concurrency_limit_to_default(POOL)
        holder.enter_context(store.connect())  # a writer elsewhere: the first run waits for it
        daemon = {
            "daemon": spawn(
                [str(Path(sys.executable).with_name("dagster-daemon")), "run", "-w", workspace], base_env, "daemon"
            )
        }
        _wait_until(
            lambda: any(r.status == dg.DagsterRunStatus.STARTED for r in instance.get_runs()), daemon, "no run started"
        )
        time.sleep(3)  # the daemon dequeues every few seconds: time enough to start the second, were it allowed
        assert sorted(r.status.value for r in instance.get_runs()) == ["QUEUED", "STARTED"]
        holder.close()
        _wait_until(lambda: all(r.is_finished for r in instance.get_runs()), daemon, "the queued runs did not finish")
        runs = instance.get_runs()
        assert {r.tags["dagster/partition"]: r.status for r in runs} == {
            "de": dg.DagsterRunStatus.SUCCESS,
            "fr": dg.DagsterRunStatus.SUCCESS,
        }
        first, second = sorted(_run_window(instance, r.run_id) for r in runs)
    assert first[1] <= second[0], "the two build runs were in progress at the same time"
