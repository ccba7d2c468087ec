"""The code location: every asset and check under `chpit_assets.defs`, bound to the resources.

Jobs, the nightly schedule, the new-edition sensor and the automation sensor live in
`chpit_assets.defs.ops` (docs/scheduling.md).
"""

from __future__ import annotations

import dagster as dg

from chpit_assets import defs as defs_package

from .defs.ops.automation import REPORT_AUTOMATION, automation_sensor
from .defs.ops.jobs import build_job, build_report_job
from .defs.ops.schedules import nightly_build
from .defs.ops.sensors import new_edition_sensor
from .defs.resources import ChpitStore, FedlexSource
from .executors import chpit_executor


def _with_report_automation(spec: dg.AssetSpec) -> dg.AssetSpec:
    # build_report is defined with the builder; when it re-runs is an operations decision, made here.
    if spec.key == dg.AssetKey("build_report"):
        return spec.replace_attributes(automation_condition=REPORT_AUTOMATION)
    return spec


def build_definitions() -> dg.Definitions:
    assets = dg.map_asset_specs(_with_report_automation, dg.load_assets_from_package_module(defs_package))
    checks = dg.load_asset_checks_from_package_module(defs_package)
    return dg.Definitions(
        assets=assets,
        asset_checks=checks,
        executor=chpit_executor,
        jobs=[build_job, build_report_job],
        schedules=[nightly_build],
        sensors=[new_edition_sensor, automation_sensor],
        resources={
            "chpit": ChpitStore(data_dir=dg.EnvVar("CHPIT_DATA_DIR").get_value("data")),
            "fedlex": FedlexSource(),
        },
    )


defs = build_definitions()
