"""new_edition_sensor: poll the Fedlex catalog, request one backfill for exactly the languages whose acts changed.

Partition decision: the backfill covers the changed languages' partitions and everything downstream
(each language built, then gated, run, reported and published like the nightly), with the affected
acts and the new editions named in its tags (`chpit/acts`, `chpit/editions`). Not
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

Repeated ticks on an unchanged difference (the backfill still running, or a gate that failed)
request once: the sensor's cursor keeps the (built, current) pair of digests per language it last
requested (a backfill request carries no run key). A failed catalog fetch raises: the tick shows as
failed with the typed error.
"""

import os
from dataclasses import dataclass

import dagster as dg

from chpit_assets.fedlex.catalog_diff import ActChange, diff, read_built
from chpit_assets.nightly import NIGHTLY_LANGS
from chpit_assets.orchestration.target import TRIGGER_TAG

from ..resources import ChpitStore, FedlexSource
from .schedules import nightly_request

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
    key: str = ""  # the (built, current) digests per changed language: equal keys, the same difference


def check_catalog(fedlex: FedlexSource, chpit: ChpitStore, asset_graph) -> CatalogCheck:
    """Compare the catalog of every nightly language that was built from `fedlex` with its record."""
    built = read_built(chpit.built_catalog_path(fedlex.source_id))
    # Only the languages a nightly builds (18.6), so a change elsewhere starts nothing.
    langs = [lang for lang in NIGHTLY_LANGS if lang in built.langs]
    if not langs:
        return CatalogCheck(
            None, "nothing built from this Fedlex source yet: the nightly schedule or `make run` builds first"
        )
    current, changes = diff(built, {lang: fedlex.load_catalog(lang) for lang in langs})
    if not changes:
        return CatalogCheck(None, "no catalog change since the last build")
    changed = sorted({c.lang for c in changes})
    tags = {
        TRIGGER_TAG: "sensor",
        ACTS_TAG: " ".join(sorted({c.act for c in changes})),
        EDITIONS_TAG: " ".join(sorted({e for c in changes for e in c.new_editions})),
    }
    # From-state and to-state per language: ticks on the same difference request once, while a
    # later, different transition still does.
    key = " ".join(f"{lang}-{built.lang_digest(lang)}-{current.lang_digest(lang)}" for lang in changed)
    request = nightly_request(asset_graph, changed, tags)
    return CatalogCheck(request, f"{len(changes)} change(s) in {', '.join(changed)}", tuple(changes), key)


@dg.sensor(
    asset_selection=dg.AssetSelection.all(),  # what a backfill request may cover (Dagster checks it)
    minimum_interval_seconds=POLL_SECONDS,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description=f"Every {POLL_SECONDS} s (${INTERVAL_ENV}): one backfill for the languages whose Fedlex acts "
    "gained or changed editions since they were last built (`python -m chpit_assets nightly --changed` "
    "checks now).",
)
def new_edition_sensor(context: dg.SensorEvaluationContext, fedlex: FedlexSource, chpit: ChpitStore) -> dg.SensorResult:
    assert context.repository_def is not None
    check = check_catalog(fedlex, chpit, context.repository_def.asset_graph)
    for change in check.changes:
        context.log.info(f"[{change.lang}] {change.act}: {change.kind} {' '.join(change.new_editions)}".rstrip())
    if check.request is None:
        return dg.SensorResult(skip_reason=check.summary)
    if check.key == context.cursor:
        return dg.SensorResult(skip_reason=f"{check.summary}: already requested")
    return dg.SensorResult(run_requests=[check.request], cursor=check.key)
