"""The code location's own definitions, bound to a data folder of a test's own."""

from __future__ import annotations

import warnings
from pathlib import Path

import dagster as dg

from chpit_assets.defs.resources import ChpitStore


def defs_for(data_dir: Path) -> dg.Definitions:
    """What ships (`chpit_assets.definitions.build_definitions`), only its data folder replaced."""
    from chpit_assets.definitions import build_definitions

    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    warnings.filterwarnings("ignore", category=dg.PreviewWarning)
    return build_definitions({"chpit": ChpitStore(data_dir=str(data_dir))})
