"""Issue 17.1: only Dagster's public API, so an upgrade cannot break us without a deprecation first.

Private Dagster modules are those under `dagster._` (and `dagster_*._`): none is imported or named in
the code, the tests or the benchmarks, but for two modules: Dagster 1.13 creates an asset backfill
publicly only through its GraphQL API and processes one only in its daemon, so
chpit_assets/orchestration/backfill.py wraps that machinery (issue 22); and it exports no base class
for a run launcher, though dagster.yaml's `run_launcher:` is the documented place for one, so
chpit_assets/orchestration/launcher.py is ours (issue 27.2), with the SQLite storage its run workers
and the driver open their instance with (one engine per file; Dagster exports no storage class
either). Nothing else may.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRIVATE = re.compile(r"\b(dagster\w*)\._\w+")
BACKFILL_MODULE = "chpit_assets/orchestration/backfill.py"
LAUNCHER_MODULE = "chpit_assets/orchestration/launcher.py"


def test_no_private_dagster_module_is_used():
    users = {
        path.relative_to(ROOT).as_posix()
        for folder in ("chpit_assets", "chpit_scorer", "tests", "benchmarks")
        for path in (ROOT / folder).rglob("*.py")
        if path.name != Path(__file__).name and PRIVATE.search(path.read_text(encoding="utf-8"))
    }
    assert users == {BACKFILL_MODULE, LAUNCHER_MODULE}


def test_each_exception_names_why_in_its_docstring():
    backfill = (ROOT / BACKFILL_MODULE).read_text(encoding="utf-8").split('"""')[1]
    launcher = (ROOT / LAUNCHER_MODULE).read_text(encoding="utf-8").split('"""')[1]
    assert "GraphQL" in backfill and "tests/test_public_dagster_api.py" in backfill
    assert "exports no run launcher" in launcher and "tests/test_public_dagster_api.py" in launcher
