"""Issue 18 acceptance with the real daemon, started from another directory (18.3): the new-edition
sensor's tick launches the nightly job for French, which carries the new edition to the publication."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import dagster as dg

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
        deadline = time.monotonic() + 420

        def nightly_runs():
            return [
                r
                for r in instance.get_runs()
                if r.job_name == "nightly" and r.tags.get("chpit/trigger") == "new_edition"
            ]

        while not any(r.is_finished for r in nightly_runs()):
            assert daemon.popen.poll() is None, daemon.output()[-4000:]
            assert time.monotonic() < deadline, f"no nightly run finished: {[r.status for r in nightly_runs()]}"
            time.sleep(1)
        [launched] = nightly_runs()
        assert launched.status == dg.DagsterRunStatus.SUCCESS, daemon.output()[-4000:]
        # An edition older than the act's latest is reported as a change of the act, not a new edition.
        assert (launched.tags["chpit/acts"], launched.tags["chpit/editions"]) == ("cc-2022-491", "")
        stages = [r for r in instance.get_runs() if r.tags.get("chpit/parent") == launched.run_id]
        assert {r.status for r in stages} == {dg.DagsterRunStatus.SUCCESS} and len(stages) >= 4
    french = items(project, "fr", "235.1")
    assert french and {i["id"] for i in french} <= published_ids(project, "fr")
