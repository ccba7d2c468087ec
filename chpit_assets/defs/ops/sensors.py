"""new_edition_sensor: poll the Fedlex catalog, launch the nightly job for exactly the languages whose acts changed.

Partition decision: the run is the nightly job over the changed languages (each built as its
language partition of the build job, then gated, run, reported and published like the nightly),
with the affected acts and the new editions named in its tags (`chpit/acts`, `chpit/editions`). Not an act partition axis: the builder's sampling, caps and
core split are per language over all acts (B14-B16), so a language is the unit
that must be rebuilt anyway, and inside that run only the new edition's file is
downloaded and parsed (content-addressed cache, unchanged editions reused;
tests/ops_schedule/test_incremental.py proves it).

Cursor: a `chpit_assets.fedlex.catalog_diff.Snapshot` (per language and act a
digest and the latest edition day, compressed). The first tick only records it and
requests nothing: turning the sensor on must not start a full Fedlex build; the
nightly schedule (or `make run`) builds what existed before.

A failed catalog fetch raises: the tick shows as failed with the typed error and
the cursor stays where it was, so the next tick sees the same changes again.
"""

import os
from collections.abc import Sequence

import dagster as dg

from chpit_assets.fedlex.catalog_diff import ActChange, Snapshot, diff
from chpit_assets.nightly import NIGHTLY_LANGS

from ..resources import FedlexSource
from .jobs import nightly_job
from .schedules import TRIGGER_TAG, nightly_request

ACTS_TAG = "chpit/acts"
EDITIONS_TAG = "chpit/editions"
INTERVAL_ENV = "CHPIT_SENSOR_SECONDS"
# The check is one SPARQL query per language, cheap enough to run every few minutes, so a new edition
# is noticed within minutes (issue 18.7); set $CHPIT_SENSOR_SECONDS where the code location loads to change it.
POLL_SECONDS = int(os.environ.get(INTERVAL_ENV) or 300)


@dg.sensor(
    job=nightly_job,
    minimum_interval_seconds=POLL_SECONDS,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description=f"Every {POLL_SECONDS} s (${INTERVAL_ENV}): run the nightly job for the languages whose Fedlex "
                "acts gained or changed editions; the first tick only records the catalog.",
)
def new_edition_sensor(context: dg.SensorEvaluationContext, fedlex: FedlexSource) -> dg.SensorResult:
    # The same per-language catalog the fedlex_catalog asset reads, so the sensor sees what the run will see;
    # only the languages a nightly builds (18.6), so a change elsewhere starts nothing.
    catalogs = {lang: fedlex.load_catalog(lang) for lang in NIGHTLY_LANGS}
    if context.cursor is None:
        baseline = Snapshot.of(catalogs)
        return dg.SensorResult(
            skip_reason=f"first tick: recorded {baseline.pairs()} (act, language) pairs; nothing requested",
            cursor=baseline.encode(),
        )
    previous = Snapshot.decode(context.cursor)
    current, changes = diff(previous, catalogs)
    for change in changes:
        context.log.info(f"[{change.lang}] {change.act}: {change.kind} {' '.join(change.new_editions)}".rstrip())
    requests = run_requests(previous, current, changes)
    if not requests:
        return dg.SensorResult(skip_reason="no catalog change", cursor=current.encode())
    return dg.SensorResult(run_requests=requests, cursor=current.encode())


def run_requests(previous: Snapshot, current: Snapshot, changes: Sequence[ActChange]) -> list[dg.RunRequest]:
    """One nightly run over the languages with changes; its tags name the acts and the new editions."""
    if not changes:
        return []
    langs = sorted({c.lang for c in changes})
    return [nightly_request(
        langs,
        {
            TRIGGER_TAG: "new_edition",
            ACTS_TAG: " ".join(sorted({c.act for c in changes})),
            EDITIONS_TAG: " ".join(sorted({e for c in changes for e in c.new_editions})),
        },
        # From-state and to-state per language: a tick evaluated twice on the same cursor launches
        # once, while a later, different transition still launches.
        run_key=" ".join(f"{lang}-{previous.lang_digest(lang)}-{current.lang_digest(lang)}" for lang in langs),
    )]
