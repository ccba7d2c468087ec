"""Build time and peak memory of the benchmark builder (issue 4).

    .venv/bin/python benchmarks/bench_builder.py [--acts 400 --editions 6 --articles 60] [--write docs/perf/builder.md]

Two scenarios, each in its own process so peak RSS (ru_maxrss) is that scenario's alone:
  sample       the shipped Fedlex sample, German (ingested first; ingestion is not timed)
  constructed  a generated store: --acts acts x --editions editions x --articles articles in
               German, every article's one changing paragraph amended in a third of the editions
Timed per step: act_changes, eligible_changes, bench_items (incl. core flags), core file, report.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def constructed_store(store, acts: int, editions: int, articles: int) -> int:
    """Write a synthetic German corpus straight into the store; returns the article rows written."""
    import polars as pl

    from chpit_assets.corpus.schema import act_id_for, version_id_for

    rng = random.Random(7)
    filler = ("Die zuständige Behörde prüft das Gesuch innert angemessener Frist und teilt ihren Entscheid "
              "der gesuchstellenden Person schriftlich mit; sie begründet ihn, soweit nötig.")
    act_rows, version_rows, article_rows = [], [], []
    for a in range(acts):
        eli = f"https://fedlex.data.admin.ch/eli/cc/bench/{a}"
        act_id = act_id_for(eli)
        act_rows.append({"act_id": act_id, "sr_number": f"{a // 10}.{a % 10}", "eli": eli, "jurisdiction": "CH",
                         "abbreviation": f"G{a}", "enforcement_status": 0})
        figures = [rng.randint(1, 999) for _ in range(articles)]
        start = date(2015, 1, 1)
        for e in range(editions):
            end = start + timedelta(days=rng.randint(200, 500))
            cons = f"{eli}/{start:%Y%m%d}"
            vid = version_id_for(cons, "de")
            version_rows.append({"version_id": vid, "act_id": act_id, "lang": "de", "date_applicability": start,
                                 "date_end_applicability": None if e == editions - 1 else end, "eli": cons,
                                 "source": "fedlex", "stage": "parsed"})
            for k in range(articles):
                if e and rng.random() < 0.33:
                    figures[k] = rng.randint(1, 999)
                text = (f"1 {filler}\n2 Der Betrag beträgt {figures[k]} Franken je angefangene Stunde "
                        f"und wird jährlich angepasst.\n3 {filler}")
                article_rows.append({"version_id": vid, "e_id": f"art_{k + 1}", "article_number": str(k + 1),
                                     "text": text})
            start = end + timedelta(days=1)
    store.replace([
        ("ch_act", "true", [], pl.DataFrame(act_rows).with_columns(pl.col("enforcement_status").cast(pl.Int32))),
        ("ch_act_version", "true", [], pl.DataFrame(version_rows)),
        ("ch_act_article", "true", [], pl.DataFrame(article_rows)),
    ])
    return len(article_rows)


def run_scenario(name: str, acts: int, editions: int, articles: int) -> dict:
    from chpit_assets.bench.build_report import build_report, write_report
    from chpit_assets.bench.changes import build_changes
    from chpit_assets.bench.eligibility import evaluate, write_eligible
    from chpit_assets.bench.items import BuildSettings, build_items, write_core, write_items
    from chpit_assets.corpus.store import Store

    tmp = Path(tempfile.mkdtemp(prefix="bench-builder-"))
    store = Store(tmp / "chpit.duckdb")
    if name == "sample":
        from chpit_assets.corpus.ingest import ingest_language
        from chpit_assets.fedlex.catalog import load_sample_catalog

        ingest_language(store, load_sample_catalog(ROOT / "data" / "fedlex-sample"), "de", tmp / "cache")
        size = int(store.frame("SELECT count(*) AS n FROM ch_act_article")["n"][0])
    else:
        size = constructed_store(store, acts, editions, articles)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    steps: dict[str, float] = {}

    def timed(step, fn):
        t = time.perf_counter()
        out = fn()
        steps[step] = round(time.perf_counter() - t, 3)
        return out

    changes = timed("act_changes", lambda: build_changes(store, "de"))
    elig = timed("eligible_changes", lambda: evaluate(store, "de"))
    timed("eligible_write", lambda: write_eligible(store, elig))
    built = timed("bench_items", lambda: build_items(store, "de", BuildSettings(), []))
    timed("bench_items_write", lambda: write_items(store, tmp / "build", built))
    timed("core_split", lambda: write_core(store, tmp / "build", "de"))
    timed("build_report", lambda: write_report(tmp / "build" / "build-report.json", build_report(store, None)))
    return {
        "scenario": name, "article_rows": size, "changes": changes.height,
        "modified": int((changes["change_type"] == "modified").sum()),
        "eligible": elig.eligible.height, "items": len(built.items), "seconds": steps,
        "total_seconds": round(sum(steps.values()), 3),
        "peak_rss_mb_process": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rss_mb_before_build": round(rss_before / 1024, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=["sample", "constructed"])
    parser.add_argument("--acts", type=int, default=400)
    parser.add_argument("--editions", type=int, default=6)
    parser.add_argument("--articles", type=int, default=60)
    parser.add_argument("--write", type=Path, help="append the figures to this markdown file")
    args = parser.parse_args()
    if args.scenario:
        print(json.dumps(run_scenario(args.scenario, args.acts, args.editions, args.articles)))
        return 0
    results = []
    for scenario in ("sample", "constructed"):
        out = subprocess.run(
            [sys.executable, __file__, "--scenario", scenario, "--acts", str(args.acts),
             "--editions", str(args.editions), "--articles", str(args.articles)],
            check=True, capture_output=True, text=True,
        ).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
        print(json.dumps(results[-1]))
    if args.write:
        lines = [f"\n## {time.strftime('%Y-%m-%d %H:%M %Z')} on {platform.node()} ({platform.machine()}, "
                 f"{platform.processor() or platform.system()}, Python {platform.python_version()})\n",
                 "| scenario | article rows | modified changes | eligible | items | act_changes s | "
                 "eligible_changes s (evaluate + write) | bench_items s (build + write) | core s | report s | total s | "
                 "peak RSS MB |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in results:
            s = r["seconds"]
            lines.append(f"| {r['scenario']} | {r['article_rows']} | {r['modified']} | {r['eligible']} | "
                         f"{r['items']} | {s['act_changes']} | {s['eligible_changes']} + {s['eligible_write']} | "
                         f"{s['bench_items']} + {s['bench_items_write']} | {s['core_split']} | {s['build_report']} | "
                         f"{r['total_seconds']} | {r['peak_rss_mb_process']} |")
        with args.write.open("a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
