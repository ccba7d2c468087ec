"""nightly_build: one backfill over every configured language, once a night, Zurich time.

Why every language and no cleverness here: the per-language build is cheap when nothing changed
(a URL already in the content-addressed cache is not fetched, an edition whose file and parser are
unchanged is not parsed, the builder is deterministic so its data versions stay equal), and the
nightly is the reconciliation path for what the new-edition sensor cannot see: a new parser or
builder version, a tick lost while the daemon was down. The backfill then carries the build through
the oracle gate, the free systems, the report and the gated publication (chpit_assets.orchestration).
"""

import dagster as dg

from chpit_assets.nightly import NIGHTLY_LANGS
from chpit_assets.orchestration.backfill import backfill_request
from chpit_assets.orchestration.invocation import TRIGGER_TAG
from chpit_assets.orchestration.request import nightly_target

from .jobs import build_job

ZURICH = "Europe/Zurich"
# 03:30, not 02:30: on the two DST days Zurich's clock skips (March) or repeats (October) 02:00-02:59,
# so 02:30 would either not exist or exist twice; 03:30 happens exactly once every day.
NIGHTLY_CRON = "30 3 * * *"


def nightly_request(asset_graph, langs, tags: dict[str, str]) -> dg.RunRequest:
    """One backfill over `langs` and everything downstream; the schedule's and the sensor's differ only in these."""
    return backfill_request(nightly_target(asset_graph, langs), asset_graph, tags)


@dg.schedule(
    job=build_job,
    cron_schedule=NIGHTLY_CRON,
    execution_timezone=ZURICH,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="03:30 Zurich: one backfill that rebuilds every configured language (unchanged editions cost "
    "nothing), gates, runs the free systems, reports, and publishes if the gate passes.",
)
def nightly_build(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
    return [nightly_request(context.repository_def.asset_graph, NIGHTLY_LANGS, {TRIGGER_TAG: "schedule"})]
