"""The nightly rebuild, end to end (issue 18.1): what the schedule's tick, the new-edition sensor's
tick and `python -m chpit_assets nightly` all run.

    build[lang] for each language -> build_report -> oracle_gate (blocking check) -> the model-free
    systems (oracle, recite) -> report -> publish_gate (CRITICAL blocking checks) -> hf_dataset

Paid model systems are never started here (R3: spending needs a person's confirmation). Each
stage is one Dagster run, started from the `nightly` run's process one after the other: a run
cannot mix one language partition, the unpartitioned gate and the (system, lang) partitions, and
running them in sequence from one place is what makes the chain stop at the first failure. Every
stage run is tagged `chpit/nightly=<nightly run id>`, so the UI can filter one night's story.

A failed stage raises `NightlyFailed` naming the stage, its run and the reason (the gate's check
metadata, which the stage run also shows): the nightly run fails, nothing after the stage runs,
and `hf_dataset` never writes, so `data/publish/` stays yesterday's.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from datetime import datetime, timezone

import dagster as dg

from chpit_assets.defs.partitions import BENCH_LANGS
from chpit_assets.defs.resources import ChpitStore
from chpit_assets.defs.runs.assets import DEFAULT_SYSTEMS
from chpit_assets.defs.runs.checks import oracle_failures

NIGHTLY_LANGS: tuple[str, ...] = BENCH_LANGS
"""The languages a nightly builds: the configured set, the same as `make run`'s default, so the
build report and the card list the same languages whichever of the two built them (issue 18.6)."""

FREE_SYSTEMS: tuple[str, ...] = DEFAULT_SYSTEMS
"""oracle and recite: no model, no network, no cost."""

PARENT_TAG = "chpit/nightly"
_QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


class NightlyFailed(Exception):
    """A stage of the nightly failed; nothing after it ran."""

    def __init__(self, stage: str, run_id: str, reason: str):
        super().__init__(f"{stage} failed (run {run_id}): {reason}")
        self.stage, self.run_id, self.reason = stage, run_id, reason


def _failed_checks(result: dg.ExecuteInProcessResult) -> str:
    failed = [c for c in result.get_asset_check_evaluations() if not c.passed]
    return "; ".join(f"{c.check_name}: {c.description or c.metadata}" for c in failed) or "see the run's events"


def run_nightly(
    langs: Sequence[str],
    *,
    instance: dg.DagsterInstance,
    tags: dict[str, str],
    publication: dict | None = None,
    echo: Callable[[str], None] = print,
) -> None:
    """Build `langs`, then gate, run the free systems, report and publish; raise NightlyFailed at the first failure.

    `publication` is the `publication` resource's config (repo_id, ...): empty = local folder only."""
    from chpit_assets.definitions import defs  # the code location's own definitions, whoever calls
    from chpit_assets.defs.runs.pipeline import run_benchmark

    def stage(job: dg.JobDefinition, label: str, **kwargs) -> dg.ExecuteInProcessResult:
        result = job.execute_in_process(instance=instance, tags=tags, raise_on_error=False, **kwargs)
        echo(f"{label}: {'ok' if result.success else 'FAILED'} (run {result.run_id})")
        if not result.success:
            raise NightlyFailed(label, result.run_id, _failed_checks(result))
        return result

    for lang in langs:
        stage(defs.resolve_job_def("build"), f"build [{lang}]", partition_key=lang, run_config=_QUIET)
    stage(defs.resolve_job_def("build_report_job"), "build_report_job", run_config=_QUIET)
    bench_langs = [lang for lang in langs if lang in BENCH_LANGS]
    if not run_benchmark(defs, instance, FREE_SYSTEMS, bench_langs, run_config=_QUIET, echo=echo, tags=tags):
        reasons = oracle_failures(ChpitStore()) or ["a system or the report failed; see the runs above"]
        raise NightlyFailed("oracle_gate, systems or report", "-", "; ".join(reasons))
    stage(
        defs.resolve_implicit_global_asset_job_def(),
        "hf_dataset",
        asset_selection=[dg.AssetKey("publish_gate"), dg.AssetKey("hf_dataset")],
        run_config={**_QUIET, "resources": {"publication": {"config": publication or {}}}},
    )


def tonight(instance: dg.DagsterInstance) -> dg.RunRequest:
    """The run request the nightly schedule's tick makes now (evaluated, not re-stated)."""
    from chpit_assets.defs.ops.schedules import nightly_build

    with dg.build_schedule_context(instance=instance, scheduled_execution_time=datetime.now(timezone.utc)) as context:
        (request,) = nightly_build(context)
    return request


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo-id", default="", help="Hub dataset repo to upload to (default: data/publish/ only)")


def main(args: argparse.Namespace) -> int:
    """`python -m chpit_assets nightly`: tonight's run, in this process, through the schedule's own request."""
    from chpit_assets.definitions import defs

    from chpit_assets.instance import prepare_instance

    # Output(data_version=...) is beta in Dagster 1.13 and says so on every run; the flag is deliberate.
    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    instance = dg.DagsterInstance.get()
    prepare_instance(instance)
    request = tonight(instance)
    # The stage lines (INFO) on the console, not every event of the nightly run.
    run_config = {**request.run_config, "loggers": {"console": {"config": {"log_level": "INFO"}}}}
    if args.repo_id:
        run_config = {**run_config, "ops": {"rebuild": {"config": {
            **run_config["ops"]["rebuild"]["config"], "repo_id": args.repo_id}}}}
    result = defs.resolve_job_def("nightly").execute_in_process(
        instance=instance, run_config=run_config, tags=request.tags, raise_on_error=False)
    if result.success:
        print(f"nightly: ok (run {result.run_id}); outputs in {ChpitStore().root}", flush=True)
        return 0
    failure = next((e.event_specific_data.error.message.strip() for e in result.all_events
                    if e.event_type == dg.DagsterEventType.STEP_FAILURE), "see the run")
    print(f"nightly: FAILED (run {result.run_id}): {failure}", file=sys.stderr, flush=True)
    return 1
