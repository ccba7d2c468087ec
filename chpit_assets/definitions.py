"""The code location: the `chpit_assets.defs` folder loaded as a whole (`dg.load_from_defs_folder`).

Each domain's `defs/<domain>/{assets,checks,resources}.py` declares its own definitions and the
resources its assets use; the jobs, the nightly schedule and the new-edition sensor live in
`defs/ops` (docs/scheduling.md). Here only what spans domains is added: owners and tags per group,
the freshness policies, links from every asset to its source, and the executor. Resources resolve
their folders when used, not here (chpit_assets.defs.resources), so loading this module reads no
environment.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import TypeVar, cast

import dagster as dg

from .executors import chpit_executor

T = TypeVar("T")

# Output(data_version=...) is beta in Dagster 1.13: the code server and every run worker import this
# module, so the deliberate use is acknowledged here once instead of on every run's terminal.
warnings.filterwarnings("ignore", category=dg.BetaWarning)

PROJECT_ROOT = Path(__file__).resolve().parents[1]

OWNERS = {
    "fedlex": "team:fedlex-ingest",
    "bench": "team:bench-builder",
    "search": "team:bench-builder",
    "runs": "team:bench-runs",
    "report": "team:bench-runs",
    "publish": "team:publication",
    "release": "team:bench-runs",
}
"""Who answers for each asset group (issue 14.6); set here so the domains' asset files stay about their data."""

NIGHTLY_FRESHNESS = dg.FreshnessPolicy.time_window(fail_window=timedelta(hours=36), warn_window=timedelta(hours=26))
"""The report and the publication come from the nightly: 36 h without a successful one is a missed night and a half."""
FRESH = {dg.AssetKey("report"), dg.AssetKey("hf_dataset")}


def _operations(spec: dg.AssetSpec) -> dg.AssetSpec:
    # Ownership and freshness are operations decisions, made here, not in each domain's assets.
    group = spec.group_name or "default"
    spec = spec.merge_attributes(owners=[OWNERS[group]] if group in OWNERS else [], tags={"chpit/group": group})
    if spec.key in FRESH:
        spec = spec.replace_attributes(freshness_policy=NIGHTLY_FRESHNESS)
    return spec


def build_definitions(resources: dict[str, dg.ConfigurableResource] | None = None) -> dg.Definitions:
    """The defs folder loaded as a whole, with owners, tags, freshness, code references and the
    executor applied; `resources` replaces some of its resources (the tests give their own data folder)."""
    # The project's pyproject.toml ([tool.dg]) names the defs module; loaded from wherever the process started.
    loaded = dg.load_from_defs_folder(path_within_project=PROJECT_ROOT)
    # A module that imports another's definition (checks import their asset) lists it again: once each.
    assets = _once(loaded.assets or [])
    assert all(isinstance(a, dg.AssetsDefinition) for a in assets)  # no source or cacheable assets here
    operated = dg.map_asset_specs(_operations, cast(list[dg.AssetsDefinition], assets))
    return dg.Definitions(
        assets=dg.with_source_code_references(operated),
        asset_checks=_once(loaded.asset_checks or []),
        jobs=_once(loaded.jobs or []),
        schedules=_once(loaded.schedules or []),
        sensors=_once(loaded.sensors or []),
        executor=chpit_executor,
        resources={**(loaded.resources or {}), **(resources or {})},
    )


def _once(definitions: Iterable[T]) -> list[T]:
    return list({id(d): d for d in definitions}.values())


defs = build_definitions()
