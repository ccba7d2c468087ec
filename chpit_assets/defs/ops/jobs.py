"""The jobs the schedule, the sensor and the UI's launchpad name.

The pipeline itself is the asset graph: one invocation (`make run`, `python -m chpit_assets run|nightly`,
the 03:30 schedule, the new-edition sensor) is one asset backfill over it (chpit_assets.orchestration),
whose runs are runs of the code location's asset job. `build` is the per-language build a user may launch by
hand from the launchpad (an asset job cannot span the lang and the (system, lang) axes).
"""

import dagster as dg

build_job = dg.define_asset_job(
    "build",
    selection=dg.AssetSelection.groups("fedlex", "bench", "search") - dg.AssetSelection.assets("build_report"),
    description="One language: Fedlex catalog -> editions -> parsed articles -> changes -> items -> core split, "
    "and the search index and track.",
)
