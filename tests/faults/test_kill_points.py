"""The kill-point harness (issue 15 point 2): a real build, SIGKILLed at every named point of
`chpit_assets.faults.KILL_POINTS`, then re-run without the kill; and the CLI itself killed mid-backfill.

One reference build of the sample (German, as `python -m chpit_assets run --langs de`) is made
once; every point starts from a copy of it whose live publication is marked as an older build,
so "the old one" and "the new one" differ. The build is killed where the point lies: a point of
the publication in the build's last step (the publish job, run on its own to keep CI short), the
others in the whole build; the re-run is always the whole build. After the kill the live build (data/publish, or
data/publish.previous when the kill fell between the swap's renames -- which the next publisher
renames back first) must be the complete old or the complete new one; after the re-run the
publication, the build files and the store must equal the reference, and no temp file may be
left. Subprocesses and loopback only; no timing is asserted.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from chpit_assets.faults import ENV, KILL_POINTS
from chpit_assets.publish.folder import folder_files
from tests.publish.fake_hub import FakeHub

ROOT = Path(__file__).resolve().parents[2]
OLD_MARK = b"\n<!-- an older publication -->\n"
LITTER = re.compile(r"^(\..*\.tmp|\.publish-next-.*|.*\.previous|.*\.partial)$")
# The build's last step, the publish job; with a Hub endpoint argument, with an upload configured
# (the CLI's run publishes locally only).
PUBLISH_DRIVER = """
import sys
import dagster as dg
from chpit_assets.definitions import defs
hub = {"repo_id": "overthelex/ch-pit", "hub_endpoint": sys.argv[1]} if sys.argv[1:] else {}
config = {"resources": {"publication": {"config": hub}}, "loggers": {"console": {"config": {"log_level": "ERROR"}}}}
result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
    instance=dg.DagsterInstance.get(), asset_selection=[dg.AssetKey("publish_gate"), dg.AssetKey("hf_dataset")],
    raise_on_error=False, run_config=config)
sys.exit(0 if result.success else 1)
"""


def _env(workdir: Path, kill_at: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (ENV, "HF_TOKEN", "CHPIT_DATA_DIR", "CHPIT_PG_URL")}
    # The project's data/ is the default; each copy is its own data folder (the sample stays the project's).
    env.update(
        PYTHONPATH=str(ROOT),
        DAGSTER_HOME=str(workdir / "home"),
        CHPIT_DATA_DIR=str(workdir / "data"),
        CHPIT_FROZEN_DIR=str(workdir / "frozen"),
        HF_HUB_DISABLE_TELEMETRY="1",
    )
    if kill_at:
        env[ENV] = kill_at
    return env


def build(workdir: Path, kill_at: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chpit_assets", "run", "--langs", "de"],
        cwd=workdir,
        env=_env(workdir, kill_at),
        capture_output=True,
        text=True,
        timeout=900,
    )


def publish_step(workdir: Path, kill_at: str | None = None, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", PUBLISH_DRIVER, *args],
        cwd=workdir,
        env={**_env(workdir, kill_at), **env},
        capture_output=True,
        text=True,
        timeout=900,
    )


def store_state(workdir: Path) -> dict[str, list[tuple]]:
    with duckdb.connect(str(workdir / "data" / "chpit.duckdb"), read_only=True) as con:
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1"
            ).fetchall()
        ]
        return {t: con.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall() for t in tables}


def litter(workdir: Path) -> list[str]:
    data = workdir / "data"
    return sorted(str(p.relative_to(data)) for p in data.rglob("*") if LITTER.match(p.name))


def live_build(workdir: Path) -> dict[str, bytes] | None:
    data = workdir / "data"
    for folder in (data / "publish", data / "publish.previous"):
        if folder.exists():
            return folder_files(folder)
    return None


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    ref = tmp_path_factory.mktemp("kill-reference")
    (ref / "home").mkdir()
    shutil.copy(ROOT / "dagster.yaml", ref / "home" / "dagster.yaml")
    (ref / "data").mkdir()
    done = build(ref)
    assert done.returncode == 0, done.stdout + done.stderr
    return ref


def start_from(reference: Path, tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A copy of the reference whose live publication is an older build (its card marked)."""
    work = tmp_path / "work"
    shutil.copytree(reference, work)
    card = work / "data" / "publish" / "README.md"
    card.write_bytes(card.read_bytes() + OLD_MARK)
    return work, folder_files(work / "data" / "publish")


def test_every_kill_point_is_in_the_code_once():
    sources = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "chpit_assets").rglob("*.py"))
    used = re.findall(r'kill_point\("([^"]+)"\)', sources)
    assert sorted(used) == sorted(KILL_POINTS)


