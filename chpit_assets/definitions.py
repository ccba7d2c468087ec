"""The code location: every asset and check under `chpit_assets.defs`, bound to the resources.

Jobs, the nightly schedule, the new-edition sensor and the automation sensor live in
`chpit_assets.defs.ops` (docs/scheduling.md). Resources resolve their folders when used, not
here (chpit_assets.defs.resources), so loading this module reads no environment.
"""

from __future__ import annotations

from typing import cast

import dagster as dg

from chpit_assets import defs as defs_package

from .defs.ops.automation import REPORT_AUTOMATION, automation_sensor
from .defs.ops.jobs import benchmark_job, build_job, build_report_job, nightly_job
from .defs.ops.schedules import nightly_build
from .defs.ops.sensors import new_edition_sensor
from .defs.resources import ChpitStore, FedlexSource
from .executors import chpit_executor

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
    """The code location; `resources` replaces some of its resources (the tests give their own data folder)."""
    loaded = dg.load_assets_from_package_module(defs_package)
    assert all(isinstance(a, dg.AssetsDefinition) for a in loaded)  # no source or cacheable assets here
    assets = dg.map_asset_specs(_operations, cast(list[dg.AssetsDefinition], loaded))
    checks = dg.load_asset_checks_from_package_module(defs_package)
    return dg.Definitions(
        assets=assets,
        asset_checks=checks,
        executor=chpit_executor,
        jobs=[build_job, build_report_job, nightly_job, benchmark_job],
        schedules=[nightly_build],
        sensors=[new_edition_sensor, automation_sensor],
        resources={"chpit": ChpitStore(), "fedlex": FedlexSource(), **(resources or {})},
    )


defs = build_definitions()
