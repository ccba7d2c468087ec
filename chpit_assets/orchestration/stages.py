"""What a backfill's runs did, read from Dagster's own records: the stage each run is, and each
failure as a typed record (the failed step or check, the innermost error's class, its message).

Nothing here parses a string Dagster wrote for people: the stage comes from the run's asset
selection and partition, the failure from the STEP_FAILURE and ASSET_CHECK_EVALUATION events.
Progress during a long step (issue 23.8) is a log line in the one format `Progress` writes and
reads back, so the Dagster UI shows it in the run's logs and the CLI's driver draws it as a bar.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import dagster as dg

PARTITION_TAG = "dagster/partition"
SYSTEM_PARTITION = "|"

BUILD_ROOT = dg.AssetKey("fedlex_catalog")
RESULTS = dg.AssetKey("results")
CHAIN_ORDER = ("build_report", "oracle_gate", "report", "publish_gate", "hf_dataset")
"""The unpartitioned assets in graph order, so a run of several reads as the chain: `report, publish_gate, hf_dataset`."""


@dataclass(frozen=True)
class StageFailure:
    """One failed step or blocking check of a backfill run."""

    stage: str  # "build [de]", "oracle [de]", "build_report, oracle_gate", ...
    kind: str  # BUILD, SYSTEM or CHAIN: what the CLI's exit code and summary depend on
    run_id: str
    step: str  # the step key, or the check's name
    error: str  # the innermost error's class name ("CatalogError", "SpendNotConfirmedError"), or "check"
    reason: str  # what to fix, never cut

    def line(self) -> str:
        kind = "check failed" if self.error == "check" else self.error
        return f"{self.step}: {kind}: {self.reason}"


BUILD, SYSTEM, CHAIN = "build", "system", "chain"
CHECK_FAILED = "DagsterAssetCheckFailedError"


def kind_of(run: dg.DagsterRun) -> str:
    """A language's build, one (system, lang) partition, or an unpartitioned stretch of the chain."""
    keys = set(run.asset_selection or ())
    partition = run.tags.get(PARTITION_TAG, "")
    if RESULTS in keys and SYSTEM_PARTITION in partition:
        return SYSTEM
    return BUILD if BUILD_ROOT in keys or (partition and keys) else CHAIN


def stage_of(run: dg.DagsterRun) -> str:
    """A run's stage as the CLI names it: `build [lang]`, `<system> [lang]`, or the assets it materialised."""
    keys = set(run.asset_selection or ())
    partition = run.tags.get(PARTITION_TAG, "")
    kind = kind_of(run)
    if kind == BUILD:
        return f"build [{partition}]"
    if kind == SYSTEM:
        lang, system = partition.split(SYSTEM_PARTITION, 1)  # multi-partition keys join dimensions by name order
        return f"{system} [{lang}]"
    checks = {k.asset_key for k in (run.asset_check_selection or ())}
    names = sorted(
        (k.to_user_string() for k in keys | checks), key=lambda n: (CHAIN_ORDER.index(n) if n in CHAIN_ORDER else 99, n)
    )
    return ", ".join(names) or run.job_name


def failures_of(instance: dg.DagsterInstance, runs: Sequence[dg.DagsterRun]) -> list[StageFailure]:
    """Every failed step and failed check of the given runs, in run order."""
    found = []
    for run in runs:
        if run.status == dg.DagsterRunStatus.SUCCESS:
            continue
        stage, kind = stage_of(run), kind_of(run)
        for record in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE):
            event = record.dagster_event
            assert event is not None
            data = event.step_failure_data
            error = data.error
            while error is not None and error.cause is not None:  # Dagster wraps the user's error
                error = error.cause
            user = data.user_failure_data
            reason = (user.description if user is not None and user.description else None) or (
                error.message.strip() if error is not None else "no error recorded"
            )
            name = error.cls_name if error is not None and error.cls_name else "Failure"
            if name == CHECK_FAILED:
                continue  # a blocking check's own step failure: the check's evaluation below says why
            head, sep, rest = reason.partition(": ")
            if sep and head.rsplit(".", 1)[-1] == name:  # Dagster's message repeats the (qualified) class name
                reason = rest
            found.append(StageFailure(stage, kind, run.run_id, event.step_key or "-", name, reason))
        for record in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
            event = record.dagster_event
            assert event is not None
            evaluation = event.asset_check_evaluation_data
            if evaluation.passed or not evaluation.blocking:
                continue
            metadata = {k: v.value for k, v in (evaluation.metadata or {}).items()}
            reason = evaluation.description or "; ".join(f"{k}: {v}" for k, v in metadata.items())
            found.append(StageFailure(stage, kind, run.run_id, evaluation.check_name, "check", str(reason)))
        if run.status in (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED) and not any(
            f.run_id == run.run_id for f in found
        ):
            # The run ended without a step failing: its worker died (kill -9, OOM) or it was cancelled.
            reason = _run_end_reason(instance, run)
            found.append(StageFailure(stage, kind, run.run_id, "-", run.status.value, reason))
    return found


