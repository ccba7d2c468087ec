"""Issue 17.1: only Dagster's public API, so an upgrade cannot break us without a deprecation first.

Private Dagster modules are those under `dagster._` (and `dagster_*._`): none is imported or named in
the code, the tests or the benchmarks, but for one module (issue 22): Dagster 1.13 creates an asset
backfill publicly only through its GraphQL API and processes one only in its daemon, so
chpit_assets/orchestration/backfill.py wraps that machinery, and nothing else may.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRIVATE = re.compile(r"\b(dagster\w*)\._\w+")
BACKFILL_MODULE = "chpit_assets/orchestration/backfill.py"


def test_no_private_dagster_module_is_used():
    users = {
        path.relative_to(ROOT).as_posix()
        for folder in ("chpit_assets", "chpit_scorer", "tests", "benchmarks")
        for path in (ROOT / folder).rglob("*.py")
        if path.name != Path(__file__).name and PRIVATE.search(path.read_text(encoding="utf-8"))
    }
    assert users == {BACKFILL_MODULE}


def test_the_one_exception_names_why_in_its_docstring():
    text = (ROOT / BACKFILL_MODULE).read_text(encoding="utf-8")
    assert "GraphQL" in text.split('"""')[1] and "tests/test_public_dagster_api.py" in text
