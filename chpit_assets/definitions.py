"""The code location: every asset and check under `chpit_assets.defs`, bound to the resources."""

from __future__ import annotations

import dagster as dg

from chpit_assets import defs as defs_package

from .defs.resources import ChpitStore, FedlexSource
from .executors import chpit_executor


def build_definitions() -> dg.Definitions:
    assets = dg.load_assets_from_package_module(defs_package)
    checks = dg.load_asset_checks_from_package_module(defs_package)
    return dg.Definitions(
        assets=assets,
        asset_checks=checks,
        executor=chpit_executor,
        jobs=[
            # Per language: Fedlex -> parsed articles -> changes -> items -> core split.
            dg.define_asset_job(
                "build", selection=dg.AssetSelection.groups("fedlex", "bench") - dg.AssetSelection.assets("build_report")
            ),
            # Across languages: build-report.json.
            dg.define_asset_job("build_report_job", selection=dg.AssetSelection.assets("build_report")),
        ],
        resources={
            "chpit": ChpitStore(data_dir=dg.EnvVar("CHPIT_DATA_DIR").get_value("data")),
            "fedlex": FedlexSource(),
        },
    )


defs = build_definitions()
