"""The code location's own definitions, bound to a data folder of a test's own."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import dagster as dg

from chpit_assets.defs.resources import ChpitStore


def defs_for(data_dir: Path) -> dg.Definitions:
    """What ships (`chpit_assets.definitions.build_definitions`), only its data folder replaced."""
    from chpit_assets.definitions import build_definitions

    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    warnings.filterwarnings("ignore", category=dg.PreviewWarning)
    return build_definitions({"chpit": ChpitStore(data_dir=str(data_dir))})


def run_benchmark(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    systems: Sequence[str],
    langs: Sequence[str],
    run_config: dict | None = None,
    echo: Callable[[str], None] = print,
) -> bool:
    """The stages after the build, in this process, one run each as a backfill would run them: the
    oracle gate (nothing else when its blocking check fails), each (system, lang), the report.
    True when the gate passed and everything materialised."""
    from chpit_assets.orchestration.request import register

    register(instance, langs, systems)
    job = defs.resolve_implicit_global_asset_job_def()

    def stage(keys: list[str], **kwargs) -> dg.ExecuteInProcessResult:
        selection = [dg.AssetKey(k) for k in keys]
        return job.execute_in_process(
            instance=instance, asset_selection=selection, raise_on_error=False, run_config=run_config, **kwargs
        )

    gate = stage(["oracle_gate"])
    checks = gate.get_asset_check_evaluations()
    passed = gate.success and bool(checks) and all(c.passed for c in checks)
    echo(f"oracle_gate: {'passed' if passed else 'FAILED - nothing downstream runs'} (run {gate.run_id})")
    if not passed:
        return False
    ok = True
    for system in systems:
        for lang in langs:
            partition = dg.MultiPartitionKey({"system": system, "lang": lang})
            result = stage(["results", "scored_results"], partition_key=partition)
            echo(f"results [{system}|{lang}]: {'ok' if result.success else 'FAILED'} (run {result.run_id})")
            ok &= result.success
    report = stage(["report"])
    echo(f"report: {'ok' if report.success else 'FAILED'} (run {report.run_id})")
    return ok and report.success
