"""The release asset, partitioned by release: a thin wrapper of pull + validate (issue 24 item 1)."""

from __future__ import annotations

import dagster as dg

from chpit_assets.defs.release.assets import register_releases, release
from chpit_assets.defs.resources import ChpitStore

from .conftest import REPO
from .factory import REVISION
from .hub import COMMIT


def _materialise() -> dg.ExecuteInProcessResult:
    with dg.instance_for_test() as instance:
        register_releases(instance, [REVISION])
        return dg.materialize(
            [release],
            instance=instance,
            partition_key=REVISION,
            resources={"chpit": ChpitStore()},
            run_config={"ops": {"release": {"config": {"repo_id": REPO}}}},
            raise_on_error=False,
        )


def test_materialising_a_release_partition_pulls_and_validates_it(hub, root):
    result = _materialise()
    assert result.success
    meta = result.asset_materializations_for_node("release")[0].metadata
    assert meta["commit"].value == COMMIT and meta["counts"].value["de"] == {"items": 8, "core": 4}
    assert (root / "releases" / REVISION / "pull.json").exists()


def test_a_bad_release_fails_the_materialisation_naming_the_file(hub, published, root):
    (published / "raw/core-fr.jsonl").unlink()
    result = _materialise()
    assert not result.success
    failure = result.get_step_failure_events()[0].step_failure_data.error
    assert "raw/core-fr.jsonl: missing from the release" in failure.message


def test_release_results_runs_a_system_on_the_pulled_release_and_reports(hub, root):
    from chpit_assets.defs.release.assets import release_results
    from chpit_assets.defs.runs.assets import register_systems
    from chpit_assets.defs.runs.resources import ModelEndpoint

    with dg.instance_for_test() as instance:
        register_releases(instance, [REVISION])
        register_systems(instance, ["oracle"])
        resources = {"chpit": ChpitStore(), "model": ModelEndpoint()}
        config = {"ops": {"release": {"config": {"repo_id": REPO}}}}
        assert dg.materialize(
            [release], instance=instance, partition_key=REVISION, resources=resources, run_config=config
        ).success
        key = dg.MultiPartitionKey({"release": REVISION, "system": "oracle"})
        result = dg.materialize(
            [release, release_results],
            instance=instance,
            partition_key=key,
            resources=resources,
            selection=[release_results],
        )
        meta = result.asset_materializations_for_node("release_results")[0].metadata
    assert (meta["asked"].value, meta["errors"].value, meta["published_report_reproduced"].value) == (12, 0, True)
    assert (root / "releases" / REVISION / "report" / "summary.md").exists()
