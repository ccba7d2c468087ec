"""The code location: the `chpit_assets.defs` folder loaded as a whole (`dg.load_defs`).

Each domain's `defs/<domain>/{assets,checks,resources}.py` declares its own definitions and the
resources its assets use; jobs, the nightly schedule, the new-edition sensor and the automation
sensor live in `defs/ops` (docs/scheduling.md). Here only what spans domains is added: owners and
tags per group, build_report's automation condition, and the executor. Resources resolve their
folders when used, not here (chpit_assets.defs.resources), so loading this module reads no environment.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar, cast

import dagster as dg

from chpit_assets import defs as defs_package

from .defs.ops.automation import REPORT_AUTOMATION
from .executors import chpit_executor

T = TypeVar("T")

OWNERS = {
    "fedlex": "team:fedlex-ingest",
    "bench": "team:bench-builder",
    "search": "team:bench-builder",
    "runs": "team:bench-runs",
    "report": "team:bench-runs",
    "publish": "team:publication",
}
"""Who answers for each asset group (issue 14.6); set here so the domains' asset files stay about their data."""


def _operations(spec: dg.AssetSpec) -> dg.AssetSpec:
    # Ownership and when an asset re-runs are operations decisions, made here, not in each domain's assets.
    group = spec.group_name or "default"
    spec = spec.merge_attributes(owners=[OWNERS[group]] if group in OWNERS else [], tags={"chpit/group": group})
    if spec.key == dg.AssetKey("build_report"):
        spec = spec.replace_attributes(automation_condition=REPORT_AUTOMATION)
    return spec


def build_definitions(resources: dict[str, dg.ConfigurableResource] | None = None) -> dg.Definitions:
    """The defs folder loaded as a whole, with owners, tags and the executor applied; `resources`
    replaces some of its resources (the tests give their own data folder)."""
    # The folder holding the package: a checkout need not carry pyproject.toml (the tests' project copies).
    loaded = dg.load_defs(defs_root=defs_package, project_root=Path(__file__).resolve().parents[1])
    # A module that imports another's definition (checks import their asset) lists it again: once each.
    assets = _once(loaded.assets or [])
    assert all(isinstance(a, dg.AssetsDefinition) for a in assets)  # no source or cacheable assets here
    return dg.Definitions(
        assets=dg.map_asset_specs(_operations, cast(list[dg.AssetsDefinition], assets)),
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
