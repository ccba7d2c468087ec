"""release[revision] -> release_results[release|system] (issue 24): a published CH-PiT release pulled
from the Hub and validated, then systems run on its core beside the published rows.

Partitioned by release: register a revision with `register_releases(instance, ["v2026.09"])`, and a
system with the runs' `register_systems`, then materialise. Thin: chpit_assets/release does the work.
"""

import json
from collections.abc import Sequence

import dagster as dg

from chpit_assets.pit.tools import PitTools
from chpit_assets.release import ReleaseError, pull, validate_release
from chpit_assets.release.layout import checked_name
from chpit_assets.release.report import write_release_report
from chpit_assets.release.run import run_release
from chpit_assets.runs.systems import parse_system_key

from ..resources import ChpitStore
from ..runs.assets import systems_partitions
from ..runs.resources import ModelEndpoint

GROUP = "release"
RELEASES_AXIS = "releases"
release_partitions = dg.DynamicPartitionsDefinition(name=RELEASES_AXIS)
PUBLISHED_REPO = "overthelex/ch-pit"


def register_releases(instance: dg.DagsterInstance, revisions: Sequence[str]) -> None:
    for revision in revisions:
        checked_name(revision)
    instance.add_dynamic_partitions(RELEASES_AXIS, list(revisions))


class ReleaseConfig(dg.Config):
    repo_id: str = PUBLISHED_REPO  # the Hub dataset; HF_ENDPOINT / HF_TOKEN say where and as whom


@dg.asset(partitions_def=release_partitions, group_name=GROUP, kinds={"parquet", "json"})
def release(context: dg.AssetExecutionContext, config: ReleaseConfig, chpit: ChpitStore) -> dg.MaterializeResult:
    """data/releases/{revision}/: the release's files as published, their sha256 (pull.json), validated:
    counts, unique ids, core flags, parquet = raw, a gold-only unit per item, our oracle 1.000."""
    try:
        pulled = pull(config.repo_id, context.partition_key, chpit.root)
        counts = validate_release(pulled)
    except ReleaseError as exc:
        raise dg.Failure(str(exc), metadata={"file": exc.file}) from None
    manifest = pulled.manifest() or {}
    return dg.MaterializeResult(
        data_version=dg.DataVersion(manifest.get("commit") or "unknown"),
        metadata={
            "path": dg.MetadataValue.path(str(pulled.files)),
            "commit": manifest.get("commit") or "",
            "files": len(manifest.get("files", {})),
            "counts": dg.MetadataValue.json(counts),
        },
    )


class ReleaseRunConfig(dg.Config):
    langs: list[str] = []  # empty = every language of the release
    sample_per_lang: int = 0  # PROTOCOL §6 subsample of the core; 0 = all of it
    limit: int = 0
    retry_errors: bool = True
    new_run: bool = False


@dg.asset(
    partitions_def=dg.MultiPartitionsDefinition({"release": release_partitions, "system": systems_partitions}),
    group_name=GROUP,
    deps=[dg.AssetDep(release, partition_mapping=dg.MultiToSingleDimensionPartitionMapping("release"))],
    kinds={"json"},
)
def release_results(
    context: dg.AssetExecutionContext, config: ReleaseRunConfig, chpit: ChpitStore, model: ModelEndpoint
) -> dg.MaterializeResult:
    """data/releases/{revision}/results/{system}/{lang}.jsonl: a system on the release's core with the
    published contexts (chpit_assets/release/run.py), then the report beside the published rows."""
    keys = context.partition_key.keys_by_dimension
    system = keys["system"]
    tools = PitTools(chpit.released_store()) if chpit.store_path.exists() else None
    try:
        with model.endpoints(parse_system_key(system).slug) as endpoints:
            run = run_release(
                f"release:{keys['release']}",
                [system],
                chpit.root,
                langs=config.langs or None,
                tools=tools,
                endpoints=endpoints,
                confirm=model.confirm,
                sample_per_lang=config.sample_per_lang,
                limit=config.limit,
                workers=model.workers,
                retry_errors=config.retry_errors,
                new_run=config.new_run,
                echo=context.log.warning,
            )
    except ReleaseError as exc:
        raise dg.Failure(str(exc), metadata={"file": exc.file}) from None
    paths = write_release_report(run.release)
    rescore = json.loads(paths["rescore.json"].read_text(encoding="utf-8"))
    return dg.MaterializeResult(
        metadata={
            "results": dg.MetadataValue.path(str(run.release.results_dir)),
            "report": dg.MetadataValue.path(str(run.release.report_dir)),
            "asked": sum(s.asked for s in run.summaries),
            "errors": sum(s.errors for s in run.summaries),
            "published_report_reproduced": rescore["reproduced"],
        },
    )
