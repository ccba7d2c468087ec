"""nightly_build: the nightly job over every configured language, once a night, Zurich time.

Why every language and no cleverness here: the per-language build is cheap when nothing changed
(a URL already in the content-addressed cache is not fetched, an edition whose file and parser are
unchanged is not parsed, the builder is deterministic so its data versions stay equal), and the
nightly is the reconciliation path for what the new-edition sensor cannot see: a new parser or
builder version, a tick lost while the daemon was down. The nightly job then carries the build
through the oracle gate, the free systems, the report and the gated publication (chpit_assets.nightly).
"""

import dagster as dg

from chpit_assets.nightly import NIGHTLY_LANGS

from .jobs import nightly_job

ZURICH = "Europe/Zurich"
# 03:30, not 02:30: on the two DST days Zurich's clock skips (March) or repeats (October) 02:00-02:59,
# so 02:30 would either not exist or exist twice; 03:30 happens exactly once every day.
NIGHTLY_CRON = "30 3 * * *"
TRIGGER_TAG = "chpit/trigger"


def nightly_request(langs, tags: dict[str, str], run_key: str | None = None) -> dg.RunRequest:
    """One nightly run over `langs`; the schedule's and the sensor's requests differ only in these."""
    return dg.RunRequest(
        run_key=run_key, tags=tags, run_config={"ops": {"rebuild": {"config": {"langs": list(langs)}}}}
    )


@dg.schedule(
    job=nightly_job,
    cron_schedule=NIGHTLY_CRON,
    execution_timezone=ZURICH,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="03:30 Zurich: rebuild every configured language (unchanged editions cost nothing), gate, "
    "run the free systems, report, publish if the gate passes.",
)
def nightly_build(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
    # Dagster scopes a schedule's run keys to its tick, so a re-evaluated tick does not launch twice.
    return [nightly_request(NIGHTLY_LANGS, {TRIGGER_TAG: "nightly"}, run_key="nightly")]
