"""The asset jobs the schedule, the sensor and `python -m chpit_assets run` launch, by name."""

import dagster as dg

# Per language: Fedlex -> parsed articles -> changes -> items -> core split.
build_job = dg.define_asset_job(
    "build", selection=dg.AssetSelection.groups("fedlex", "bench") - dg.AssetSelection.assets("build_report")
)

# Across languages: build-report.json.
build_report_job = dg.define_asset_job("build_report_job", selection=dg.AssetSelection.assets("build_report"))
