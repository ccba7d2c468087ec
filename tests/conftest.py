"""Every test's data folder and Dagster instance are temporary ones (issue 14.2).

The resources read $CHPIT_DATA_DIR when a step uses them (chpit_assets.defs.resources), so setting
it here, per test, holds even for code that imported `chpit_assets.definitions` long before.
`make test` exports DAGSTER_HOME=data/dagster_home; each test gets its own home instead, laid out
as `make` lays out the real one. A test that wants other folders sets its own; subprocesses inherit
these unless given theirs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from chpit_assets.defs.resources import DATA_DIR_ENV, FROZEN_DIR_ENV

ROOT = Path(__file__).resolve().parents[1]

# Issue 17.4: `make test-fast` runs the unit core (`-m "not services and not model and not slow"`).
# Marked by where a test lives or what it starts, so a new test in those places is marked too.
SERVICES = ("tests/ops/",)  # PostgreSQL, RabbitMQ, the real daemon
MODEL = ("tests/runs/test_local_model.py", "tests/runs/test_local_systems.py")  # the real SmolLM2 server
SLOW = (  # whole builds (in subprocesses or through Dagster runs), servers, a bare venv
    "tests/test_cli.py",
    "tests/test_readme_commands.py",
    "tests/faults/",
    "tests/ops_schedule/",
    "tests/scorer/test_bare_install.py",
    "tests/defs/",
    "tests/publish/",
    "tests/runs/test_assets.py",
    "tests/report/test_sample_report.py",
    "tests/bench/test_assets.py",
    "tests/bench/test_incremental.py",
    "tests/pit/test_mcp_server.py",
    "tests/corpus/test_store.py",
    "tests/synthetic/",
    "tests/benchmarks/",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = item.path.relative_to(ROOT).as_posix()
        for marker, places in (("services", SERVICES), ("model", MODEL), ("slow", SLOW)):
            if path.startswith(places):
                item.add_marker(marker)


@pytest.fixture(autouse=True)
def _temporary_data_and_instance(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path_factory.mktemp("chpit-data")))
    # The frozen record (B18) defaults to the project's committed frozen/: a test's is its own.
    monkeypatch.setenv(FROZEN_DIR_ENV, str(tmp_path / "frozen"))
    home = tmp_path_factory.mktemp("dagster-home")
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))


@pytest.fixture
def instance():
    """A temporary Dagster instance whose `lang` axis holds every Fedlex language (a dynamic axis, issue 14.6)."""
    import dagster as dg

    from chpit_assets.defs.partitions import register_langs
    from chpit_assets.fedlex.catalog import LANGS

    with dg.instance_for_test() as test_instance:
        register_langs(test_instance, LANGS)
        yield test_instance
