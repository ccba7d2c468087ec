"""Issue 23.5: two first runs on a fresh DAGSTER_HOME once left the instance unusable ("more than one
head"); its creation and migration are now serialised by a lock, and a second process says it waits."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

from chpit_assets.instance import SETUP_LOCK

ROOT = Path(__file__).resolve().parents[1]
OPEN = "from chpit_assets.instance import open_instance; open_instance().get_runs(limit=1); print('opened')"


def _open(home: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "CHPIT_PG_URL"}
    return subprocess.Popen(
        [sys.executable, "-c", OPEN],
        cwd=ROOT,
        env={**env, "DAGSTER_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _fresh_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_bytes((ROOT / "dagster.yaml").read_bytes())
    return home


def test_a_second_process_waits_for_the_set_up_and_says_so(tmp_path):
    home = _fresh_home(tmp_path)
    with open(home / SETUP_LOCK, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a first process in the middle of creating the storages
        waiting = _open(home)
        time.sleep(8)
        assert waiting.poll() is None  # it waits, it does not create the storages beside the first
    out, err = waiting.communicate(timeout=120)
    assert waiting.returncode == 0 and "opened" in out, err
    assert f"waiting: another process is setting up the Dagster instance in {home}" in err


def test_concurrent_first_runs_leave_a_usable_instance(tmp_path):
    home = _fresh_home(tmp_path)
    first, second = _open(home), _open(home)
    for proc in (first, second):
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0 and "opened" in out, err
    later = _open(home)
    out, err = later.communicate(timeout=120)
    assert later.returncode == 0 and "more than one head" not in err, err
