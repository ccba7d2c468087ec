"""Issue 17.1: only Dagster's public API, so an upgrade cannot break us without a deprecation first.

Private Dagster modules are those under `dagster._` (and `dagster_*._`): none is imported or named in
the code, the tests or the benchmarks.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRIVATE = re.compile(r"\b(dagster\w*)\._\w+")


def test_no_private_dagster_module_is_used():
    users = {
        path.relative_to(ROOT).as_posix()
        for folder in ("chpit_assets", "chpit_scorer", "tests", "benchmarks")
        for path in (ROOT / folder).rglob("*.py")
        if path.name != Path(__file__).name and PRIVATE.search(path.read_text(encoding="utf-8"))
    }
    assert users == set()
