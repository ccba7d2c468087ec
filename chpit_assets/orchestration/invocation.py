"""One invocation of the pipeline from a shell (`make run`, `python -m chpit_assets run|nightly`):
one asset backfill, driven to its end in this process, each stage printed as its run ends.

Per instance one driver at a time (a lock in $DAGSTER_HOME): a second invocation says which
backfill and process it waits for, then goes on. A backfill whose driver died (kill -9, a lost
shell) is cancelled by the next driver before it submits its own, so two invocations never race
for the same partitions. Ctrl-C cancels the backfill (Dagster terminates its runs), waits for it to
settle and reports what was kept.

On a terminal the steps' progress (issue 23.8: each model answer, each edition fetched or parsed)
is drawn as one bar per running step: the steps log it in their own processes (`stages.Progress`),
and a thread of this one reads it from the event log while the backfill is driven.
"""

from __future__ import annotations

import fcntl
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import dagster as dg
from tqdm import tqdm

from . import backfill
from .processes import local_pid, process_alive, process_tag
from .stages import Progress, StageFailure, failures_of, progress_since, stage_of

DRIVER_TAG = "chpit/driver"
LOCK_NAME = "chpit-driver.lock"
SUCCESS = "COMPLETED_SUCCESS"


@dataclass
class Outcome:
    backfill_id: str
    status: str
    runs: list[dg.DagsterRun] = field(default_factory=list)
    failures: list[StageFailure] = field(default_factory=list)
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        return not self.failures and not self.interrupted and self.status == SUCCESS


def driver_id() -> str:
    return process_tag()


@contextmanager
def driver_lock(home: Path, echo: Callable[[str], None]) -> Iterator[Path]:
    """Hold the instance's driver lock; say what we wait for when another invocation holds it."""
    path = home / LOCK_NAME
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another invocation"
            echo(f"waiting: {holder} is driving a backfill on this instance ({path})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield path
        handle.truncate(0)


def _note_holder(lock: Path, backfill_id: str) -> None:
    lock.write_text(json.dumps({"backfill": backfill_id, "driver": driver_id()}) + "\n", encoding="utf-8")


def _driver_alive(tag: str) -> bool:
    pid = local_pid(tag)
    return pid is None or process_alive(pid)  # another machine's driver is not ours to judge


def cancel_orphans(instance: dg.DagsterInstance, echo: Callable[[str], None]) -> list[str]:
    """Cancel every unfinished backfill whose driving process is gone, and let it settle."""
    orphans = [
        b.backfill_id
        for b in instance.get_backfills()
        if b.status not in backfill.DONE and DRIVER_TAG in b.tags and not _driver_alive(b.tags[DRIVER_TAG])
    ]
    for backfill_id in orphans:
        echo(f"backfill {backfill_id}: its driver is gone; cancelling it first")
        backfill.cancel(instance, backfill_id)
        backfill.drive(instance, backfill_id, lambda run: None)
    return orphans


class Bars:
    """One tqdm bar per (step, what it counts), drawn from the `Progress` its run logged."""

    def __init__(self, file: IO[str]):
        self.file = file
        self._bars: dict[tuple[str, str], tqdm] = {}
        self._lock = threading.Lock()

    def show(self, run_id: str, stage: str, progress: Progress) -> None:
        with self._lock:
            bar = self._bars.get((run_id, progress.what))
            if bar is None:
                # The first count seen may be well along (a fast step): the rate counts from it.
                bar = tqdm(
                    total=progress.total,
                    initial=progress.done,
                    desc=f"{stage}: {progress.what}",
                    file=self.file,
                    leave=False,
                )
                self._bars[(run_id, progress.what)] = bar
            bar.total = progress.total
            bar.n = progress.done
            bar.refresh()

    def end(self, run_id: str) -> None:
        """A run ended: its bars go (its stage line follows)."""
        with self._lock:
            for key in [k for k in self._bars if k[0] == run_id]:
                self._bars.pop(key).close()
            # A bar below the first one clears its line and leaves the cursor at its end.
            self.file.write("\r")
            self.file.flush()

    def write(self, echo: Callable[[str], None], line: str) -> None:
        """`echo(line)` with the bars lifted off the terminal and drawn again below it. Both streams
        are flushed in turn: the bars' stderr and the lines' stdout share one terminal."""
        with self._lock, tqdm.external_write_mode(file=self.file):
            self.file.flush()
            echo(line)
            sys.stdout.flush()

    def close(self) -> None:
        for run_id in {k[0] for k in self._bars}:
            self.end(run_id)


class ProgressWatch:
    """Reads the progress lines of a backfill's runs from the event log, for `Bars`."""

    def __init__(self, instance: dg.DagsterInstance, backfill_id: str, bars: Bars):
        self.instance, self.backfill_id, self.bars = instance, backfill_id, bars
        self._cursors: dict[str, str | None] = {}
        self._ended: set[str] = set()

    def poll(self) -> None:
        for run in backfill.runs_of(self.instance, self.backfill_id):
            if run.run_id in self._ended:
                continue
            lines, self._cursors[run.run_id] = progress_since(self.instance, run.run_id, self._cursors.get(run.run_id))
            if run.is_finished:
                self._ended.add(run.run_id)
                self.bars.end(run.run_id)
            elif lines:
                self.bars.show(run.run_id, stage_of(run), lines[-1])

    @contextmanager
    def running(self, interval: float = backfill.DRIVE_SECONDS) -> Iterator[None]:
        """Poll in a thread of its own while the body drives the backfill."""
        try:
            with backfill.ticking(interval, self.poll, "chpit-progress"):
                yield
        finally:
            self.bars.close()


@contextmanager
def interrupts_at_once() -> Iterator[threading.Event]:
    """Ctrl-C raises KeyboardInterrupt at once, wherever the driver is. Dagster runs each backfill
    iteration under `asyncio.run`, whose own SIGINT handler only cancels its task at the next await:
    the iteration went on and, seeing the runs the same Ctrl-C had just failed, could end the
    backfill COMPLETED_FAILED before it was cancelled. (An ignored SIGINT, `nohup`, stays ignored.)

    Each press is also set on the event yielded, for `backfill.drive` to check: a KeyboardInterrupt
    raised while this thread runs a garbage collector's callback is printed as "Exception ignored"
    and lost (seen in CI, inside SQLAlchemy's `_collection_gced`), and the backfill then ran on to
    COMPLETED_FAILED with the runs the same Ctrl-C had failed."""
    pressed = threading.Event()
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield pressed
        return

    def interrupt(signum, frame):
        pressed.set()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, previous)


