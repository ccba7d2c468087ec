"""`python -m chpit_assets nightly`: tonight's nightly now, in this process (issue 18.2).

The same backfill the 03:30 nightly sensor requests (the same function builds it): every
configured language built, then the build report, the oracle gate, the model-free systems, the
report and the gated publication. Paid model systems are never started here (R3: spending needs a
person's confirmation). `--changed` is the sensor's "check now": the same comparison of Fedlex with
what was built (defs.ops.sensors.check_catalog), and the backfill for the languages it finds changed.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import dagster as dg

from chpit_assets.langs import BENCH_LANGS

NIGHTLY_LANGS: tuple[str, ...] = BENCH_LANGS
"""The languages a nightly builds: the configured set, the same as `make run`'s default, so the
build report and the card list the same languages whichever of the two built them (issue 18.6)."""


def tonight(asset_graph) -> dg.RunRequest:
    """The backfill request the 03:30 sensor makes (the same function), launched from the shell."""
    from chpit_assets.defs.ops.schedules import nightly_request
    from chpit_assets.orchestration.target import TRIGGER_TAG

    return nightly_request(asset_graph, NIGHTLY_LANGS, {TRIGGER_TAG: "cli"})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo-id", default="", help="Hub dataset repo to upload to (default: data/publish/ only)")
    parser.add_argument(
        "--changed",
        action="store_true",
        help="check now: only the languages whose Fedlex catalog changed since they were built "
        "(what the new-edition sensor's tick would run); nothing when none did",
    )


def main(args: argparse.Namespace) -> int:
    """Tonight's backfill (or the sensor's, with --changed), submitted and driven to its end here."""
    from chpit_assets.definitions import defs
    from chpit_assets.defs.ops.sensors import check_catalog
    from chpit_assets.defs.resources import ChpitStore, FedlexSource
    from chpit_assets.instance import open_instance, prepare_instance
    from chpit_assets.orchestration import request as requests
    from chpit_assets.orchestration.invocation import invoke
    from chpit_assets.orchestration.stages import publication_line

    # Output(data_version=...) is beta in Dagster 1.13 and says so on every run; the flag is deliberate.
    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    instance = open_instance()
    prepare_instance(instance)
    requests.register(instance, NIGHTLY_LANGS, requests.NIGHTLY_SYSTEMS)
    asset_graph = defs.resolve_asset_graph()
    if args.changed:
        check = check_catalog(FedlexSource(), ChpitStore(), asset_graph)
        print(f"catalog: {check.summary}", flush=True)
        if check.request is None:
            return 0
        request = check.request
    else:
        request = tonight(asset_graph)
    publication = {"repo_id": args.repo_id} if args.repo_id else None
    outcome = invoke(
        instance,
        request.asset_graph_subset,
        tags=dict(request.tags or {}),
        run_config=requests.run_config(publication=publication),
        title=f"nightly ({request.tags.get('chpit/trigger', 'nightly')})",
        echo=lambda line: print(line, flush=True),
    )
    if outcome.ok:
        print(publication_line(instance, outcome.runs), flush=True)
        print(f"nightly: ok (backfill {outcome.backfill_id}); outputs in {ChpitStore().root}", flush=True)
        return 0
    reasons = "; ".join(f.line() for f in outcome.failures) or outcome.status
    state = "interrupted" if outcome.interrupted else "FAILED"
    print(f"nightly: {state} (backfill {outcome.backfill_id}): {reasons}", file=sys.stderr, flush=True)
    return 1
