"""The data folder's layout (issue 22.8): one definition of each path, resolved against the project."""

from __future__ import annotations

from pathlib import Path

import pytest

from chpit_assets.defs.resources import ChpitStore
from chpit_assets.layout import DATA_DIR_ENV, FROZEN_DIR_ENV, PROJECT_ROOT, Layout

PATHS = ("root", "frozen_path", "store_path", "cache_dir", "build_dir", "run_root", "results_dir", "search_dir")
PATHS += ("report_dir", "publish_dir")


def test_relative_folders_are_the_projects_whatever_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    monkeypatch.delenv(FROZEN_DIR_ENV, raising=False)
    layout = Layout.resolve()
    assert (layout.root, layout.frozen_path) == (PROJECT_ROOT / "data", PROJECT_ROOT / "frozen")
    assert Layout.resolve("elsewhere").build_dir == PROJECT_ROOT / "elsewhere" / "build"


def test_the_variables_are_read_when_resolved_not_at_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    monkeypatch.setenv(FROZEN_DIR_ENV, str(tmp_path / "record"))
    layout = Layout.resolve()
    assert (layout.store_path, layout.frozen_path) == (tmp_path / "data" / "chpit.duckdb", tmp_path / "record")
    assert Layout.resolve(str(tmp_path / "given")).root == tmp_path / "given"  # the config wins over the variable


def test_a_bounded_run_has_its_own_results_and_report_but_shares_the_build(tmp_path: Path) -> None:
    full, bounded = Layout.resolve(str(tmp_path)), Layout.resolve(str(tmp_path), run_dir="look")
    assert bounded.results_dir == tmp_path / "runs" / "look" / "results" != full.results_dir
    assert bounded.report_dir == tmp_path / "runs" / "look" / "report" != full.report_dir
    for same in ("store_path", "build_dir", "search_dir", "publish_dir", "cache_dir"):
        assert getattr(bounded, same) == getattr(full, same)
    assert full.staged_catalog_path("src", "de") != full.built_catalog_path("src")


def test_the_store_resource_delegates_every_path_to_its_layout(tmp_path: Path) -> None:
    chpit = ChpitStore(data_dir=str(tmp_path), frozen_dir=str(tmp_path / "f"), run_dir="r")
    layout = Layout(tmp_path, tmp_path / "f", "r")
    assert chpit.layout == layout
    assert {p: getattr(chpit, p) for p in PATHS} == {p: getattr(layout, p) for p in PATHS}
    assert chpit.built_catalog_path("x") == layout.built_catalog_path("x")
