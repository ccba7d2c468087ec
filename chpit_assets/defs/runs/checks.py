"""The oracle gate's blocking check (R1, issue 5 point 7)."""

import dagster as dg

from chpit_assets.runs.stage import oracle_failures

from ..resources import ChpitStore
from .assets import oracle_gate


@dg.asset_check(
    asset=oracle_gate,
    blocking=True,
    description="The oracle scores 1.000 grounded_correct, 0 errors, on every bench language; "
    "anything less is a builder or scorer bug and stops every run downstream.",
)
def oracle_scores_one(chpit: ChpitStore) -> dg.AssetCheckResult:
    bad = oracle_failures(chpit.layout)
    return dg.AssetCheckResult(
        passed=not bad,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"failures": dg.MetadataValue.md("\n".join(f"- {b}" for b in bad) or "none")},
    )
