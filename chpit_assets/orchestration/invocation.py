"""One invocation of the pipeline from a shell (`make run`, `python -m chpit_assets run|nightly`):
one asset backfill, driven to its end in this process, each stage printed as its run ends.

Per instance one driver at a time (a lock in $DAGSTER_HOME): a second invocation says which
backfill and process it waits for, then goes on. A backfill whose driver died (kill -9, a lost
shell) is cancelled by the next driver before it submits its own, so two invocations never race
for the same partitions. Ctrl-C cancels the backfill (Dagster terminates its runs), waits for it to
settle and reports what was kept.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from . import backfill
from .stages import StageFailure, failures_of, stage_of

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
    return f"{socket.gethostname()}:{os.getpid()}"


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
    host, _, pid = tag.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True  # another machine's driver: not ours to judge
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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


def invoke(
    instance: dg.DagsterInstance,
    subset,
    *,
    tags: Mapping[str, str],
    run_config: Mapping,
    title: str,
    echo: Callable[[str], None] = print,
) -> Outcome:
    """Submit one backfill over `subset` (an asset-graph subset) and drive it; the outcome says how it ended."""
    home = Path(instance.root_directory)
    with driver_lock(home, echo) as lock:
        cancel_orphans(instance, echo)
        backfill_id = backfill.submit_subset(
            instance, subset, tags={**tags, DRIVER_TAG: driver_id()}, run_config=run_config, title=title
        )
        _note_holder(lock, backfill_id)
        echo(f"backfill {backfill_id}: {title}")

        def done(run: dg.DagsterRun) -> None:
            verdict = "ok" if run.status == dg.DagsterRunStatus.SUCCESS else "FAILED"
            echo(f"{stage_of(run)}: {verdict} (run {run.run_id})")

        interrupted = False
        try:
            status = backfill.drive(instance, backfill_id, done)
        except KeyboardInterrupt:
            interrupted = True
            echo(f"interrupted: cancelling backfill {backfill_id} (a second Ctrl-C stops at once)")
            backfill.cancel(instance, backfill_id)
            status = backfill.drive(instance, backfill_id, done)
        runs = sorted(backfill.runs_of(instance, backfill_id), key=lambda r: r.run_id)
        failures = failures_of(instance, runs)
        if status != SUCCESS and not failures and not interrupted:
            failures.append(backfill.failure(instance, backfill_id))
        return Outcome(backfill_id, status, list(runs), failures, interrupted)
