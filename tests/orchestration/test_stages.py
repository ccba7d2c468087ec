"""Issue 22.8: what a backfill's runs did, read from Dagster's records, never from strings it wrote for
people: the stage from the run's selection and partition, each failure typed (step or check, the
innermost error's class, the whole reason)."""

from __future__ import annotations

import dagster as dg
import pytest

from chpit_assets.orchestration.stages import BUILD, CHAIN, SYSTEM, failures_of, kind_of, stage_of
from chpit_assets.orchestration.target import target_for


class CatalogBroken(RuntimeError):
    """Stands for a typed domain error (CatalogError, StoreError, ...)."""


@dg.asset
def upstream() -> None:
    raise CatalogBroken("the sample catalog lists no edition in 'rm'; refusing to clear it " + "x" * 300)


@dg.asset
def gated() -> None:
    return None


@dg.asset_check(asset=gated, blocking=True)
def scores_one() -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=False, description="de: 8/9 grounded_correct; first failing ids ['a1']")


def _run(keys: list[str], partition: str = "") -> dg.DagsterRun:
    tags = {"dagster/partition": partition} if partition else {}
    return dg.DagsterRun(job_name="__ASSET_JOB", asset_selection=frozenset(dg.AssetKey(k) for k in keys), tags=tags)


@pytest.mark.parametrize(
    "keys, partition, kind, stage",
    [
        (["fedlex_catalog", "parsed_articles", "core_split"], "de", BUILD, "build [de]"),
        (["results", "scored_results"], "fr|cite/pit", SYSTEM, "cite/pit [fr]"),
        (["hf_dataset", "report", "publish_gate"], "", CHAIN, "report, publish_gate, hf_dataset"),
        (["oracle_gate", "build_report"], "", CHAIN, "build_report, oracle_gate"),
    ],
)
def test_a_run_is_named_by_what_it_materialises(keys, partition, kind, stage):
    run = _run(keys, partition)
    assert (kind_of(run), stage_of(run)) == (kind, stage)


def test_failures_are_typed_and_never_cut():
    defs = dg.Definitions(assets=[upstream, gated], asset_checks=[scores_one])
    job = defs.resolve_implicit_global_asset_job_def()
    with dg.instance_for_test() as instance:
        failed = job.execute_in_process(instance=instance, asset_selection=[upstream.key], raise_on_error=False)
        checked = job.execute_in_process(instance=instance, asset_selection=[gated.key], raise_on_error=False)
        runs = [instance.get_run_by_id(r.run_id) for r in (failed, checked)]
        [step, check] = failures_of(instance, [r for r in runs if r is not None])
    assert (step.step, step.error) == ("upstream", "CatalogBroken")
    assert step.reason.startswith("the sample catalog lists no edition") and step.reason.endswith("x" * 300)
    assert step.line().count("CatalogBroken") == 1
    assert (check.step, check.error, check.reason) == (
        "scores_one",
        "check",
        "de: 8/9 grounded_correct; first failing ids ['a1']",
    )
    assert "check failed" in check.line()


def test_a_backfill_covers_the_build_axes_and_every_unpartitioned_asset_once():
    from chpit_assets.definitions import defs

    target = target_for(defs.resolve_asset_graph(), ["de", "en"], ["oracle", "recite"], publish=False)
    assert target.partitioned[dg.AssetKey("core_split")] == ["de", "en"]
    # Only published languages are run; en is built, never asked.
    assert sorted(target.partitioned[dg.AssetKey("results")]) == ["de|oracle", "de|recite"]
    assert dg.AssetKey("hf_dataset") not in target.unpartitioned and dg.AssetKey("report") in target.unpartitioned
    assert dg.AssetKey("release") not in target.keys  # another axis: a published release is no build of ours
