"""The three model-free systems (issue 16) over every item of one language at CH-PiT scale, timed.

    nice .venv/bin/python benchmarks/bench_free_systems.py [--corpus data/synthetic] [--lang de]

Needs the corpus `benchmarks/bench_scale.py` builds (CORPUS/_build) and its search index, which
`benchmarks/bench_search.py` leaves in CORPUS/_build/search-bench. Each system answers every item
of bench-{lang}.jsonl through the runner (scored, logged, fsynced per line, as a real run), one worker.
Target: all three over all items of one language in under 5 minutes.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chpit_assets.corpus.store import Store  # noqa: E402
from chpit_assets.pit.tools import PitTools  # noqa: E402
from chpit_assets.runs.runner import load_log, run_items  # noqa: E402
from chpit_assets.runs.systems import FREE_SYSTEMS, build_system  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "data" / "synthetic")
    parser.add_argument("--lang", default="de")
    args = parser.parse_args()
    data = args.corpus / "_build"
    items = [json.loads(line) for line in (data / "build" / f"bench-{args.lang}.jsonl").read_text("utf-8").splitlines()]
    tools = PitTools(Store(data / "chpit.duckdb"), today=date(2026, 9, 4), search_dir=data / "search-bench")
    report = {
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
        "measured": datetime.now(UTC).isoformat(timespec="minutes"),
        "items": len(items),
    }
    total = 0.0
    with tempfile.TemporaryDirectory() as tmp, tools.session():
        for key in FREE_SYSTEMS:
            path = Path(tmp) / f"{key.replace('/', '_')}.jsonl"
            start = time.perf_counter()
            run_items(build_system(key, tools=tools), items, path)
            seconds = time.perf_counter() - start
            total += seconds
            labels = Counter(line["verdict"]["label"] for line in load_log(path).values())
            report[key] = {
                "s": round(seconds, 1),
                "items_per_s": round(len(items) / seconds, 1),
                "correct_share": round(labels["grounded_correct"] / len(items), 4),
                "labels": dict(sorted(labels.items())),
            }
    report["all_three_s"] = round(total, 1)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
