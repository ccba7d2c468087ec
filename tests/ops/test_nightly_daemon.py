"""Issue 18 acceptance with the real daemon, started from another directory (18.3): the new-edition
sensor's tick requests one backfill for French, which the daemon carries to the publication (issue 22.2):
every stage a run of the code location's asset job, launched by the daemon, tagged with the backfill."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import dagster as dg

from chpit_assets.orchestration.backfill import DONE, runs_of
from chpit_assets.orchestration.stages import stage_of
from tests.ops_schedule.nightly_project import DSG_FR_2023, copy_project, items, published_ids, run, set_edition

from .conftest import Spawn


def test_the_sensor_tick_publishes_a_new_french_edition_through_the_daemon(
    tmp_path, base_env, spawn: Spawn, monkeypatch
):
    monkeypatch.setenv("DAGSTER_HOME", base_env["DAGSTER_HOME"])  # the storage config reads it in this process too
    project = copy_project(tmp_path / "project")
    set_edition(project, DSG_FR_2023, present=False)
    env = {
        **base_env,
        "CHPIT_DATA_DIR": str(project / "data"),
        "CHPIT_SAMPLE_DIR": str(project / "data/fedlex-sample"),
        "CHPIT_SENSOR_SECONDS": "1",
        "PYTHONPATH": str(project),
    }
    built = run(project, "nightly", env=env)
    assert built.returncode == 0, built.stdout + built.stderr
    assert items(project, "fr", "235.1") == []
    # The nightly recorded what it built; then Fedlex gains the French edition. The sensor's first
    # tick compares with that record (no baseline-only tick, no cursor to set).
    set_edition(project, DSG_FR_2023, present=True)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    workspace = str(project / "workspace.yaml")
    spawn(
        [sys.executable, "-m", "dagster", "sensor", "start", "new_edition_sensor", "-w", workspace],
        env,
        "sensor-start",
        cwd=elsewhere,
    ).wait_ok(timeout=120)
    daemon = spawn(
        [str(Path(sys.executable).with_name("dagster-daemon")), "run", "-w", workspace], env, "daemon", cwd=elsewhere
    )

    with dg.DagsterInstance.from_config(base_env["DAGSTER_HOME"]) as instance:
        deadline = time.monotonic() + 600

        def sensor_backfills():
            return [b for b in instance.get_backfills() if b.tags.get("chpit/trigger") == "sensor"]

        while not any(b.status in DONE for b in sensor_backfills()):
            assert daemon.popen.poll() is None, daemon.output()[-4000:]
            assert time.monotonic() < deadline, f"no backfill finished: {[b.status for b in sensor_backfills()]}"
            time.sleep(1)
        [launched] = sensor_backfills()
        assert launched.status.value == "COMPLETED_SUCCESS", daemon.output()[-4000:]
        # An edition older than the act's latest is reported as a change of the act, not a new edition.
        assert (launched.tags["chpit/acts"], launched.tags["chpit/editions"]) == ("cc-2022-491", "")
        stages = runs_of(instance, launched.backfill_id)
        assert {r.status for r in stages} == {dg.DagsterRunStatus.SUCCESS} and len(stages) >= 4
        # Launched by the daemon through the code location: every run knows its job and where it came from.
        assert all(r.remote_job_origin is not None and r.job_name == "__ASSET_JOB" for r in stages)
        assert {stage_of(r) for r in stages} >= {"build [fr]", "oracle [fr]", "report, publish_gate, hf_dataset"}
    french = items(project, "fr", "235.1")
    assert french and {i["id"] for i in french} <= published_ids(project, "fr")
