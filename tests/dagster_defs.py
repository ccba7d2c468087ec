"""The code location's assets and checks bound to a data folder of a test's own."""

from __future__ import annotations

import warnings
from pathlib import Path

import dagster as dg

from chpit_assets.defs.resources import ChpitStore, FedlexSource


def defs_for(data_dir: Path) -> dg.Definitions:
    from chpit_assets import defs as defs_package

    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    warnings.filterwarnings("ignore", category=dg.PreviewWarning)
    return dg.Definitions(
        assets=dg.load_assets_from_package_module(defs_package),
        asset_checks=dg.load_asset_checks_from_package_module(defs_package),
        resources={"chpit": ChpitStore(data_dir=str(data_dir)), "fedlex": FedlexSource()},
    )
