"""The CRITICAL publication gate as blocking asset checks on publish_gate (one check per rule).

One evaluation (`run_gate`) yields every check's result, so the candidate is read once; each
result names its rule in the description and its offenders (language, item ids) in metadata,
which is what the UI shows for a failed gate.
"""

import dagster as dg

from chpit_assets.publish import CRITICAL_CHECKS, stage

from ..resources import ChpitStore
from .assets import gate_notes, offenders_md, publish_gate
from .resources import Publication


@dg.multi_asset_check(
    specs=[
        dg.AssetCheckSpec(name, asset=publish_gate, blocking=True, description=description)
        for name, description in CRITICAL_CHECKS.items()
    ],
)
def publication_gate(context: dg.AssetCheckExecutionContext, chpit: ChpitStore, publication: Publication):
    with stage.publishing(chpit.layout, publication.lock_wait_s, context.log.warning):
        _, gate = stage.run_gate(chpit.layout, publication.bounds())
    notes = gate_notes(chpit, gate)
    for outcome in gate.outcomes:
        yield dg.AssetCheckResult(
            check_name=outcome.name,
            asset_key=publish_gate.key,
            passed=outcome.passed,
            severity=dg.AssetCheckSeverity.ERROR,
            description=outcome.description if outcome.passed else f"FAILED: {'; '.join(outcome.offenders[:5])}",
            metadata={
                "failing": len(outcome.offenders),
                "offenders": offenders_md(outcome.offenders),
                "candidate": gate.candidate_digest,
                **(notes if outcome.name == "item_counts_in_bounds" else {}),
            },
        )
