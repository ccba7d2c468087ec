"""One asset backfill per invocation: what `make run`, the CLI, the nightly schedule and the
new-edition sensor all request, and the driver that carries it to the end without a daemon.

Why a backfill (docs/operations.md, "One backfill"): an asset backfill respects the partition
mappings of the graph and materialises an unpartitioned asset once, after every upstream
partition it covers, so the chain build[lang] -> build_report -> oracle_gate -> results[system|lang]
-> report -> publish_gate -> hf_dataset is executed by Dagster itself, each stage a real run of
the implicit asset job on the configured executor, with per-asset, per-partition status in the
UI's Backfills tab. A failed step or blocking check fails its asset partitions and Dagster never
requests anything downstream of them.

Dagster 1.13's only public way to create an asset backfill is its GraphQL API (a running
webserver); a schedule or sensor requests one with `RunRequest.for_asset_graph_subset`, whose
argument type is not exported. This module is therefore the one place that names Dagster's
backfill internals (tests/test_public_dagster_api.py names it as the exception): building the
asset-graph subset, adding the backfill, and `drive`, which runs the daemon's own iterations
(backfill, run queue, run monitoring) in this process at a short interval, so a CLI invocation
finishes in seconds per stage instead of the daemon's fixed 30 s per backfill step. When a
`dagster-daemon` is already running on the instance, `drive` leaves the work to it and only waits.
"""

from __future__ import annotations

import logging
import multiprocessing.connection
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import dagster as dg

# Dagster's backfill machinery (see the module docstring for why these are not public imports).
from dagster._core.definitions.assets.graph.asset_graph_subset import AssetGraphSubset
from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.utils import make_new_backfill_id
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import InProcessWorkspaceLoadTarget, WorkspaceFileTarget
from dagster._daemon.backfill import execute_backfill_iteration
from dagster._daemon.monitoring.run_monitoring import execute_run_monitoring_iteration
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon

from chpit_assets.orchestration.launcher import ForkingRunLauncher, with_kept_engines
from chpit_assets.orchestration.stages import CHAIN, StageFailure
from chpit_assets.orchestration.target import Target

WORKSPACE_FILE = Path(__file__).resolve().parents[2] / "workspace.yaml"
BACKFILL_TAG = "dagster/backfill"
DRIVE_SECONDS = 0.5
"""How often the driver polls a backfill that a running daemon carries (and the progress bars' refresh)."""
WATCH_SECONDS = 0.1
"""How often the driver looks at its backfill's runs between iterations: a run that ends (or a status
that changes) triggers the next iteration at once, so the next stage starts about this long after it;
when the run's worker is one this process launched, as soon as the worker exits (`_pause`)."""
RESCAN_SECONDS = 2.0
"""The longest the driver waits without an iteration even when nothing it watches changed (a
concurrency slot freed by a run of another backfill, a worker that died without a status)."""

DONE = {
    BulkActionStatus.COMPLETED,
    BulkActionStatus.COMPLETED_SUCCESS,
    BulkActionStatus.COMPLETED_FAILED,
    BulkActionStatus.FAILED,
    BulkActionStatus.CANCELED,
}
DONE_VALUES = frozenset(s.value for s in DONE)
IN_PROGRESS = (dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING)
"""A run launched and not yet ended: it holds its pool slots."""


def subset(target: Target, asset_graph) -> AssetGraphSubset:
    """The asset-graph subset of `target`, against the definitions' asset graph."""
    partitioned = {}
    for key, partitions in target.partitioned.items():
        partitions_def = asset_graph.get(key).partitions_def
        partitioned[key] = partitions_def.empty_subset().with_partition_keys(partitions)
    # mypy misreads the serdes-decorated NamedTuple's defaults
    return AssetGraphSubset(partitioned, target.unpartitioned)  # type: ignore[call-arg]


def backfill_request(target: Target, asset_graph, tags: Mapping[str, str]) -> dg.RunRequest:
    """What the schedule and the sensor return: the daemon turns it into one backfill (and
    `python -m chpit_assets nightly` submits the same subset itself)."""
    return dg.RunRequest.for_asset_graph_subset(subset(target, asset_graph), tags=dict(tags))


def submit_subset(
    instance: dg.DagsterInstance, asset_graph_subset, *, tags: Mapping[str, str], run_config: Mapping, title: str
) -> str:
    """Add one asset backfill over the subset to the instance, as the sensor daemon does for a
    backfill request; returns its id."""
    backfill_id = make_new_backfill_id()
    instance.add_backfill(
        PartitionBackfill.from_asset_graph_subset(
            backfill_id=backfill_id,
            backfill_timestamp=time.time(),
            tags=dict(tags),
            dynamic_partitions_store=instance,
            asset_graph_subset=asset_graph_subset,
            title=title,
            description=None,
            run_config=dict(run_config),
        )
    )
    return backfill_id


