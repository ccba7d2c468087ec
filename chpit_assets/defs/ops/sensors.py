"""new_edition_sensor: poll the Fedlex catalog, launch the nightly job for exactly the languages whose acts changed.

Partition decision: the run is the nightly job over the changed languages (each built as its
language partition of the build job, then gated, run, reported and published like the nightly),
with the affected acts and the new editions named in its tags (`chpit/acts`, `chpit/editions`). Not
an act partition axis: the builder's sampling, caps and core split are per language over all acts
(B14-B16), so a language is the unit that must be rebuilt anyway, and inside that run only the new
edition's file is downloaded and parsed (content-addressed cache, unchanged editions reused;
tests/ops_schedule/test_incremental.py proves it).

Baseline: what was built, not what the sensor saw. Each successful pipeline run records the
snapshot of the catalog it built from (`fedlex.catalog_diff.record_built`, per Fedlex source, in
data/cache/); a tick compares the catalog with it. So the first tick after the sensor is turned on
already notices an edition that arrived since the last build; a language never built from this
source is left to the nightly schedule or `make run` (turning the sensor on must not start a full
Fedlex build); and `python -m chpit_assets nightly --changed` ("check now") asks the same question
through the same function, with no sensor cursor to lose or to disagree with.

Repeated ticks on an unchanged difference (the run still queued, or a gate that failed) launch
once: the run key is the (built, current) pair of digests per language, and Dagster launches a run
key once per sensor. A failed catalog fetch raises: the tick shows as failed with the typed error.
"""

import os
from collections.abc import Sequence
from dataclasses import dataclass

import dagster as dg

from chpit_assets.fedlex.catalog_diff import ActChange, Snapshot, diff, read_built
from chpit_assets.nightly import NIGHTLY_LANGS

from ..resources import ChpitStore, FedlexSource
from .jobs import nightly_job
from .schedules import TRIGGER_TAG, nightly_request

ACTS_TAG = "chpit/acts"
EDITIONS_TAG = "chpit/editions"
INTERVAL_ENV = "CHPIT_SENSOR_SECONDS"
# The check is one SPARQL query per language, cheap enough to run every few minutes, so a new edition
# is noticed within minutes (issue 18.7); set $CHPIT_SENSOR_SECONDS where the code location loads to change it.
POLL_SECONDS = int(os.environ.get(INTERVAL_ENV) or 300)


@dataclass(frozen=True)
class CatalogCheck:
    """One look at Fedlex against what was built: the run to request (if any) and why."""

    request: dg.RunRequest | None
    summary: str
    changes: tuple[ActChange, ...] = ()


def check_catalog(fedlex: FedlexSource, chpit: ChpitStore) -> CatalogCheck:
    """Compare the catalog of every nightly language that was built from `fedlex` with its record."""
    built = read_built(chpit.built_catalog_path(fedlex.source_id))
    # Only the languages a nightly builds (18.6), so a change elsewhere starts nothing.
    langs = [lang for lang in NIGHTLY_LANGS if lang in built.langs]
    if not langs:
        return CatalogCheck(
            None, "nothing built from this Fedlex source yet: the nightly schedule or `make run` builds first"
        )
    current, changes = diff(built, {lang: fedlex.load_catalog(lang) for lang in langs})
    request = run_request(built, current, changes)
    if request is None:
        return CatalogCheck(None, "no catalog change since the last build")
    changed = request.run_config["ops"]["rebuild"]["config"]["langs"]
    return CatalogCheck(request, f"{len(changes)} change(s) in {', '.join(changed)}", tuple(changes))


@dg.sensor(
    job=nightly_job,
    minimum_interval_seconds=POLL_SECONDS,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description=f"Every {POLL_SECONDS} s (${INTERVAL_ENV}): run the nightly job for the languages whose Fedlex "
    "acts gained or changed editions since they were last built (`python -m chpit_assets nightly "
    "--changed` checks now).",
)
def new_edition_sensor(context: dg.SensorEvaluationContext, fedlex: FedlexSource, chpit: ChpitStore) -> dg.SensorResult:
    check = check_catalog(fedlex, chpit)
    for change in check.changes:
        context.log.info(f"[{change.lang}] {change.act}: {change.kind} {' '.join(change.new_editions)}".rstrip())
    if check.request is None:
        return dg.SensorResult(skip_reason=check.summary)
    return dg.SensorResult(run_requests=[check.request])


def run_request(built: Snapshot, current: Snapshot, changes: Sequence[ActChange]) -> dg.RunRequest | None:
    """One nightly run over the languages with changes; its tags name the acts and the new editions."""
    if not changes:
        return None
    langs = sorted({c.lang for c in changes})
    return nightly_request(
        langs,
        {
            TRIGGER_TAG: "new_edition",
            ACTS_TAG: " ".join(sorted({c.act for c in changes})),
            EDITIONS_TAG: " ".join(sorted({e for c in changes for e in c.new_editions})),
        },
        # From-state and to-state per language: ticks on the same difference launch once, while a
        # later, different transition still launches.
        run_key=" ".join(f"{lang}-{built.lang_digest(lang)}-{current.lang_digest(lang)}" for lang in langs),
    )


DEAD_RUN_SECONDS = 30  # the same interval as dagster.yaml's run_monitoring poll


@dg.sensor(
    minimum_interval_seconds=DEAD_RUN_SECONDS,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description=f"Every {DEAD_RUN_SECONDS} s: mark failed the runs of our own processes (make run, the CLI, a "
    "nightly's stage runs) whose process was killed; Dagster's run monitoring watches the runs it launched.",
)
def dead_run_monitor(context: dg.SensorEvaluationContext) -> dg.SkipReason:
    from chpit_assets.instance import fail_dead_runs

    dead = fail_dead_runs(context.instance)
    for run_id in dead:
        context.log.warning(f"run {run_id}: its process is gone; marked failed")
    return dg.SkipReason(f"{len(dead)} run(s) of dead processes marked failed" if dead else "no dead run")
