"""Materialise oracle gate -> results -> scored_results -> report in Dagster runs, for the CLI.

One Dagster run per stage (a run cannot mix the unpartitioned gate with the
(system, lang) partitions). The blocking check stops its own run's downstream;
across runs this function enforces the same rule: if `oracle_scores_one` did not
pass, no system is run and no report is written.
"""

from collections.abc import Sequence

import dagster as dg

from ..partitions import BENCH_LANGS, register_langs
from .assets import DEFAULT_SYSTEMS, register_systems


def run_benchmark(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    systems: Sequence[str] = DEFAULT_SYSTEMS,
    langs: Sequence[str] = BENCH_LANGS,
    run_config: dict | None = None,
    echo=print,
    tags: dict[str, str] | None = None,
) -> bool:
    """True when the gate passed and every (system, lang) partition and the report materialised."""
    register_systems(instance, systems)
    register_langs(instance, langs)
    job = defs.resolve_implicit_global_asset_job_def()
    gate = job.execute_in_process(
        instance=instance,
        asset_selection=[dg.AssetKey("oracle_gate")],
        raise_on_error=False,
        run_config=run_config,
        tags=tags,
    )
    checks = gate.get_asset_check_evaluations()
    passed = gate.success and bool(checks) and all(c.passed for c in checks)
    echo(f"oracle_gate: {'passed' if passed else 'FAILED - nothing downstream runs'} (run {gate.run_id})")
    if not passed:
        return False
    ok = True
    for system in systems:
        for lang in langs:
            result = job.execute_in_process(
                instance=instance,
                asset_selection=[dg.AssetKey("results"), dg.AssetKey("scored_results")],
                partition_key=dg.MultiPartitionKey({"system": system, "lang": lang}),
                raise_on_error=False,
                run_config=run_config,
                tags=tags,
            )
            echo(f"results [{system}|{lang}]: {'ok' if result.success else 'FAILED'} (run {result.run_id})")
            ok &= result.success
    report = job.execute_in_process(
        instance=instance,
        asset_selection=[dg.AssetKey("report")],
        raise_on_error=False,
        run_config=run_config,
        tags=tags,
    )
    echo(f"report: {'ok' if report.success else 'FAILED'} (run {report.run_id})")
    return ok and report.success