def status(instance: dg.DagsterInstance, backfill_id: str) -> str:
    backfill = instance.get_backfill(backfill_id)
    return backfill.status.value if backfill is not None else "MISSING"


def failure(instance: dg.DagsterInstance, backfill_id: str) -> StageFailure:
    """Why the backfill itself failed when none of its runs did (Dagster could not process it)."""
    found = instance.get_backfill(backfill_id)
    error = found.error if found is not None else None
    reason = error.message.strip() if error is not None else f"the backfill ended {status(instance, backfill_id)}"
    name = error.cls_name if error is not None and error.cls_name else "BackfillFailed"
    return StageFailure("backfill", CHAIN, "-", backfill_id, name, reason)


def cancel(instance: dg.DagsterInstance, backfill_id: str) -> None:
    """Ask Dagster to cancel a backfill (its queued runs are dropped, running ones terminated)."""
    backfill = instance.get_backfill(backfill_id)
    if backfill is not None and backfill.status not in DONE:
        instance.update_backfill(backfill.with_status(BulkActionStatus.CANCELING))


def prestart(instance: dg.DagsterInstance) -> None:
    """Get the run launcher ready for the runs this process is about to launch (the fork server's
    import of the code, orchestration/launcher.py) while the backfill is submitted and planned.
    Nothing when a daemon launches the runs."""
    launcher = instance.run_launcher
    if isinstance(launcher, ForkingRunLauncher) and not daemon_running(instance):
        launcher.prestart()


def daemon_running(instance: dg.DagsterInstance) -> bool:
    """A `dagster-daemon` heartbeat for the backfill daemon within the last minute."""
    beats = instance.get_daemon_heartbeats()
    beat = beats.get("BACKFILL")
    return beat is not None and time.time() - beat.timestamp < 60


@contextmanager
def _workspace(instance: dg.DagsterInstance) -> Iterator[WorkspaceProcessContext]:
    # The code locations workspace.yaml declares, loaded in this process (which has imported the
    # definitions already) rather than in a code server started for the command: the backfill and
    # the run queue only read the asset graph and the jobs' origins from it, and the instance's run
    # launcher forks each run itself (orchestration/launcher.py). The runs' origins name the same
    # location, module and folder as the webserver's and the daemon's code server.
    here = []
    for declared in WorkspaceFileTarget(paths=[str(WORKSPACE_FILE)]).create_origins():
        target = declared.loadable_target_origin.as_dict
        # workspace.yaml's folder is relative to the file, not to wherever the command was started
        target["working_directory"] = str((WORKSPACE_FILE.parent / target.get("working_directory", ".")).resolve())
        here.append(InProcessCodeLocationOrigin(LoadableTargetOrigin(**target), location_name=declared.location_name))
    with WorkspaceProcessContext(instance, InProcessWorkspaceLoadTarget(here)) as context:
        yield context


