"""`python -m chpit_assets nightly`: tonight's nightly run now, in this process (issue 18.2).

The nightly job (the schedule's and the new-edition sensor's target) runs chpit_assets.pipeline over
the configured languages with the model-free systems: build, build report, oracle gate, systems,
report, gated publication. Paid model systems are never started here (R3: spending needs a
person's confirmation). `--changed` is the sensor's "check now": the same comparison of Fedlex with
what was built (defs.ops.sensors.check_catalog), and the nightly for the languages it finds changed.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from datetime import UTC, datetime

import dagster as dg

from chpit_assets.defs.partitions import BENCH_LANGS

NIGHTLY_LANGS: tuple[str, ...] = BENCH_LANGS
"""The languages a nightly builds: the configured set, the same as `make run`'s default, so the
build report and the card list the same languages whichever of the two built them (issue 18.6)."""


def tonight(instance: dg.DagsterInstance) -> dg.RunRequest:
    """The run request the nightly schedule's tick makes now (evaluated, not re-stated)."""
    from chpit_assets.defs.ops.schedules import nightly_build

    with dg.build_schedule_context(instance=instance, scheduled_execution_time=datetime.now(UTC)) as context:
        (request,) = nightly_build(context)  # type: ignore[misc]  # the function returns one request
    assert isinstance(request, dg.RunRequest)
    return request


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo-id", default="", help="Hub dataset repo to upload to (default: data/publish/ only)")
    parser.add_argument(
        "--changed",
        action="store_true",
        help="check now: only the languages whose Fedlex catalog changed since they were built "
        "(what the new-edition sensor's tick would run); nothing when none did",
    )


def main(args: argparse.Namespace) -> int:
    """Tonight's run (or the sensor's, with --changed) through the request the schedule (or sensor) makes."""
    from chpit_assets.defs.ops.sensors import check_catalog
    from chpit_assets.defs.resources import ChpitStore, FedlexSource
    from chpit_assets.instance import open_instance, prepare_instance
    from chpit_assets.pipeline import execute

    # Output(data_version=...) is beta in Dagster 1.13 and says so on every run; the flag is deliberate.
    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    instance = open_instance()
    prepare_instance(instance)
    if args.changed:
        check = check_catalog(FedlexSource(), ChpitStore())
        print(f"catalog: {check.summary}", flush=True)
        if check.request is None:
            return 0
        request = check.request
    else:
        request = tonight(instance)
    config = request.run_config["ops"]["rebuild"]["config"]
    if args.repo_id:
        config = {**config, "publication": {"repo_id": args.repo_id}}
    run_id, failure = execute("nightly", config, instance=instance, tags=dict(request.tags))
    if failure is None:
        print(f"nightly: ok (run {run_id}); outputs in {ChpitStore().root}", flush=True)
        return 0
    print(f"nightly: FAILED (run {run_id}): {failure}", file=sys.stderr, flush=True)
    return 1
