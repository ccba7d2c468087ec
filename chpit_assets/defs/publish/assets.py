"""publish_gate [CRITICAL blocking checks] -> hf_dataset: data/publish/ (R5), uploaded only when asked.

`publish_gate` names the candidate (the build's items, recite-stamped, with the build report and
the report's table); its blocking checks (`checks.py`) are the CRITICAL gate, so in a run that
selects both, a failed check stops `hf_dataset` before it starts. `hf_dataset` evaluates the same
gate again on the exact candidate it publishes and refuses on failure: a run that selects it alone,
or a build that changed after the gate ran, cannot publish either. Settings are one resource,
`publication`, shared by the checks and `hf_dataset` (run config `resources: {publication: ...}`).
"""

import os

import dagster as dg

from chpit_assets.bench.frozen import DEFAULT_FROZEN_DIR, load_frozen
from chpit_assets.bench.items import ITEM_CAP
from chpit_assets.publish import (
    Candidate,
    CountBounds,
    GateFailed,
    GateReport,
    UploadError,
    evaluate_gate,
    hub_target,
    load_candidate,
    publish,
)
from chpit_assets.publish.folder import published_counts
from chpit_assets.runs.runner import read_jsonl, scored_path

from ..partitions import BENCH_LANGS
from ..resources import ChpitStore
from ..runs.checks import oracle_failures

GROUP = "publish"
LOCAL_LOAD_NAME = "data/publish"  # the card's load_dataset name without a repo: the folder, from the project root


class Publication(dg.ConfigurableResource):
    """Where and whether to publish, and the gate's count bounds (docs/publishing.md)."""

    repo_id: str = ""                   # Hub dataset repo, e.g. "overthelex/ch-pit"; empty = local only
    token_env: str = "HF_TOKEN"         # the variable NAME holding the token, never the token
    hub_endpoint: str = ""              # empty = huggingface_hub's default (which honours HF_ENDPOINT)
    frozen_dir: str = DEFAULT_FROZEN_DIR  # B18 record: checked by the gate, grown after an upload
    min_items: dict[str, int] = {"de": 1}   # absolute floor per language
    max_items: int = ITEM_CAP               # per language (B14)
    max_drop: float = 0.1                   # at most this share fewer items than the live publication

    def bounds(self) -> CountBounds:
        return CountBounds(dict(self.min_items), self.max_items, self.max_drop)


PUBLICATION = Publication.configure_at_launch()
"""One definition object, bound on the checks and on hf_dataset, so the two read the same settings."""


def _candidate(chpit: ChpitStore) -> Candidate:
    return load_candidate(chpit.build_dir, chpit.results_dir, chpit.report_dir, BENCH_LANGS)


def run_gate(chpit: ChpitStore, publication: Publication) -> tuple[Candidate, GateReport]:
    """The CRITICAL gate over the current build, against the live publication and the frozen record."""
    candidate = _candidate(chpit)
    scored = {}
    for lang in BENCH_LANGS:
        path = scored_path(chpit.results_dir, "oracle", lang)
        scored[lang] = {line["id"] for line in read_jsonl(path)} if path.exists() else set()
    report = evaluate_gate(
        candidate,
        oracle_failures=oracle_failures(chpit),
        oracle_scored_ids=scored,
        frozen={lang: load_frozen(publication.frozen_dir, lang) for lang in BENCH_LANGS},
        previous_counts=published_counts(chpit.publish_dir),
        bounds=publication.bounds(),
    )
    return candidate, report


def offenders_md(offenders: list[str], limit: int = 50) -> dg.MetadataValue:
    more = [f"- ... and {len(offenders) - limit} more"] if len(offenders) > limit else []
    return dg.MetadataValue.md("\n".join([f"- {o}" for o in offenders[:limit]] + more) or "none")


@dg.asset(group_name=GROUP, deps=["core_split", "build_report", "oracle_gate", "report"], kinds={"python"})
def publish_gate(context: dg.AssetExecutionContext, chpit: ChpitStore) -> dg.MaterializeResult:
    """The candidate publication; its CRITICAL blocking checks must pass before hf_dataset runs."""
    candidate = _candidate(chpit)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(candidate.digest()[:16]),
        metadata={
            "build": candidate.build,
            "candidate": candidate.digest(),
            **{f"{lang}_items": len(items) for lang, items in candidate.items.items()},
            **{f"{lang}_core": len(candidate.core(lang)) for lang in candidate.items},
            "results_table": candidate.results_md is not None,
        },
    )


@dg.asset(group_name=GROUP, deps=[publish_gate], kinds={"parquet", "huggingface"},
          resource_defs={"publication": PUBLICATION})
def hf_dataset(context: dg.AssetExecutionContext, chpit: ChpitStore, publication: Publication) -> dg.MaterializeResult:
    """data/publish/: parquet shards per language and split, the dataset card; Hub upload when configured."""
    candidate, gate = run_gate(chpit, publication)
    if not gate.passed:
        # The same failure the blocking checks show; raised here too so nothing is published.
        raise dg.Failure(
            description=f"{gate.summary()}; data/publish/ left as it was",
            metadata={o.name: offenders_md(o.offenders) for o in gate.outcomes if not o.passed},
        )
    target, local_reason = hub_target(publication.repo_id, os.environ.get(publication.token_env),
                                      publication.token_env, publication.hub_endpoint)
    try:
        result = publish(candidate, gate, chpit.publish_dir, hub=target, local_reason=local_reason,
                         frozen_dir=publication.frozen_dir, load_name=publication.repo_id or LOCAL_LOAD_NAME)
    except GateFailed as exc:
        raise dg.Failure(description=str(exc)) from exc
    except UploadError as exc:
        raise dg.Failure(description=f"{exc}; {chpit.publish_dir} holds the gated build, the frozen record is "
                                     "unchanged; re-run hf_dataset to retry the upload") from exc
    if result.local_reason:
        context.log.warning(f"hf_dataset: {result.local_reason}; written to {result.folder} only")
    else:
        context.log.info(f"hf_dataset: uploaded {result.commit_url}; frozen record +{result.frozen_added}: "
                         f"commit {publication.frozen_dir}/")
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
        },
    )
