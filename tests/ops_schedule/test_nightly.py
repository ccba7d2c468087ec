"""Issue 18 acceptance (1, 2) and issue 14.1: from a plain shell, in a copy of the project, the README's
commands work without DAGSTER_HOME, and `chpit nightly` carries a new French edition from the catalog
through build, oracle gate, report and publication, or, when the oracle fails, publishes nothing."""

from __future__ import annotations

import json

import pytest

from chpit_assets.bench.build_report import report_langs

from .nightly_project import (
    DSG_FR_2023,
    copy_project,
    failing_oracle_env,
    items,
    published_ids,
    run,
    set_edition,
    tree_digest,
)

DEFAULT_HOME_NOTE = "DAGSTER_HOME is not set; using "


@pytest.fixture
def built(tmp_path):
    """A project copy whose sample lacks SR 235.1 fr 2023-09-01, built by the README's `run` command."""
    project = copy_project(tmp_path / "project")
    set_edition(project, DSG_FR_2023, present=False)
    help_ = run(project, "run", "--help")
    assert help_.returncode == 0 and "--langs" in help_.stdout, help_.stderr
    result = run(project, "run")
    assert result.returncode == 0, result.stdout + result.stderr
    # 14.1: the project's own instance home, laid out as make does, said once.
    home = project / "data" / "dagster_home"
    assert result.stderr.count(DEFAULT_HOME_NOTE) == 1 and str(home) in result.stderr
    assert (home / "dagster.yaml").read_bytes() == (project / "dagster.yaml").read_bytes()
    assert (home / "storage").is_dir()
    assert items(project, "fr", "235.1") == []  # only fr 2025-07-07: no French pair yet
    return project


def test_a_new_french_edition_reaches_build_report_and_publication_unless_the_oracle_fails(built, tmp_path):
    set_edition(built, DSG_FR_2023, present=True)
    publish = built / "data" / "publish"
    yesterday = tree_digest(publish)

    failed = run(built, "nightly", env=failing_oracle_env(built, tmp_path))
    assert failed.returncode != 0, failed.stdout + failed.stderr
    assert "oracle" in failed.stderr and "FAILED" in failed.stderr
    assert tree_digest(publish) == yesterday  # gate failed: yesterday's publication stays
    assert items(built, "fr", "235.1")  # the build itself did run (the gate stops only what follows)

    # 18.7, "check now": the failed night recorded nothing as built, so French is still a change.
    ok = run(built, "nightly", "--changed")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "catalog: 1 change(s) in fr" in ok.stdout and "build [fr]: ok" in ok.stdout
    assert "build [de]" not in ok.stdout  # only the language whose catalog changed
    french = items(built, "fr", "235.1")
    assert french and {i["lang"] for i in french} == {"fr"}
    report = json.loads((built / "data" / "report" / "report.json").read_text())
    assert "fr" in json.dumps(report["headline"] if "headline" in report else report)
    assert {i["id"] for i in french} <= published_ids(built, "fr")
    assert tree_digest(publish) != yesterday
    build_report = json.loads((built / "data" / "build" / "build-report.json").read_text())
    assert report_langs(build_report) == ["de", "fr", "it"]  # 18.6: the same set `run` built
    assert build_report["fr"]["items"] >= len(french)
    quiet = run(built, "nightly", "--changed")
    assert quiet.returncode == 0 and "catalog: no catalog change since the last build" in quiet.stdout, quiet.stderr
    assert "nightly:" not in quiet.stdout  # nothing ran