def drive(
    instance: dg.DagsterInstance,
    backfill_id: str,
    on_run_done: Callable[[dg.DagsterRun], None],
    *,
    interval: float = DRIVE_SECONDS,
    rescan: float = RESCAN_SECONDS,
    interrupted: threading.Event | None = None,
) -> str:
    """Carry the backfill to its end, reporting each of its runs as it ends; returns the final status.
    Without a daemon, the daemon's iterations run here whenever the backfill or a run changes status
    (at the latest every `rescan` seconds); with one, its progress is polled every `interval`.
    KeyboardInterrupt is raised here too once `interrupted` is set: a Ctrl-C whose own exception
    was lost (invocation.interrupts_at_once), at the latest at the next poll and before the final
    status is returned."""
    logger = logging.getLogger("chpit.backfill")
    logger.setLevel(logging.WARNING)
    reported: set[str] = set()

    def report_finished() -> None:
        ended = [r for r in runs_of(instance, backfill_id) if r.is_finished and r.run_id not in reported]
        for run in sorted(ended, key=lambda r: (_ended_at(instance, r), r.run_id)):
            reported.add(run.run_id)
            on_run_done(run)

    if daemon_running(instance):
        while status(instance, backfill_id) not in DONE_VALUES:
            _raise_if_set(interrupted)
            report_finished()
            time.sleep(interval)
        _raise_if_set(interrupted)
        report_finished()
        return status(instance, backfill_id)
    queue = QueuedRunCoordinatorDaemon(interval_seconds=interval)
    # The iterations and the polls between them are over 1,000 storage queries a nightly: each file
    # reached through one engine that keeps its connections open (launcher.with_kept_engines;
    # `instance` is that instance from here on, in report_finished too). Measured on one rebuild
    # restored and run alternately: 1.1 s less a nightly for the engine alone, the runs included
    # (the polls no longer take their CPU).
    with driving_instance(instance) as instance, _workspace(instance) as context:
        if isinstance(instance.run_launcher, ForkingRunLauncher):
            instance.run_launcher.keep_standby()  # this process launches the runs, one after another
        gates = _gates(context.create_request_context().asset_graph, instance.get_backfill(backfill_id))

        def launch() -> None:
            for _ in queue.run_iteration(context):
                pass

        while True:
            _raise_if_set(interrupted)  # never an iteration after a press: it would see the runs it failed
            # Taken before the iteration: a run that ends while it runs is acted on at once, not at
            # the next rescan (the iteration may have looked before it ended).
            seen = _state(instance, backfill_id, gates)
            # The queue first: when a run has just ended, the next queued one is launched before the
            # backfill iteration (a few tenths of a second) looks at what the ended run materialised;
            # and again after it, for the runs that iteration requested.
            launch()
            with _launching_meanwhile(lambda: _waiting(instance, backfill_id), launch):
                for _ in execute_backfill_iteration(context, logger):
                    pass
            launch()
            for _ in execute_run_monitoring_iteration(context, logger):
                pass
            report_finished()
            current = status(instance, backfill_id)
            if current in DONE_VALUES and not _active(instance, backfill_id):
                report_finished()
                _raise_if_set(interrupted)
                return current
            _wait_for_change(instance, backfill_id, rescan, gates, seen, interrupted)


@contextmanager
def driving_instance(instance: dg.DagsterInstance) -> Iterator[dg.DagsterInstance]:
    """The instance to drive a backfill with: on Dagster's default SQLite storage, the same instance
    opened again with one engine and connection pool per file, as a run worker opens it; otherwise
    `instance` itself."""
    ref = instance.get_ref()
    kept = with_kept_engines(ref)
    if kept is ref or kept is None:
        yield instance
        return
    with dg.DagsterInstance.from_ref(kept) as driving:
        yield driving


