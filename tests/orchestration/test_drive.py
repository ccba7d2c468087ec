"""The backfill driver's wait between iterations (issue 27.2): it wakes when the backfill or one of
its runs changes status, and at the latest after `rescan` seconds. A fake clock, so no test waits."""

from __future__ import annotations

import threading
import time
import uuid

import dagster as dg
import pytest

from chpit_assets.orchestration import backfill


class Clock:
    """time.monotonic and time.sleep for the driver: each sleep advances the clock, and may act."""

    def __init__(self, on_sleep=None):
        self.now, self.sleeps, self.on_sleep = 0.0, 0, on_sleep

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.sleeps += 1
        if self.on_sleep is not None:
            self.on_sleep(self.sleeps)


@pytest.fixture
def instance():
    with dg.instance_for_test() as instance:
        yield instance


def _run(instance: dg.DagsterInstance, backfill_id: str) -> dg.DagsterRun:
    run = dg.DagsterRun(
        job_name="probe",
        run_id=str(uuid.uuid4()),
        status=dg.DagsterRunStatus.STARTED,
        tags={backfill.BACKFILL_TAG: backfill_id},
    )
    return instance.add_run(run)


def test_the_driver_wakes_as_soon_as_a_run_of_its_backfill_ends(instance, monkeypatch) -> None:
    run = _run(instance, "b1")
    _run(instance, "other")  # a run of another backfill is not watched

    def end_at_third(sleeps: int) -> None:
        if sleeps == 3:
            instance.report_run_failed(run)

    clock = Clock(end_at_third)
    monkeypatch.setattr(backfill, "time", clock)
    backfill._wait_for_change(instance, "b1", rescan=60.0)
    assert clock.sleeps == 3


def test_a_change_of_another_backfills_run_does_not_wake_it_but_the_rescan_does(instance, monkeypatch) -> None:
    _run(instance, "b1")
    other = _run(instance, "other")
    clock = Clock(lambda sleeps: instance.report_run_failed(other) if sleeps == 1 else None)
    monkeypatch.setattr(backfill, "time", clock)
    backfill._wait_for_change(instance, "b1", rescan=1.0)
    assert 1.0 <= clock.now < 1.0 + 2 * backfill.WATCH_SECONDS  # not woken at the first sleep


def test_a_run_that_ended_during_the_last_iteration_wakes_it_at_once(instance, monkeypatch) -> None:
    """Issue 27.2: the state the driver compares with is the one its last iteration started from. A
    run that ended while that iteration ran (it may have looked before) is acted on now; taken after
    the iteration, it left a finished backfill waiting for the rescan on two of four rebuilds timed."""
    run = _run(instance, "b1")
    seen = backfill._state(instance, "b1")  # before the iteration
    instance.report_run_failed(run)  # during it
    clock = Clock()
    monkeypatch.setattr(backfill, "time", clock)
    backfill._wait_for_change(instance, "b1", rescan=60.0, seen=seen)
    assert clock.sleeps == 0


def test_a_run_that_starts_does_not_wake_it(instance, monkeypatch) -> None:
    """What an iteration causes itself (the runs it requested being launched) is nothing to act on:
    otherwise each iteration would be followed by another."""
    run = _run(instance, "b1")
    seen = backfill._state(instance, "b1")
    instance.run_storage.handle_run_event(
        run.run_id, dg.DagsterEvent(dg.DagsterEventType.RUN_START.value, job_name="probe")
    )
    clock = Clock()
    monkeypatch.setattr(backfill, "time", clock)
    backfill._wait_for_change(instance, "b1", rescan=1.0, seen=seen)
    assert clock.now >= 1.0  # only the rescan woke it


@dg.asset(partitions_def=dg.StaticPartitionsDefinition(["de", "fr"]))
def parsed() -> None: ...


@dg.asset(partitions_def=dg.StaticPartitionsDefinition(["de", "fr"]), deps=[parsed])
def split() -> None: ...


@dg.asset(deps=[split])
def summary() -> None: ...


@dg.asset(deps=[summary])
def published() -> None: ...


def _submitted(instance: dg.DagsterInstance, graph, partitioned: list[str], whole: list[str]) -> str:
    from chpit_assets.orchestration.target import Target

    target = Target({dg.AssetKey(k): ["de", "fr"] for k in partitioned}, {dg.AssetKey(k) for k in whole})
    return backfill.submit_subset(instance, backfill.subset(target, graph), tags={}, run_config={}, title="gates")


