"""The jobs the schedule, the sensor and `python -m chpit_assets run|nightly` launch, by name."""

import dagster as dg

from chpit_assets.runs.systems import LOOKUP_MODES, model_systems

build_job = dg.define_asset_job(
    "build",
    selection=dg.AssetSelection.groups("fedlex", "bench", "search") - dg.AssetSelection.assets("build_report"),
    description="One language: Fedlex catalog -> editions -> parsed articles -> changes -> items -> core split, "
    "and the search index.",
)

build_report_job = dg.define_asset_job(
    "build_report_job",
    selection=dg.AssetSelection.assets("build_report"),
    description="build-report.json across every built language (after the language builds).",
)

WRITER_POOL = "duckdb_writer"


class StageConfig(dg.PermissiveConfig):
    """One resource's (or op's) run config, handed to the stage runs that use it, which validate it."""


class PipelineConfig(dg.Config):
    langs: list[str]
    systems: list[str] = list(LOOKUP_MODES)
    fedlex: StageConfig = StageConfig()  # the build runs' `fedlex` resource (sample or live)
    model: StageConfig = StageConfig()  # the systems' `model` resource (endpoint, prices, workers)
    runs: StageConfig = StageConfig()  # the `results` op's RunsConfig (sample, limit, retries)
    publication: StageConfig = StageConfig()  # the publication's resource (Hub repo; empty = data/publish/ only)


# In the writer pool: with the pool given to whole runs (dagster.yaml), the run queue never starts a
# pipeline beside another run that writes the store. Its stage runs start in this process, not
# through the queue, so they do not wait for the slot this run holds.
@dg.op(pool=WRITER_POOL, description="Run chpit_assets.pipeline.run_pipeline: every stage, one run each, in order.")
def rebuild(context: dg.OpExecutionContext, config: PipelineConfig) -> None:
    from chpit_assets.instance import pool_granularity, process_tags
    from chpit_assets.pipeline import PARENT_TAG, PipelineFailed, run_pipeline

    granularity = pool_granularity(context.instance)
    if granularity != "run":
        # Per-step slots: the stage runs' writer steps would wait for the slot this op holds, forever.
        raise dg.Failure(
            f"{context.job_name} needs `concurrency: pools: granularity: run` in dagster.yaml, not {granularity}"
        )
    paid = model_systems(config.systems)
    if paid and context.job_name == nightly_job.name:
        raise dg.Failure(f"the nightly never starts a model system (R3: spending needs a person): {paid}")

    def echo(line: str) -> None:
        context.log.info(line)
        print(line, flush=True)  # the CLI's terminal, or the run's captured stdout under the daemon

    # The stage runs execute in this process: they carry its pid, and the parent's chpit/ tags.
    tags = {k: v for k, v in context.run.tags.items() if k.startswith("chpit/")} | process_tags()
    try:
        run_pipeline(
            config.langs,
            config.systems,
            instance=context.instance,
            tags={**tags, PARENT_TAG: context.run_id},
            fedlex=config.fedlex.model_dump(),
            model=config.model.model_dump(),
            runs=config.runs.model_dump(),
            publication=config.publication.model_dump(),
            echo=echo,
        )
    except PipelineFailed as exc:
        raise dg.Failure(
            description=str(exc),
            metadata={"stage": exc.stage, "stage_run": exc.run_id, "reason": dg.MetadataValue.md(exc.reason)},
        ) from None


@dg.job(
    name="nightly",
    description="The nightly rebuild end to end: build each language, build report, oracle gate, the model-free "
    "systems, report, gated publication (docs/scheduling.md). Never starts a paid model.",
)
def nightly_job() -> None:
    rebuild()


@dg.job(
    name="benchmark",
    description="`make run` / `python -m chpit_assets run`: the same chain as the nightly for the languages and "
    "systems asked, model systems included; one run whose stage runs carry its id (chpit/parent).",
)
def benchmark_job() -> None:
    rebuild()
