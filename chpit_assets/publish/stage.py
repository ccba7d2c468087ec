"""The publication's stages over the data folder (issue 22.8): the candidate, the CRITICAL gate on it
under the publisher lock, the publication itself and the sensor's new baseline. Plain Python over
a `Layout`; the Dagster assets and checks (`chpit_assets/defs/publish/`) read their resources, call
these, and turn failures and offenders into Dagster failures and metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from chpit_assets.bench.frozen import load_frozen
from chpit_assets.fedlex.catalog_diff import promote_staged
from chpit_assets.langs import BENCH_LANGS
from chpit_assets.layout import Layout
from chpit_assets.pit.tools import PitTools
from chpit_assets.runs.runner import read_jsonl, scored_path
from chpit_assets.runs.stage import oracle_failures

from .candidate import Candidate, load_candidate
from .folder import published_acts, publisher_lock, recover
from .gate import CountBounds, GateReport, evaluate_gate
from .hub import hub_target
from .last_good import editions_on_last_good_file
from .oracle import oracle_check
from .publication import Published, publish
from .whole_build import errored_lines, failed_editions, unstamped

LOCAL_LOAD_NAME = "data/publish"  # the card's load_dataset name without a repo: the folder, from the project root


def candidate_of(layout: Layout) -> Candidate:
    """The candidate publication: the build's items, recite-stamped, with the build report and the report's table."""
    return load_candidate(layout.build_dir, layout.results_dir, layout.report_dir, BENCH_LANGS)


def last_good_editions(layout: Layout) -> list[str]:
    """The editions the build took from their last good file (their newest one failed to parse)."""
    return editions_on_last_good_file(layout.released_store())


@contextmanager
def publishing(layout: Layout, lock_wait_s: float, warn: Callable[[str], None]) -> Iterator[None]:
    """The publisher lock (a second publisher waits, then fails naming the lock), and first of all
    the repair of what a killed publication left."""
    with publisher_lock(layout.publish_dir, lock_wait_s):
        for line in recover(layout.publish_dir, layout.build_dir):
            warn(f"publish: {line}")
        yield


def run_gate(layout: Layout, bounds: CountBounds) -> tuple[Candidate, GateReport]:
    """The CRITICAL gate over the current build, against the live publication and the frozen record.
    Call it inside `publishing`. The oracle looks up every item of this very candidate."""
    candidate = candidate_of(layout)
    scored = {}
    for lang in BENCH_LANGS:
        path = scored_path(layout.results_dir, "oracle", lang)
        scored[lang] = {line["id"] for line in read_jsonl(path)} if path.exists() else set()
    tools = PitTools(layout.released_store())
    with tools.session():
        published_oracle = oracle_check(candidate.items, tools)
    report = evaluate_gate(
        candidate,
        failed_editions=failed_editions(layout.released_store()),
        errored_lines=errored_lines(layout.results_dir),
        unstamped=unstamped(candidate.items, layout.results_dir),
        oracle_failures=oracle_failures(layout),
        oracle_scored_ids=scored,
        published_oracle=published_oracle,
        frozen={lang: load_frozen(layout.frozen_path, lang) for lang in BENCH_LANGS},
        previous_acts=published_acts(layout.publish_dir),
        bounds=bounds,
    )
    return candidate, report


def publish_candidate(
    layout: Layout,
    candidate: Candidate,
    gate: GateReport,
    *,
    repo_id: str,
    token: str | None,
    token_env: str,
    hub_endpoint: str,
) -> Published:
    """data/publish/ from the gated candidate, uploaded when a repo and its token are configured.
    Call it inside `publishing`; raises GateFailed (nothing live touched) or UploadError."""
    target, local_reason = hub_target(repo_id, token, token_env, hub_endpoint)
    return publish(
        candidate,
        gate,
        layout.publish_dir,
        hub=target,
        local_reason=local_reason,
        frozen_dir=layout.frozen_path,
        load_name=repo_id or LOCAL_LOAD_NAME,
    )


def record_as_built(layout: Layout, source_id: str) -> list[str]:
    """What the publication was built from becomes the new-edition sensor's baseline; returns its languages."""
    return promote_staged(
        layout.built_catalog_path(source_id),
        [layout.staged_catalog_path(source_id, lang) for lang in BENCH_LANGS],
    )
