"""core_split -> oracle_gate [blocking check] -> results[system|lang] -> scored_results[system|lang].

The oracle runs first, over every bench language, behind a blocking check
(`oracle_scores_one`): it proves builder and scorer agree, so a failure stops
every model run downstream before anything is spent (card, "How to reproduce" step 2).
Systems are a dynamic partition axis (`systems`); register keys with
`register_systems(instance, keys)` before materialising them.
"""

from collections.abc import Sequence

import dagster as dg

from chpit_assets.orchestration.stages import ProgressLog
from chpit_assets.runs import stage
from chpit_assets.runs.runner import scored_path
from chpit_assets.runs.systems import parse_system_key

from ..metadata import data_version
from ..partitions import lang_partitions
from ..resources import ChpitStore
from .resources import ModelEndpoint, RunsConfig

GROUP = "runs"

SYSTEMS_AXIS = "systems"
systems_partitions = dg.DynamicPartitionsDefinition(name=SYSTEMS_AXIS)
system_lang_partitions = dg.MultiPartitionsDefinition({"system": systems_partitions, "lang": lang_partitions})


def register_systems(instance: dg.DagsterInstance, keys: Sequence[str]) -> None:
    """Add system keys to the `systems` axis, refusing unknown keys before Dagster ever sees them."""
    for key in keys:
        parse_system_key(key)
    instance.add_dynamic_partitions(SYSTEMS_AXIS, list(keys))


def _file_version(path) -> dg.DataVersion:
    return data_version(path.read_bytes()) if path.exists() else dg.DataVersion("empty")


def _verdict_metadata(counts: dict) -> dict:
    return {**counts, "labels": dg.MetadataValue.json(counts["labels"])}


@dg.asset(group_name=GROUP, deps=["core_split", "build_report"], kinds={"python"})
def oracle_gate(context: dg.AssetExecutionContext, chpit: ChpitStore) -> dg.MaterializeResult:
    """R1: the oracle over every built language's core split, scored. Its blocking check must pass first."""
    per_lang = stage.run_oracle(chpit.layout, context.log.info)
    return dg.MaterializeResult(
        metadata={f"{lang}_{k}": v for lang, counts in per_lang.items() for k, v in _verdict_metadata(counts).items()},
    )


@dg.asset(
    partitions_def=system_lang_partitions,
    group_name=GROUP,
    deps=[
        oracle_gate,
        dg.AssetDep("core_split", partition_mapping=dg.MultiToSingleDimensionPartitionMapping("lang")),
        # The search systems answer from the index: a re-indexed language makes its results stale. A
        # dependency is per asset, not per system key, so every system's results follow the index.
        dg.AssetDep("search_index", partition_mapping=dg.MultiToSingleDimensionPartitionMapping("lang")),
    ],
    kinds={"python"},
)
def results(
    context: dg.AssetExecutionContext, runs: RunsConfig, chpit: ChpitStore, model: ModelEndpoint
) -> dg.MaterializeResult:
    """data/results/{system}/{lang}.jsonl: one line per asked core item, resumable, with receipts (R3, PROTOCOL §7)."""
    keys = context.partition_key.keys_by_dimension
    system_key, lang = keys["system"], keys["lang"]
    if runs.repeats < 1:
        raise dg.Failure(f"runs config: repeats must be >= 1, got {runs.repeats}")
    run = stage.run_partition(
        chpit.layout,
        system_key,
        lang,
        runs.settings(),
        model.endpoints,
        confirm=model.confirm,
        workers=model.workers,
        model_settings=model.settings(),
        echo=context.log.warning,
        progress=ProgressLog(context.log.info, "answered"),
    )
    if run.run_report is not None:
        context.log.info(f"{run.run_report} rewritten")
    status = run.status
    if status["errored"]:
        context.log.warning(
            f"{system_key} [{lang}]: {status['errored']} of {status['items']} items errored; "
            f"commonest: {status['commonest_error']}"
        )
    return dg.MaterializeResult(
        data_version=_file_version(run.path),
        metadata={
            "path": dg.MetadataValue.path(str(run.path)),
            **run.summary.metadata(),
            **{f"log_{k}": v for k, v in status.items() if k != "commonest_error"},
            "commonest_error": status["commonest_error"] or "",
        },
    )


@dg.asset(
    partitions_def=system_lang_partitions,
    group_name=GROUP,
    deps=[results],
    kinds={"json"},
)
def scored_results(context: dg.AssetExecutionContext, chpit: ChpitStore) -> dg.MaterializeResult:
    """data/results/{system}/{lang}.scored.jsonl: latest answer per item in item order, re-scored (S1-S8)."""
    keys = context.partition_key.keys_by_dimension
    lines, missing = stage.score_partition(chpit.layout, keys["system"], keys["lang"])
    path = scored_path(chpit.results_dir, keys["system"], keys["lang"])
    return dg.MaterializeResult(
        data_version=_file_version(path),
        metadata={"path": dg.MetadataValue.path(str(path)), **_verdict_metadata(stage.verdict_counts(lines, missing))},
    )
