"""new_edition_sensor: poll the Fedlex catalog, launch the build of exactly the languages whose acts changed.

Partition decision: the run is the language partition of the build job, with the
affected acts and the new editions named in its tags (`chpit/acts`,
`chpit/editions`). Not an act partition axis: the builder's sampling, caps and
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

from collections.abc import Sequence

import dagster as dg

from chpit_assets.fedlex.catalog_diff import ActChange, Snapshot, diff

from ..partitions import lang_partitions
from ..resources import FedlexSource
from .jobs import build_job
from .schedules import TRIGGER_TAG

ACTS_TAG = "chpit/acts"
EDITIONS_TAG = "chpit/editions"
# Fedlex publishes consolidations a few times a week; hourly is prompt enough and light on the endpoint.
POLL_SECONDS = 3600


@dg.sensor(
    job=build_job,
    minimum_interval_seconds=POLL_SECONDS,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Launch the build of the languages whose Fedlex acts gained or changed editions.",
)
def new_edition_sensor(context: dg.SensorEvaluationContext, fedlex: FedlexSource) -> dg.SensorResult:
    # The same per-language catalog the fedlex_catalog asset reads, so the sensor sees what the run will see.
    catalogs = {lang: fedlex.load_catalog(lang) for lang in lang_partitions.get_partition_keys()}
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
    """One build run per language with changes; its tags name the acts and the new editions."""
    by_lang: dict[str, list[ActChange]] = {}
    for change in changes:
        by_lang.setdefault(change.lang, []).append(change)
    return [
        dg.RunRequest(
            partition_key=lang,
            # From-state and to-state: a tick evaluated twice on the same cursor launches once,
            # while a later, different transition of the same language still launches.
            run_key=f"{lang}-{previous.lang_digest(lang)}-{current.lang_digest(lang)}",
            tags={
                TRIGGER_TAG: "new_edition",
                ACTS_TAG: " ".join(c.act for c in lang_changes),
                EDITIONS_TAG: " ".join(e for c in lang_changes for e in c.new_editions),
            },
        )
        for lang, lang_changes in sorted(by_lang.items())
    ]
