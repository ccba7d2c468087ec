"""Benchmark: `build_report` (issue 25: every share with its interval, the cluster bootstrap on
pooled rows, paired comparisons, breakdowns, cutoff split) on constructed scored lines at the
published core's size (500 items per language) and at the full benchmark's (5,000 per language).

Lines are drawn with a fixed seed: both halves of every change, labels at random, the same
changes in every language (so the pooled rows really are clustered), five model-free systems
and four modes of one model with a training cutoff.

    .venv/bin/python benchmarks/bench_report.py [--per-lang 500 5000] [--write docs/benchmarks.md]
    .venv/bin/python benchmarks/bench_report.py --smoke DIR     # 10 items per language, seconds
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import absolute, emit, machine, record  # noqa: E402
from chpit_assets.report import build_report  # noqa: E402

SYSTEMS = ("oracle", "recite", "cite/current", "cite/pit", "search/pit", "m/closed", "m/current", "m/pit", "m/agentic")
LABELS = ("grounded_correct", "grounded_wrong_version", "ungrounded")


def scored_lines(per_lang: int, seed: int = 20260825) -> dict[str, list[dict]]:
    rng = random.Random(seed)
    out: dict[str, list[dict]] = {}
    for system in SYSTEMS:
        lines = []
        for lang in ("de", "fr", "it"):
            for change in range(per_lang // 2):
                year = 2021 + change % 6
                for kind in ("before", "after"):
                    lines.append(
                        {
                            "id": f"{lang}-{change}-{kind}",
                            "lang": lang,
                            "act_id": change % 97,
                            "e_id": f"art_{change}",
                            "change_date": f"{year}-07-01",
                            "as_of": f"{year}-06-30" if kind == "before" else f"{year}-07-01",
                            "kind": kind,
                            "gold_is_current": kind == "after" and change % 3 == 0,
                            "system": system,
                            "sr_number": "1",
                            "article_number": str(change),
                            "recite_label": None,
                            "answer": "",
                            "error": None,
                            "verdict": {
                                "label": rng.choice(LABELS),
                                "gold_coverage": 0.0,
                                "distractor_coverage": 0.0,
                                "distractor_all_coverage": 0.0,
                                "shared_coverage": 0.0,
                            },
                            "tool_calls": [],
                            "gold_chars": rng.randrange(100, 4000),
                            "gold_paragraphs": rng.randrange(1, 6),
                            "cutoff": "2024-06-30" if system.startswith("m/") else None,
                        }
                    )
        out[system] = lines
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-lang", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--write", type=absolute, help="append the figures (markdown) to this file")
    parser.add_argument("--smoke", type=absolute, metavar="DIR", help="a tiny scale (nothing is written)")
    args = parser.parse_args()
    per_langs = [10] if args.smoke else args.per_lang
    print(machine())
    lines, figures = [], {}
    for per_lang in per_langs:
        scored = scored_lines(per_lang)
        t0 = time.perf_counter()
        report = build_report(scored)
        seconds = time.perf_counter() - t0
        pooled = sum(1 for r in report["rows"] if r["ci"]["correct"]["method"] == "cluster bootstrap")
        lines.append(
            f"{3 * per_lang:>6} items x {len(SYSTEMS)} systems: {seconds:6.1f} s "
            f"({len(report['rows'])} rows, {pooled} by the cluster bootstrap, "
            f"{len(report['comparisons'])} comparisons, {len(report['breakdowns'])} breakdown cells)"
        )
        print(lines[-1], flush=True)
        figures[f"items_{3 * per_lang}"] = {"seconds": round(seconds, 3), "rows": len(report["rows"])}
    if args.write:
        body = "`build_report` on constructed scored lines (issue 25):\n\n" + "\n".join(f"- {x.strip()}" for x in lines)
        record(args.write, "Report", body)
    emit("bench_report", figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
