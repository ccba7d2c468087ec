"""publish_gate [CRITICAL blocking checks] -> hf_dataset: data/publish/ (R5), uploaded only when asked.

`publish_gate` names the candidate (the build's items, recite-stamped, with the build report and
the report's table); its blocking checks (`checks.py`) are the CRITICAL gate, so in a run that
selects both, a failed check stops `hf_dataset` before it starts. `hf_dataset` evaluates the same
gate again on the exact candidate it publishes and refuses on failure: a run that selects it alone,
or a build that changed after the gate ran, cannot publish either. Settings are one resource,
`publication`, shared by the checks and `hf_dataset` (run config `resources: {publication: ...}`).

Both evaluate the gate holding the publisher lock, after repairing what a killed publication
left (`publish.folder.recover`): a swap interrupted in a previous run is undone or completed
before anything is read, whether this run's gate then passes or not.
"""

import os

import dagster as dg

from chpit_assets.publish import GateFailed, GateReport, UploadError, stage

from ..resources import ChpitStore, FedlexSource
from .resources import Publication

GROUP = "publish"


def gate_notes(chpit: ChpitStore, gate: GateReport) -> dict:
    """What the gate shows besides pass/fail (on item_counts_in_bounds and hf_dataset): the count changes,
    the editions on their last good file and the sha256 per language of what the oracle checked."""
    last_good = stage.last_good_editions(chpit.layout)
    return {
        "count_changes": offenders_md(gate.count_changes),
        "editions_on_last_good_file": len(last_good),
        "last_good_editions": offenders_md(last_good),
        "checked_sha256": dg.MetadataValue.json(gate.checked),
    }


def offenders_md(offenders: list[str], limit: int = 50) -> dg.MetadataValue:
    more = [f"- ... and {len(offenders) - limit} more"] if len(offenders) > limit else []
    return dg.MetadataValue.md("\n".join([f"- {o}" for o in offenders[:limit]] + more) or "none")


@dg.asset(group_name=GROUP, deps=["core_split", "build_report", "oracle_gate", "report"], kinds={"python"})
def publish_gate(context: dg.AssetExecutionContext, chpit: ChpitStore) -> dg.MaterializeResult:
    """The candidate publication; its CRITICAL blocking checks must pass before hf_dataset runs."""
    candidate = stage.candidate_of(chpit.layout)
    last_good = stage.last_good_editions(chpit.layout)
    if last_good:
        context.log.warning(f"publish_gate: {len(last_good)} editions on their last good file: {last_good[:5]}")
    return dg.MaterializeResult(
        data_version=dg.DataVersion(candidate.digest()[:16]),
        metadata={
            "build": candidate.build,
            "candidate": candidate.digest(),
            **{f"{lang}_items": len(items) for lang, items in candidate.items.items()},
            **{f"{lang}_core": len(candidate.core(lang)) for lang in candidate.items},
            "results_table": candidate.results_md is not None,
            "editions_on_last_good_file": len(last_good),
            "last_good_editions": offenders_md(last_good),
        },
    )


@dg.asset(group_name=GROUP, deps=[publish_gate], kinds={"parquet", "huggingface"})
def hf_dataset(
    context: dg.AssetExecutionContext, chpit: ChpitStore, publication: Publication, fedlex: FedlexSource
) -> dg.MaterializeResult:
    """data/publish/: parquet shards per language and split, the dataset card; Hub upload when configured."""
    layout = chpit.layout
    with stage.publishing(layout, publication.lock_wait_s, context.log.warning):
        candidate, gate = stage.run_gate(layout, publication.bounds())
        notes = gate_notes(chpit, gate)
        if not gate.passed:
            # The same failure the blocking checks show; raised here too so nothing is published.
            raise dg.Failure(
                description=f"{gate.summary()}; data/publish/ left as it was",
                metadata={**{o.name: offenders_md(o.offenders) for o in gate.outcomes if not o.passed}, **notes},
            )
        try:
            result = stage.publish_candidate(
                layout,
                candidate,
                gate,
                repo_id=publication.repo_id,
                token=os.environ.get(publication.token_env),
                token_env=publication.token_env,
                hub_endpoint=publication.hub_endpoint,
            )
        except GateFailed as exc:
            raise dg.Failure(description=f"{exc}; data/publish/ left as it was", metadata=notes) from exc
        except UploadError as exc:
            raise dg.Failure(
                description=f"{exc}; {chpit.publish_dir} holds the gated build, the frozen record "
                "is unchanged; re-run hf_dataset to retry the upload"
            ) from exc
    built = stage.record_as_built(layout, fedlex.source_id)
    if result.local_reason:
        context.log.warning(f"hf_dataset: {result.local_reason}; written to {result.folder} only")
    else:
        context.log.info(
            f"hf_dataset: uploaded {result.commit_url}; frozen record +{result.frozen_added}: "
            f"commit {chpit.frozen_path}/"
        )
    return dg.MaterializeResult(
        data_version=dg.DataVersion(candidate.digest()[:16]),
        metadata={
            "path": dg.MetadataValue.path(str(result.folder)),
            "build": candidate.build,
            "languages": ", ".join(candidate.published_langs),
            **{f"{lang}_items": len(candidate.items[lang]) for lang in candidate.published_langs},
            "files": dg.MetadataValue.md("\n".join(f"- `{p}` {h[:16]}" for p, h in result.files.items())),
            "upload": result.commit_url or result.local_reason,
            "frozen_added": dg.MetadataValue.json(result.frozen_added),
            "catalog_recorded_as_built": ", ".join(built),
            **notes,
        },
    )