def test_a_gate_is_an_asset_of_the_backfill_with_a_child_in_it_partitioned_otherwise(instance) -> None:
    graph = dg.Definitions(assets=[parsed, split, summary, published]).resolve_asset_graph()
    everything = _submitted(instance, graph, ["parsed", "split"], ["summary", "published"])
    # parsed -> split: partitioned alike, one run; summary -> published: both unpartitioned, one run
    assert backfill._gates(graph, instance.get_backfill(everything)) == [dg.AssetKey("split")]
    languages_only = _submitted(instance, graph, ["parsed", "split"], [])
    assert backfill._gates(graph, instance.get_backfill(languages_only)) == []  # summary is not requested
    assert backfill._gates(graph, None) == []
    # Submitted against a graph that had `summary` and `published`; the code location no longer defines them.
    languages = dg.Definitions(assets=[parsed, split]).resolve_asset_graph()
    assert backfill._gates(languages, instance.get_backfill(everything)) == []


def test_a_gate_that_materialises_wakes_it_before_its_run_ends(instance, monkeypatch) -> None:
    """build_report's run starts during the last language's search_track, once that language's
    core_split has materialised (issue 27.2), not after the language's run has ended."""
    _run(instance, "b1")  # the language run, still going
    gates = [dg.AssetKey("split")]
    seen = backfill._state(instance, "b1", gates)

    def lands_at_second(sleeps: int) -> None:
        if sleeps == 2:
            instance.report_runless_asset_event(dg.AssetMaterialization("split", partition="fr"))

    clock = Clock(lands_at_second)
    monkeypatch.setattr(backfill, "time", clock)
    backfill._wait_for_change(instance, "b1", rescan=60.0, gates=gates, seen=seen)
    assert clock.sleeps == 2
    other = Clock(lambda sleeps: instance.report_runless_asset_event(dg.AssetMaterialization("parsed", partition="de")))
    monkeypatch.setattr(backfill, "time", other)
    backfill._wait_for_change(instance, "b1", rescan=1.0, gates=gates)
    assert other.now >= 1.0  # another asset's materialisation is not a gate's


def _wait_until(condition) -> None:
    deadline = time.monotonic() + 30
    while not condition() and time.monotonic() < deadline:
        time.sleep(backfill.WATCH_SECONDS / 2)


def test_runs_the_backfill_iteration_submits_are_launched_before_it_returns() -> None:
    """Issue 27.2: a run queued while the backfill iteration still plans others goes to the run queue
    at once, not after the iteration (the first run of a nightly waited for the last to be planned)."""
    waiting, launched = [0, 0], []
    with backfill._launching_meanwhile(lambda: tuple(waiting), lambda: launched.append(tuple(waiting))):
        time.sleep(backfill.WATCH_SECONDS * 4)
        assert launched == []  # nothing queued: the queue is left alone
        waiting[0] = 1
        _wait_until(lambda: launched)
        assert launched == [(1, 0)]  # while the iteration (this block) still runs
        waiting[:] = [0, 1]  # the queue launched it
        time.sleep(backfill.WATCH_SECONDS * 4)
        assert launched == [(1, 0)]  # fewer queued runs: nothing to launch
    time.sleep(backfill.WATCH_SECONDS * 4)
    waiting[0] = 2
    time.sleep(backfill.WATCH_SECONDS * 4)
    assert launched == [(1, 0)]  # the watcher stopped with the iteration


def test_a_run_that_ends_during_the_iteration_lets_the_queued_one_start_before_it_returns() -> None:
    """Issue 27.2: the next language run waited up to a whole iteration (the rescan's, 0.1-0.2 s) after
    the previous one ended; it is launched when the run holding the pool slot ends."""
    waiting, launched = [1, 1], []  # one run in progress, the next queued behind its pool slot
    with backfill._launching_meanwhile(lambda: tuple(waiting), lambda: launched.append(tuple(waiting))):
        _wait_until(lambda: launched)
        assert launched == [(1, 1)]  # more queued than before the iteration: the queue is asked once
        time.sleep(backfill.WATCH_SECONDS * 4)
        assert launched == [(1, 1)]  # the slot is still held: nothing changed, the queue is left alone
        waiting[1] = 0  # the run in progress ended
        _wait_until(lambda: len(launched) > 1)
        assert launched == [(1, 1), (1, 0)]
        waiting[:] = [0, 1]  # the queue launched it
        time.sleep(backfill.WATCH_SECONDS * 4)
        waiting[1] = 0  # it ended with nothing queued behind it: nothing to launch
        time.sleep(backfill.WATCH_SECONDS * 4)
        assert launched == [(1, 1), (1, 0)]


def test_a_run_in_progress_is_one_launched_and_not_ended_of_the_same_backfill(instance) -> None:
    def moved(run: dg.DagsterRun, event: dg.DagsterEventType) -> None:
        instance.run_storage.handle_run_event(run.run_id, dg.DagsterEvent(event.value, job_name="probe"))

    started, starting, ended = _run(instance, "b1"), _run(instance, "b1"), _run(instance, "b1")
    moved(starting, dg.DagsterEventType.RUN_STARTING)
    moved(ended, dg.DagsterEventType.RUN_SUCCESS)
    _run(instance, "other")
    assert backfill._waiting(instance, "b1") == (0, 2)
    moved(started, dg.DagsterEventType.RUN_CANCELING)
    assert backfill._waiting(instance, "b1") == (0, 2)  # still holds its pool slot
    moved(started, dg.DagsterEventType.RUN_CANCELED)
    assert backfill._waiting(instance, "b1") == (0, 1)


