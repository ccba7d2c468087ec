"""nightly_build: one backfill over every configured language, once a night at 03:30 Zurich time.

Why a sensor and not a ScheduleDefinition: Dagster 1.13 lets only a sensor with an asset selection
request a backfill (a schedule's run request must be a run), and one backfill over the graph is what
the nightly is (docs/scheduling.md). The sensor fires at its first tick at or after 03:30 Zurich on
each Zurich day, once: the day it fired is its cursor, so a daemon that was down at 03:30 catches up
with one backfill when it comes back, never with one per missed tick.

Why every language and no cleverness here: the per-language build is cheap when nothing changed
(a URL already in the content-addressed cache is not fetched, an edition whose file and parser are
unchanged is not parsed, the builder is deterministic so its data versions stay equal), and the
nightly is the reconciliation path for what the new-edition sensor cannot see: a new parser or
builder version, a tick lost while the daemon was down. The backfill then carries the build through
the oracle gate, the free systems, the report and the gated publication (chpit_assets.orchestration).
"""

from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

import dagster as dg

from chpit_assets.nightly import NIGHTLY_LANGS
from chpit_assets.orchestration.request import nightly_target
from chpit_assets.orchestration.target import TRIGGER_TAG

ZURICH = "Europe/Zurich"
# 03:30, not 02:30: on the two DST days Zurich's clock skips (March) or repeats (October) 02:00-02:59,
# so 02:30 would either not exist or exist twice; 03:30 happens exactly once every day.
NIGHTLY_AT = time(3, 30)
NIGHTLY_CRON = "30 3 * * *"  # the same moment, as the UI and docs spell it
TICK_SECONDS = 60


def nightly_request(asset_graph, langs, tags: dict[str, str]) -> dg.RunRequest:
    """One backfill over `langs` and everything downstream; the nightly's and the new-edition sensor's
    differ only in these."""
    # Imported here: the backfill module pulls in Dagster's daemon (about 2 s), and this module is
    # imported by every run process of the code location, which never calls this.
    from chpit_assets.orchestration.backfill import backfill_request

    return backfill_request(nightly_target(asset_graph, langs), asset_graph, tags)


def night_due(now: datetime, last_fired: str | None) -> date | None:
    """The Zurich day whose 03:30 has passed at `now` without a nightly yet (None: nothing due)."""
    local = now.astimezone(ZoneInfo(ZURICH))
    if local.time() < NIGHTLY_AT or local.date().isoformat() == last_fired:
        return None
    return local.date()


@dg.sensor(
    asset_selection=dg.AssetSelection.all(),
    minimum_interval_seconds=TICK_SECONDS,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="03:30 Zurich (cron 30 3 * * *), once a day: one backfill that rebuilds every configured "
    "language (unchanged editions cost nothing), gates, runs the free systems, reports, and publishes if "
    "the gate passes.",
)
def nightly_build(context: dg.SensorEvaluationContext) -> dg.SensorResult:
    day = night_due(datetime.now(UTC), context.cursor)
    if day is None:
        return dg.SensorResult(skip_reason=f"next nightly at {NIGHTLY_AT:%H:%M} {ZURICH}")
    assert context.repository_def is not None
    request = nightly_request(context.repository_def.asset_graph, NIGHTLY_LANGS, {TRIGGER_TAG: "schedule"})
    return dg.SensorResult(run_requests=[request], cursor=day.isoformat())