def _run_end_reason(instance: dg.DagsterInstance, run: dg.DagsterRun) -> str:
    for record in reversed(instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)):
        return record.message or record.user_message or "the run failed"
    return f"the run ended {run.status.value.lower()}"


def materialization_metadata(
    instance: dg.DagsterInstance, runs: Sequence[dg.DagsterRun], key: str
) -> dict[str, object] | None:
    """The metadata of `key`'s materialisation by one of `runs` (None when none of them materialised it)."""
    run_ids = {run.run_id for run in runs}
    records = instance.fetch_materializations(dg.AssetKey(key), limit=len(run_ids) + 1).records
    for record in records:
        if record.run_id in run_ids and record.asset_materialization is not None:
            return {k: v.value for k, v in record.asset_materialization.metadata.items()}
    return None


def publication_line(instance: dg.DagsterInstance, runs: Sequence[dg.DagsterRun]) -> str:
    """Where this backfill published, or "" when it did not reach hf_dataset."""
    meta = materialization_metadata(instance, runs, "hf_dataset")
    if meta is None:
        return ""
    return f"hf_dataset: ok, published {meta['path']} ({meta['upload']})"


PROGRESS_EVERY_S = 1.0
"""A long step logs its progress at most once a second (and at its start and end): a 4,000-edition
parse or a 500-item model run adds a few hundred lines to the event log, not one per item."""
_PROGRESS = re.compile(r"progress: (?P<done>[0-9,]+)/(?P<total>[0-9,]+) (?P<what>\S.*)")


@dataclass(frozen=True)
class Progress:
    """How far one long step is: `progress: 120/500 answered`, `progress: 1,200/4,013 editions parsed`."""

    what: str  # what is counted: "answered", "editions fetched", "editions parsed"
    done: int
    total: int

    def message(self) -> str:
        return f"progress: {self.done:,}/{self.total:,} {self.what}"

    @classmethod
    def of(cls, message: str) -> Progress | None:
        """The progress a log message reports, or None for any other message."""
        found = _PROGRESS.fullmatch(message)
        if found is None:
            return None
        return cls(found["what"], int(found["done"].replace(",", "")), int(found["total"].replace(",", "")))


class ProgressLog:
    """A step's `progress(done, total)` callback that writes `Progress` lines to `log` (a run's
    `context.log.info`) at most every `every` seconds, and always for the first and the last count."""

    def __init__(
        self,
        log: Callable[[str], object],
        what: str,
        *,
        every: float = PROGRESS_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._log, self._what, self._every, self._clock = log, what, every, clock
        self._last: float | None = None

    def __call__(self, done: int, total: int) -> None:
        now = self._clock()
        if self._last is None or done >= total or now - self._last >= self._every:
            self._last = now
            self._log(Progress(self._what, done, total).message())


def progress_since(
    instance: dg.DagsterInstance, run_id: str, cursor: str | None = None
) -> tuple[list[Progress], str | None]:
    """The progress lines a run logged after `cursor` (None: from its start), and the cursor to go on from."""
    found = instance.get_records_for_run(run_id, cursor=cursor)
    lines = [
        progress
        for record in found.records
        if record.event_log_entry.dagster_event is None
        and (progress := Progress.of(record.event_log_entry.user_message)) is not None
    ]
    return lines, found.cursor or cursor