def runs_by_status(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, set[str]]:
    import dagster as dg

    monkeypatch.setenv("DAGSTER_HOME", str(workdir / "home"))  # the storage config reads it
    with dg.DagsterInstance.from_config(str(workdir / "home")) as instance:
        runs: dict[str, set[str]] = {}
        for run in instance.get_runs():
            runs.setdefault(run.status.value, set()).add(run.run_id)
        return runs


@pytest.mark.parametrize("point", [p for p in KILL_POINTS if p != "publish.upload"])
def test_a_build_killed_at_each_point_loses_nothing_and_publishes_whole(point, reference, tmp_path, monkeypatch):
    work, old = start_from(reference, tmp_path)
    new = folder_files(reference / "data" / "publish")
    if point.startswith("publish."):
        killed = publish_step(work, point)
        assert killed.returncode == -signal.SIGKILL, f"{point} was never reached:\n{killed.stdout}{killed.stderr}"
    else:
        # Issue 22: the kill hits the worker process of the backfill's run; the driver sees the run
        # fail (run monitoring asks the run launcher and fails a run whose worker died) and names the stage.
        killed = build(work, point)
        output = killed.stdout + killed.stderr
        assert killed.returncode == 1 and "build [de]: FAILED" in output, f"{point} was never reached:\n{output}"
        assert "FAILURE" in runs_by_status(work, monkeypatch) and "STARTED" not in runs_by_status(work, monkeypatch)
    assert live_build(work) in (old, new), f"killed at {point}: the live build is neither the old nor the new one"

    again = build(work)
    assert again.returncode == 0, again.stdout + again.stderr
    if not point.startswith("publish."):  # the publish points' run is this test's own, in-process one
        assert "STARTED" not in runs_by_status(work, monkeypatch)
    assert folder_files(work / "data" / "publish") == new
    assert folder_files(work / "data" / "build") == folder_files(reference / "data" / "build")
    assert store_state(work) == store_state(reference)
    assert litter(work) == []


def test_a_publication_killed_during_its_upload_uploads_on_the_next_run(reference, tmp_path):
    work, old = start_from(reference, tmp_path)
    hub = FakeHub()
    try:
        killed = publish_step(work, "publish.upload", hub.url, HF_TOKEN="hf_loopback_token")
        assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
        assert hub.commits == [] and not (work / "frozen").exists()  # nothing public, nothing frozen
        after_kill = live_build(work)

        again = publish_step(work, None, hub.url, HF_TOKEN="hf_loopback_token")
        assert again.returncode == 0, again.stdout + again.stderr
        published = folder_files(work / "data" / "publish")
        assert after_kill in (old, published)
        [commit] = hub.commits
        assert commit.files == published
        frozen_ids = (work / "frozen" / "de.jsonl").read_text(encoding="utf-8").count('"id": ')
        assert frozen_ids == len((reference / "data" / "build" / "bench-de.jsonl").read_text().splitlines())
        assert litter(work) == []
    finally:
        hub.close()


def test_the_cli_killed_mid_backfill_leaves_a_whole_publication_and_the_next_run_goes_on(
    reference, tmp_path, monkeypatch
):
    """Issue 22 acceptance: kill -9 the driving process itself while its backfill runs; the next
    invocation cancels the orphaned backfill, builds, and ends in the reference state."""
    import dagster as dg

    from chpit_assets.orchestration.backfill import DONE

    work, old = start_from(reference, tmp_path)
    new = folder_files(reference / "data" / "publish")
    cli = subprocess.Popen(
        [sys.executable, "-m", "chpit_assets", "run", "--langs", "de"],
        cwd=work,
        env=_env(work, None),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert cli.stdout is not None
    for line in cli.stdout:  # killed once the build is done and the systems are under way
        if line.startswith("build_report, oracle_gate: ok"):
            cli.kill()
            break
    assert cli.wait(timeout=120) == -signal.SIGKILL
    assert live_build(work) in (old, new)

    again = build(work)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "its driver is gone; cancelling it first" in again.stdout
    monkeypatch.setenv("DAGSTER_HOME", str(work / "home"))
    with dg.DagsterInstance.from_config(str(work / "home")) as instance:
        assert all(b.status in DONE for b in instance.get_backfills())
    assert "STARTED" not in runs_by_status(work, monkeypatch)
    assert folder_files(work / "data" / "publish") == new
    assert folder_files(work / "data" / "build") == folder_files(reference / "data" / "build")
    assert store_state(work) == store_state(reference)
    assert litter(work) == []