def test_the_driver_reaches_the_sqlite_files_through_kept_engines_and_writes_where_dagster_reads(instance) -> None:
    with backfill.driving_instance(instance) as driving:
        assert driving is not instance
        assert type(driving.run_storage).__name__ == "KeptEnginesSqliteRunStorage"
        assert type(driving.event_log_storage).__name__ == "KeptEnginesSqliteEventLogStorage"
        run = _run(driving, "b1")
        driving.report_engine_event("from the driver", run)
        assert [r.run_id for r in backfill.runs_of(instance, "b1")] == [run.run_id]
        assert [e.message for e in instance.all_logs(run.run_id)] == ["from the driver"]


FORKING = {"run_launcher": {"module": "chpit_assets.orchestration.launcher", "class": "ForkingRunLauncher"}}


def test_the_driver_wakes_when_a_run_worker_it_launched_exits() -> None:
    """Issue 27.2: a worker exits right after it writes its run's final status; the driver looks then,
    not at its next look (which this pause would put ten minutes away)."""
    with dg.instance_for_test(overrides=FORKING) as instance:
        launcher = instance.run_launcher
        worker = launcher._fork_server().Process(target=time.sleep, args=(0.5,))
        worker.start()
        launcher._workers["r1"] = worker
        assert launcher.worker_sentinels() == [worker.sentinel]
        start = time.monotonic()
        backfill._pause(instance, 600.0)
        assert worker.exitcode == 0  # it ended ...
        assert time.monotonic() - start < 300  # ... and woke the pause
        assert launcher.worker_sentinels() == []


def test_without_a_live_worker_the_driver_sleeps_as_before(monkeypatch) -> None:
    with dg.instance_for_test(overrides=FORKING) as forking, dg.instance_for_test() as default:
        for instance in (forking, default):
            clock = Clock()
            monkeypatch.setattr(backfill, "time", clock)
            backfill._pause(instance, backfill.WATCH_SECONDS)
            assert (clock.sleeps, clock.now) == (1, backfill.WATCH_SECONDS)


def test_a_ctrl_c_whose_exception_was_lost_stops_the_wait_at_the_next_poll(instance, monkeypatch) -> None:
    """invocation.interrupts_at_once: a KeyboardInterrupt raised inside a garbage collector's callback
    is dropped by Python; the press is on the event, and the driver raises it itself."""
    _run(instance, "b1")
    pressed = threading.Event()
    clock = Clock(lambda sleeps: pressed.set() if sleeps == 2 else None)
    monkeypatch.setattr(backfill, "time", clock)
    with pytest.raises(KeyboardInterrupt):
        backfill._wait_for_change(instance, "b1", rescan=60.0, interrupted=pressed)
    assert clock.sleeps == 2


def test_a_backfill_that_ended_after_a_lost_ctrl_c_is_reported_interrupted_not_returned(instance, monkeypatch) -> None:
    """The iteration a press was lost in may end the backfill (its runs failed by the same Ctrl-C):
    the driver still raises, so the invocation reports an interruption, not a failed benchmark."""
    graph = dg.Definitions(assets=[parsed, split, summary, published]).resolve_asset_graph()
    backfill_id = _submitted(instance, graph, ["parsed"], [])
    submitted = instance.get_backfill(backfill_id)
    instance.update_backfill(submitted.with_status(type(submitted.status).FAILED))
    pressed = threading.Event()
    assert backfill.drive(instance, backfill_id, lambda run: None, interrupted=pressed) == "FAILED"
    monkeypatch.setattr(backfill, "execute_backfill_iteration", lambda *args: pressed.set() or [])
    with pytest.raises(KeyboardInterrupt):
        backfill.drive(instance, backfill_id, lambda run: None, interrupted=pressed)


def test_no_iteration_starts_after_a_lost_ctrl_c(instance, monkeypatch) -> None:
    """A press lost while the driver waited, just as a run ended (the wait returns on the change):
    the next iteration would see the run the same Ctrl-C failed and end the backfill COMPLETED_FAILED
    instead of it being cancelled."""
    graph = dg.Definitions(assets=[parsed, split, summary, published]).resolve_asset_graph()
    backfill_id = _submitted(instance, graph, ["parsed"], [])
    pressed = threading.Event()
    pressed.set()
    iterations: list[str] = []
    monkeypatch.setattr(backfill, "execute_backfill_iteration", lambda *args: iterations.append("iteration") or [])
    with pytest.raises(KeyboardInterrupt):
        backfill.drive(instance, backfill_id, lambda run: None, interrupted=pressed)
    assert iterations == []
    assert backfill.status(instance, backfill_id) == "REQUESTED"
