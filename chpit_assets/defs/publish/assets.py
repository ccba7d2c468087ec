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
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from chpit_assets.bench.frozen import load_frozen
from chpit_assets.bench.items import ITEM_CAP
from chpit_assets.fedlex.catalog_diff import promote_staged
from chpit_assets.pit.tools import PitTools
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
from chpit_assets.publish.folder import published_acts, publisher_lock, recover
from chpit_assets.publish.last_good import editions_on_last_good_file
from chpit_assets.publish.oracle import oracle_check
from chpit_assets.publish.whole_build import errored_lines, failed_editions, unstamped
from chpit_assets.runs.runner import read_jsonl, scored_path

from ..partitions import BENCH_LANGS
from ..resources import ChpitStore, FedlexSource
from ..runs.checks import oracle_failures

GROUP = "publish"
LOCAL_LOAD_NAME = "data/publish"  # the card's load_dataset name without a repo: the folder, from the project root


class Publication(dg.ConfigurableResource):
    """Where and whether to publish, and the gate's count bounds (docs/publishing.md)."""

    repo_id: str = ""  # Hub dataset repo, e.g. "overthelex/ch-pit"; empty = local only
    token_env: str = "HF_TOKEN"  # the variable NAME holding the token, never the token
    hub_endpoint: str = ""  # empty = huggingface_hub's default (which honours HF_ENDPOINT)
    min_items: dict[str, int] = {"de": 1}  # absolute floor per language
    max_items: int = ITEM_CAP  # per language (B14)
    max_drop_share: float = 0.01  # a language may lose at most min(this share of the live
    max_drop_items: int = 25  # publication's items, this many); an act never all of them
    lock_wait_s: float = 600.0  # how long a second publisher waits for the first

    def bounds(self) -> CountBounds:
        return CountBounds(dict(self.min_items), self.max_items, self.max_drop_share, self.max_drop_items)


def _candidate(chpit: ChpitStore) -> Candidate:
    return load_candidate(chpit.build_dir, chpit.results_dir, chpit.report_dir, BENCH_LANGS)


@contextmanager
def publishing(chpit: ChpitStore, publication: Publication, log) -> Iterator[None]:
    """The publisher lock (a second publisher waits, then fails naming the lock), and first of all
    the repair of what a killed publication left."""
    with publisher_lock(chpit.publish_dir, publication.lock_wait_s):
        for line in recover(chpit.publish_dir, chpit.build_dir):
            log.warning(f"publish: {line}")
        yield


def run_gate(chpit: ChpitStore, publication: Publication) -> tuple[Candidate, GateReport]:
    """The CRITICAL gate over the current build, against the live publication and the frozen record.
    Call it inside `publishing`. The oracle looks up every item of this very candidate."""
    candidate = _candidate(chpit)
    scored = {}
    for lang in BENCH_LANGS:
        path = scored_path(chpit.results_dir, "oracle", lang)
        scored[lang] = {line["id"] for line in read_jsonl(path)} if path.exists() else set()
    tools = PitTools(chpit.released_store())
    with tools.session():
        published_oracle = oracle_check(candidate.items, tools)
    report = evaluate_gate(
        candidate,
        failed_editions=failed_editions(chpit.released_store()),
        errored_lines=errored_lines(chpit.results_dir),
        unstamped=unstamped(candidate.items, chpit.results_dir),
        oracle_failures=oracle_failures(chpit),
        oracle_scored_ids=scored,
        published_oracle=published_oracle,
        frozen={lang: load_frozen(chpit.frozen_path, lang) for lang in BENCH_LANGS},
        previous_acts=published_acts(chpit.publish_dir),
        bounds=publication.bounds(),
    )
    return candidate, report


def gate_notes(chpit: ChpitStore, gate: GateReport) -> dict:
    """What the gate shows besides pass/fail (on item_counts_in_bounds and hf_dataset): the count changes,
    the editions on their last good file and the sha256 per language of what the oracle checked."""
    last_good = editions_on_last_good_file(chpit.released_store())
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
    candidate = _candidate(chpit)
    last_good = editions_on_last_good_file(chpit.released_store())
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
    with publishing(chpit, publication, context.log):
        candidate, gate = run_gate(chpit, publication)
        notes = gate_notes(chpit, gate)
        if not gate.passed:
            # The same failure the blocking checks show; raised here too so nothing is published.
            raise dg.Failure(
                description=f"{gate.summary()}; data/publish/ left as it was",
                metadata={**{o.name: offenders_md(o.offenders) for o in gate.outcomes if not o.passed}, **notes},
            )
        target, local_reason = hub_target(
            publication.repo_id, os.environ.get(publication.token_env), publication.token_env, publication.hub_endpoint
        )
        try:
            result = publish(
                candidate,
                gate,
                chpit.publish_dir,
                hub=target,
                local_reason=local_reason,
                frozen_dir=chpit.frozen_path,
                load_name=publication.repo_id or LOCAL_LOAD_NAME,
            )
        except GateFailed as exc:
            raise dg.Failure(description=f"{exc}; data/publish/ left as it was", metadata=notes) from exc
        except UploadError as exc:
            raise dg.Failure(
                description=f"{exc}; {chpit.publish_dir} holds the gated build, the frozen record "
                "is unchanged; re-run hf_dataset to retry the upload"
            ) from exc
    # What this publication was built from is now the new-edition sensor's baseline.
    built = promote_staged(
        chpit.built_catalog_path(fedlex.source_id),
        [chpit.staged_catalog_path(fedlex.source_id, lang) for lang in BENCH_LANGS],
    )
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
