"""release[revision]: a published CH-PiT release pulled from the Hub and validated (issue 24).

Partitioned by release: register a revision with `register_releases(instance, ["v2026.09"])` (the
CLI's `release pull` does), then materialise its partition. Thin: chpit_assets/release does the work.
"""

from collections.abc import Sequence

import dagster as dg

from chpit_assets.release import ReleaseError, pull, validate_release
from chpit_assets.release.layout import checked_name

from ..resources import ChpitStore

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
