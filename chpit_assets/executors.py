"""The code location's executor: Dagster's own (in-process or multiprocess) plus Celery, chosen by run config.

One set of definitions serves a laptop and a worker fleet. Runs execute their steps in the
run's own process unless their run config says otherwise: a run's steps are a chain (one
language partition: catalog -> files -> articles -> changes -> items -> core), its writers take
the duckdb_writer slot one at a time anyway, and parallelism comes from running partitions as
separate runs. A process per step costs about 2 s of start-up each: it made a rebuild after one
new edition almost seven times slower at CH-PiT scale (docs/benchmarks.md). `multiprocess` is
still there for runs that want step isolation, and

    execution:
      config:
        celery:
          broker: pyamqp://guest@127.0.0.1:5672//
          backend: rpc://

sends every step to Celery workers (`celery -A dagster_celery.app worker`) started with
the same DAGSTER_HOME and CHPIT_PG_URL as the launcher (docs/operations.md). Pool
limits (duckdb_writer) hold under all three: each claims its slot from the instance
before a step starts.

Lives outside `chpit_assets.defs` on purpose: that package is scanned for assets, and
this module imports dagster-celery, which only the Celery path needs at run time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dagster as dg
from dagster_celery import celery_executor

# Each mode is one of Dagster's own executors, configured with its own schema (read off the
# executor's public `config_schema`), so a run config written for that executor works here as is.
_DELEGATES: dict[str, dg.ExecutorDefinition] = {
    "in_process": dg.in_process_executor,
    "multiprocess": dg.multiprocess_executor,
    "celery": celery_executor,
}


def _requirements(config: Mapping[str, object]) -> Sequence[dg.ExecutorRequirement]:
    # Every mode but in_process loads the job again in another process, so it must be reconstructable.
    return [] if "in_process" in config else dg.multiple_process_executor_requirements()


@dg.executor(
    name="chpit",
    config_schema=dg.Field(
        dg.Selector({mode: delegate.config_schema.as_field() for mode, delegate in _DELEGATES.items()}),
        default_value={"in_process": {}},
    ),
    requirements=_requirements,
)
def chpit_executor(init_context: dg.InitExecutorContext) -> dg.Executor:
    """in_process (default) | multiprocess | celery, each Dagster's own executor with its own config."""
    ((mode, mode_config),) = init_context.executor_config.items()
    delegate = _DELEGATES[mode]
    create = delegate.executor_creation_fn
    assert create is not None and isinstance(mode_config, Mapping)  # every delegate is a function-made executor
    # InitExecutorContext is a NamedTuple; _replace is its public copy-with-changes, not a private member.
    return create(init_context._replace(executor_config=mode_config, executor_def=delegate))