@contextmanager
def ticking(interval: float, tick: Callable[[], None], name: str) -> Iterator[None]:
    """Call `tick` every `interval` seconds from a thread of its own while the body runs; stopped and
    joined when the body ends."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(interval):
            tick()

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@contextmanager
def _launching_meanwhile(waiting: Callable[[], tuple[int, int]], launch: Callable[[], None]) -> Iterator[None]:
    """While the backfill iteration runs in this thread, `launch` (the run queue's iteration) from a
    second thread whenever one of the backfill's runs waits for it, as the daemon's run queue thread
    would. `waiting` gives the backfill's (queued, in progress) run counts; a queued run is launched
    when more are queued than at the last look, or when one in progress has ended since (it may have
    freed the pool slot the queued one waits for). The iteration submits every run it requests before
    it returns (the first nightly iteration: three language runs, 0.5-1.5 s and more under load), so
    without this the first run waited for the last to be planned; and a run that ended during an
    iteration (the rescan's, 0.1-0.2 s) left the next one queued until the iteration returned (issue
    27.2). The iteration itself stays in this thread, where Ctrl-C interrupts it at once
    (invocation.interrupts_at_once)."""
    seen = (0, 0)

    def tick() -> None:
        nonlocal seen
        queued, in_progress = now = waiting()
        if queued and (queued > seen[0] or in_progress < seen[1]):
            launch()
        seen = now

    with ticking(WATCH_SECONDS, tick, "chpit-run-queue"):
        yield


def _waiting(instance: dg.DagsterInstance, backfill_id: str) -> tuple[int, int]:
    """The backfill's runs that are queued, and those launched and not yet ended."""
    return _count(instance, backfill_id, dg.DagsterRunStatus.QUEUED), _count(instance, backfill_id, *IN_PROGRESS)


def _count(instance: dg.DagsterInstance, backfill_id: str, *statuses: dg.DagsterRunStatus) -> int:
    return instance.get_runs_count(dg.RunsFilter(statuses=list(statuses), tags={BACKFILL_TAG: backfill_id}))


def _gates(asset_graph, backfill: PartitionBackfill | None) -> list[dg.AssetKey]:
    """The backfill's assets whose materialisation lets it request a run of its own while the run that
    materialised it goes on: those with a child in the backfill that is partitioned otherwise
    (core_split, whose last language lets build_report's run start while that language's
    search_track still runs). A child partitioned alike is executed in its parent's run; an asset
    outside the backfill is never requested by it."""
    data = backfill.asset_backfill_data if backfill is not None else None
    if data is None:
        return []
    # Only what the code location still defines: a backfill submitted by an older version may name more.
    target = {key for key in data.target_subset.asset_keys if asset_graph.has(key)}
    gates = {
        key
        for key in target
        for child in asset_graph.get(key).child_keys
        if child in target and asset_graph.get(child).partitions_def != asset_graph.get(key).partitions_def
    }
    return sorted(gates, key=lambda key: key.to_user_string())


def _state(instance: dg.DagsterInstance, backfill_id: str, gates: Sequence[dg.AssetKey] = ()) -> tuple:
    """What gives an iteration something to act on, none of which an iteration causes itself: the
    backfill's status, the backfill's runs that have ended, and the last materialisation of each of
    its `gates`."""
    ended = frozenset((r.run_id, r.status.value) for r in runs_of(instance, backfill_id) if r.is_finished)
    landed = (
        tuple(r.asset_entry.last_materialization_storage_id for r in instance.get_asset_records(gates)) if gates else ()
    )
    return status(instance, backfill_id), ended, landed


def _wait_for_change(
    instance: dg.DagsterInstance,
    backfill_id: str,
    rescan: float,
    gates: Sequence[dg.AssetKey] = (),
    seen: tuple | None = None,
    interrupted: threading.Event | None = None,
) -> None:
    """Return as soon as the backfill's status changes, one of its runs ends or one of its `gates`
    materialises after `seen` (the state the last iteration started from; now, when None), and at
    the latest after `rescan` seconds. Between runs nothing changes for seconds; the iterations then
    cost CPU the running step needs (0.1-0.4 s each on 2 shared cores) and a fixed interval made
    every stage wait for the next tick. A gate's materialisation lets the next stage's run start
    before the run that made it ends (build_report during the last language's search_track; issue
    27.2). A change during the last iteration counts: measured, a report run that ended while the
    iteration ran left the finished backfill waiting for the 2 s rescan on two of four rebuilds timed.
    Raises KeyboardInterrupt once `interrupted` is set (see `drive`)."""
    start = time.monotonic()
    seen = _state(instance, backfill_id, gates) if seen is None else seen
    while time.monotonic() - start < rescan:
        _raise_if_set(interrupted)
        if _state(instance, backfill_id, gates) != seen:
            return
        _pause(instance, WATCH_SECONDS)


def _raise_if_set(interrupted: threading.Event | None) -> None:
    if interrupted is not None and interrupted.is_set():
        raise KeyboardInterrupt


def _pause(instance: dg.DagsterInstance, seconds: float) -> None:
    """Sleep `seconds`, or less when a run worker this process launched ends: a worker exits right
    after it writes its run's final status, so the next stage starts then rather than at the next
    look (half a `WATCH_SECONDS` later on average, four times a nightly; issue 27.2)."""
    launcher = instance.run_launcher
    sentinels = launcher.worker_sentinels() if isinstance(launcher, ForkingRunLauncher) else []
    if sentinels:
        multiprocessing.connection.wait(sentinels, seconds)
    else:
        time.sleep(seconds)


def _active(instance: dg.DagsterInstance, backfill_id: str) -> bool:
    return any(not r.is_finished for r in runs_of(instance, backfill_id))


def _ended_at(instance: dg.DagsterInstance, run: dg.DagsterRun) -> float:
    record = instance.get_run_record_by_id(run.run_id)
    return (record.end_time or 0.0) if record is not None else 0.0


def runs_of(instance: dg.DagsterInstance, backfill_id: str) -> Sequence[dg.DagsterRun]:
    return instance.get_runs(dg.RunsFilter(tags={BACKFILL_TAG: backfill_id}))


def covered(asset_graph_subset) -> dict[str, list[str] | None]:
    """What a backfill subset covers, as plain data: asset key -> sorted partition keys (None: unpartitioned)."""
    found: dict[str, list[str] | None] = {
        key.to_user_string(): sorted(partitions.get_partition_keys())
        for key, partitions in asset_graph_subset.partitions_subsets_by_asset_key.items()
    }
    found.update({key.to_user_string(): None for key in asset_graph_subset.non_partitioned_asset_keys})
    return dict(sorted(found.items()))
