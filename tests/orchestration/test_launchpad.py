"""Issue 23.8: every job the code location ships (the `build` job and the asset job whose runs a CLI
backfill launches) runs from the Launchpad with an empty config: each resource and executor field
has a default, so a user who clicks Materialize is never asked to fill one in first."""

from __future__ import annotations

import dagster as dg

from chpit_assets.definitions import defs


def _jobs() -> list:
    jobs = list(defs.resolve_all_job_defs())
    names = {job.name for job in jobs}
    assert {"build", "__ASSET_JOB"} <= names, names
    return jobs


def test_every_job_validates_an_empty_run_config():
    for job in _jobs():
        validated = dg.validate_run_config(job, {})
        # The defaults reach the resources the CLI configures, so the UI shows them filled in.
        assert "resources" in validated and "execution" in validated, job.name


def test_the_asset_job_defaults_are_the_clis_defaults():
    """What a Launchpad run of the asset job gets is what `make run` asks for: the sample source,
    every item, the local model slug, no spend confirmed."""
    job = defs.resolve_implicit_global_asset_job_def()
    resources = dg.validate_run_config(job, {})["resources"]
    assert resources["runs"]["config"]["limit"] == 0 and resources["runs"]["config"]["sample_per_lang"] == 0
    assert resources["model"]["config"]["confirm"] is False
    assert resources["fedlex"]["config"]["mode"] == "sample"
