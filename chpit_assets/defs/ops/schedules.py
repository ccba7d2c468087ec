"""nightly_build: every language partition of the build job, once a night, Zurich time.

Why every partition and no cleverness here: the per-language build is cheap when
nothing changed (a URL already in the content-addressed cache is not fetched, an
edition whose file and parser are unchanged is not parsed, the builder is
deterministic so its data versions stay equal), and the nightly is the
reconciliation path for what the new-edition sensor cannot see: a new parser or
builder version, a tick lost while the daemon was down. build_report follows by
its automation condition (definitions.py) once every language run is done.
"""

import dagster as dg

from ..partitions import lang_partitions
from .jobs import build_job

ZURICH = "Europe/Zurich"
# 03:30, not 02:30: on the two DST days Zurich's clock skips (March) or repeats (October) 02:00-02:59,
# so 02:30 would either not exist or exist twice; 03:30 happens exactly once every day.
NIGHTLY_CRON = "30 3 * * *"
TRIGGER_TAG = "chpit/trigger"


@dg.schedule(
    job=build_job,
    cron_schedule=NIGHTLY_CRON,
    execution_timezone=ZURICH,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Refresh the Fedlex catalog and rebuild every language; unchanged editions cost nothing.",
)
def nightly_build(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
    # The run key is scoped to this tick by Dagster, so a re-evaluated tick does not launch twice.
    return [
        dg.RunRequest(partition_key=lang, run_key=lang, tags={TRIGGER_TAG: "nightly"})
        for lang in lang_partitions.get_partition_keys()
    ]
