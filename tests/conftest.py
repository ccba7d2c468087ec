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

from chpit_assets.defs.resources import DATA_DIR_ENV

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _temporary_data_and_instance(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path_factory.mktemp("chpit-data")))
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
