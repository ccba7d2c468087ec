"""What one invocation asks of the graph: the partitions (languages, systems), the run config every
run of its backfill gets, whether it may publish, and the cost estimate of a paid run.

Shared by the CLI (`run`, `nightly`), the nightly schedule and the new-edition sensor, so the
four differ only in the languages, systems and tags they pass.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import dagster as dg

from chpit_assets.bench.items import core_path
from chpit_assets.runs.runner import read_jsonl
from chpit_assets.runs.sample import select_items
from chpit_assets.runs.systems import LOOKUP_MODES, model_systems, parse_system_key

from .target import Target, target_for

QUIET_RUNS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""The backfill's runs keep their logs to the event log (the UI): on the terminal the driver's stage
lines and its typed failure summary are the story, not each step's traceback."""

NIGHTLY_SYSTEMS: tuple[str, ...] = LOOKUP_MODES
"""R3: what the schedule and the sensor run; a model system costs money and needs a person."""


class ModelSystemInNightly(ValueError):
    """A nightly (schedule, sensor, `nightly` command) asked for a system that calls a model (R3)."""


def register(instance: dg.DagsterInstance, langs: Sequence[str], systems: Sequence[str]) -> None:
    """The dynamic partitions the backfill covers, added before it is submitted."""
    from chpit_assets.defs.partitions import register_langs
    from chpit_assets.defs.runs.assets import register_systems

    register_langs(instance, langs)
    register_systems(instance, systems)


def nightly_target(asset_graph, langs: Sequence[str], systems: Sequence[str] = NIGHTLY_SYSTEMS) -> Target:
    paid = model_systems(systems)
    if paid:
        raise ModelSystemInNightly(f"the nightly never starts a model system (R3: spending needs a person): {paid}")
    return target_for(asset_graph, langs, systems, publish=True)


def run_config(
    *,
    fedlex: dict | None = None,
    model: dict | None = None,
    runs: dict | None = None,
    publication: dict | None = None,
    execution: dict | None = None,
    chpit: dict | None = None,
) -> dict:
    """One run config for every run of the backfill: resources (a run ignores those it does not use)
    and the executor (chpit_assets.executors: in_process, multiprocess or celery, for every stage)."""
    resources = {
        name: {"config": config}
        for name, config in (
            ("fedlex", fedlex),
            ("model", model),
            ("runs", runs),
            ("publication", publication),
            ("chpit", chpit),
        )
        if config
    }
    return {**QUIET_RUNS, "resources": resources, **({"execution": {"config": execution}} if execution else {})}


def _bounds(fedlex: dict, runs: dict) -> list[tuple[str, str]]:
    """What bounds a run, in a fixed order: (its CLI flag and value, its part of the run folder's name)."""
    sr_numbers = fedlex.get("sr_numbers") or []
    found = [(f"--sr-numbers {','.join(sr_numbers)}", f"sr-{'-'.join(sr_numbers)}")] if sr_numbers else []
    for flag, part, key in (("--sample-per-lang", "sample", "sample_per_lang"), ("--limit", "limit", "limit")):
        if runs.get(key):
            found.append((f"{flag} {runs[key]}", f"{part}-{runs[key]}"))
    return found


def partial_run(fedlex: dict, runs: dict) -> str:
    """Why this run covers less than the whole benchmark (so it is not published), or ""."""
    return ", ".join(reason for reason, _ in _bounds(fedlex, runs))


def bounded_run(fedlex: dict, runs: dict, data_root: Path) -> dict:
    """Issue 23.6: the `chpit` resource config of a bounded run, which never touches the full run's
    results, report or card. `--limit`/`--sample-per-lang` answer the full build's core, so only their
    results and report move to data/runs/<name>/; `--sr-numbers` is another build altogether (fewer
    acts), so its whole data folder is data/runs/<name>/. {} for a whole run."""
    name = "_".join(part for _, part in _bounds(fedlex, runs))
    if not name:
        return {}
    return {"data_dir": str(data_root / "runs" / name)} if fedlex.get("sr_numbers") else {"run_dir": name}


def spend_estimate(
    systems: Sequence[str], langs: Sequence[str], model: dict, runs: dict, build_dir
) -> tuple[list[str], str]:
    """PROTOCOL §7: what a paid run without confirmation prints before it stops (the results asset
    refuses with SpendNotConfirmedError before any call): per paid system the published estimate
    object `{<model slug>: {items, input_tokens, output_tokens, usd}, total_usd}` (for stdout), and
    the refusal naming the systems and what confirms (for stderr)."""
    from chpit_assets.defs.runs.resources import ModelEndpoint
    from chpit_assets.runs.client import EndpointConfig, dry_run_estimate, estimate_cost

    paid = model_systems(systems)
    endpoint = ModelEndpoint(**model)
    config = EndpointConfig(
        endpoint.resolved_base_url() or "http://127.0.0.1/",
        endpoint.model or endpoint.slug,
        price_input_per_mtok=endpoint.price_input_per_mtok,
        price_output_per_mtok=endpoint.price_output_per_mtok,
    )
    items = [
        item
        for lang in langs
        if core_path(build_dir, lang).exists()
        for item in select_items(
            read_jsonl(core_path(build_dir, lang)),
            sample_per_lang=runs.get("sample_per_lang", 0),
            limit=runs.get("limit", 0),
        )
    ]
    repeats = max(1, runs.get("repeats", 1))  # issue 25: every repeat is asked, so every repeat is paid for
    estimates = []
    for key in paid:
        tokens = [parse_system_key(key).estimate_tokens(item) for item in items]
        tokens_in, tokens_out = sum(t[0] for t in tokens), sum(t[1] for t in tokens)
        estimate = estimate_cost(config, len(items) * repeats, tokens_in * repeats, tokens_out * repeats)
        estimates.append(json.dumps(dry_run_estimate({config.model: estimate}), ensure_ascii=False))
    refusal = (
        f"not run: {', '.join(paid)} on {config.public_url}, a paid endpoint; pass --confirm-spend or set "
        "CHPIT_CONFIRM_SPEND=1 (the published CHPIT_CONFIRM=1 works too)"
    )
    return estimates, refusal