def invoke(
    instance: dg.DagsterInstance,
    subset,
    *,
    tags: Mapping[str, str],
    run_config: Mapping,
    title: str,
    echo: Callable[[str], None] = print,
    progress: IO[str] | None = sys.stderr,
) -> Outcome:
    """Submit one backfill over `subset` (an asset-graph subset) and drive it; the outcome says how it
    ended. Progress bars are drawn on `progress` when it is a terminal (nothing otherwise)."""
    home = Path(instance.root_directory)
    backfill.prestart(instance)
    with driver_lock(home, echo) as lock:
        cancel_orphans(instance, echo)
        backfill_id = backfill.submit_subset(
            instance, subset, tags={**tags, DRIVER_TAG: driver_id()}, run_config=run_config, title=title
        )
        _note_holder(lock, backfill_id)
        echo(f"backfill {backfill_id}: {title}")
        bars = Bars(progress) if progress is not None and progress.isatty() else None
        say = (lambda line: bars.write(echo, line)) if bars is not None else echo
        watch = ProgressWatch(instance, backfill_id, bars).running() if bars is not None else nullcontext()

        def done(run: dg.DagsterRun) -> None:
            verdict = "ok" if run.status == dg.DagsterRunStatus.SUCCESS else "FAILED"
            say(f"{stage_of(run)}: {verdict} (run {run.run_id})")

        interrupted = False
        with watch, interrupts_at_once() as pressed:
            try:
                status = backfill.drive(instance, backfill_id, done, interrupted=pressed)
            except KeyboardInterrupt:
                interrupted = True
                pressed.clear()
                say(f"interrupted: cancelling backfill {backfill_id} (a second Ctrl-C stops at once)")
                backfill.cancel(instance, backfill_id)
                status = backfill.drive(instance, backfill_id, done, interrupted=pressed)
        runs = sorted(backfill.runs_of(instance, backfill_id), key=lambda r: r.run_id)
        failures = failures_of(instance, runs)
        if status != SUCCESS and not failures and not interrupted:
            failures.append(backfill.failure(instance, backfill_id))
        return Outcome(backfill_id, status, list(runs), failures, interrupted)
