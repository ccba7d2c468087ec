"""The jobs the schedule, the sensor and `python -m chpit_assets run|nightly` launch, by name."""

import dagster as dg

build_job = dg.define_asset_job(
    "build",
    selection=dg.AssetSelection.groups("fedlex", "bench") - dg.AssetSelection.assets("build_report"),
    description="One language: Fedlex catalog -> editions -> parsed articles -> changes -> items -> core split.",
)

build_report_job = dg.define_asset_job(
    "build_report_job",
    selection=dg.AssetSelection.assets("build_report"),
    description="build-report.json across every built language (after the language builds).",
)

WRITER_POOL = "duckdb_writer"


class NightlyConfig(dg.Config):
    langs: list[str]
    repo_id: str = ""  # Hub dataset repo; empty = data/publish/ only (the upload needs its token too)


# In the writer pool: with the pool given to whole runs (dagster.yaml), the run queue never starts a
# nightly beside another run that writes the store. Its stage runs start in this process, not
# through the queue, so they do not wait for the slot this run holds.
@dg.op(pool=WRITER_POOL, description="Run chpit_assets.nightly.run_nightly for the configured languages.")
def rebuild(context: dg.OpExecutionContext, config: NightlyConfig) -> None:
    from chpit_assets.nightly import PARENT_TAG, NightlyFailed, run_nightly

    granularity = context.instance.event_log_storage.get_pool_config().pool_granularity
    if granularity is None or granularity.value != "run":
        # Per-step slots: the stage runs' writer steps would wait for the slot this op holds, forever.
        raise dg.Failure(f"the nightly needs `concurrency: pools: granularity: run` in dagster.yaml, not {granularity}")
    tags = {k: v for k, v in context.run.tags.items() if k.startswith("chpit/")}
    try:
        run_nightly(config.langs, instance=context.instance, tags={**tags, PARENT_TAG: context.run_id},
                    publication={"repo_id": config.repo_id} if config.repo_id else None, echo=context.log.info)
    except NightlyFailed as exc:
        raise dg.Failure(description=str(exc), metadata={"stage": exc.stage, "stage_run": exc.run_id,
                                                          "reason": dg.MetadataValue.md(exc.reason)}) from None


@dg.job(
    name="nightly",
    description="The nightly rebuild end to end: build each language, build report, oracle gate, oracle and "
                "recite, report, gated publication (docs/scheduling.md). Never starts a paid model.",
)
def nightly_job() -> None:
    rebuild()
