"""Build time and peak memory of the benchmark builder (issues 4 and 7).

    nice .venv/bin/python benchmarks/bench_builder.py [--acts 400 --editions 6 --articles 60]
        [--synthetic-acts 300 --synthetic-editions 4] [--code CHECKOUT] [--write docs/benchmarks.md]
    .venv/bin/python benchmarks/bench_builder.py --smoke DIR   # every scenario, tiny, files under DIR

Scenarios, each phase in its own process so peak RSS (ru_maxrss) is that phase's alone and DuckDB
starts cold, as in a Dagster step:
  sample       the shipped Fedlex sample, German (ingested first; ingestion is not timed)
  constructed  a generated store: --acts acts x --editions editions x --articles articles in
               German, every article's one changing paragraph amended in a third of the editions
  incremental  a synthetic corpus (`chpit_assets.synthetic`, --synthetic-acts x --synthetic-editions
               x de/fr/it) through the real ingest; the full build of all three languages, then
               `append_edition` (one word changed in one act, every language), ingest again and the
               rebuild on the same store: what a rebuild after one Fedlex update costs
Timed per step: act_changes, eligible_changes, bench_items (incl. core flags), core file, report;
ingest is timed in the incremental scenario for scale (it is not the builder's).

--code runs the builder of another checkout (e.g. `git archive <commit> | tar -x -C /tmp/old`),
so that before/after figures come from one script on one machine, side by side.
"""

from __future__ import annotations

import argparse
import json
import os
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
from benchmarks.common import absolute, emit, machine, record  # noqa: E402  (before --code puts another checkout first)

LANGS = ("de", "fr", "it")
# --smoke: every scenario, small enough for a test to run it (benchmarks/common.py).
SMOKE_SCALE = {"acts": 5, "editions": 3, "articles": 4, "synthetic_acts": 3, "synthetic_editions": 2}


def constructed_store(store, acts: int, editions: int, articles: int) -> int:
    """Write a synthetic German corpus straight into the store; returns the article rows written."""
    import polars as pl

    from chpit_assets.corpus.schema import act_id_for, version_id_for

    rng = random.Random(7)
    filler = (
        "Die zuständige Behörde prüft das Gesuch innert angemessener Frist und teilt ihren Entscheid "
        "der gesuchstellenden Person schriftlich mit; sie begründet ihn, soweit nötig."
    )
    act_rows, version_rows, article_rows = [], [], []
    for a in range(acts):
        eli = f"https://fedlex.data.admin.ch/eli/cc/bench/{a}"
        act_id = act_id_for(eli)
        act_rows.append(
            {
                "act_id": act_id,
                "sr_number": f"{a // 10}.{a % 10}",
                "eli": eli,
                "jurisdiction": "CH",
                "abbreviation": f"G{a}",
                "enforcement_status": 0,
            }
        )
        figures = [rng.randint(1, 999) for _ in range(articles)]
        start = date(2015, 1, 1)
        for e in range(editions):
            end = start + timedelta(days=rng.randint(200, 500))
            cons = f"{eli}/{start:%Y%m%d}"
            vid = version_id_for(cons, "de")
            version_rows.append(
                {
                    "version_id": vid,
                    "act_id": act_id,
                    "lang": "de",
                    "date_applicability": start,
                    "date_end_applicability": None if e == editions - 1 else end,
                    "eli": cons,
                    "source": "fedlex",
                    "stage": "parsed",
                }
            )
            for k in range(articles):
                if e and rng.random() < 0.33:
                    figures[k] = rng.randint(1, 999)
                text = (
                    f"1 {filler}\n2 Der Betrag beträgt {figures[k]} Franken je angefangene Stunde "
                    f"und wird jährlich angepasst.\n3 {filler}"
                )
                article_rows.append(
                    {"version_id": vid, "e_id": f"art_{k + 1}", "article_number": str(k + 1), "text": text}
                )
            start = end + timedelta(days=1)
    store.replace(
        [
            ("ch_act", "true", [], pl.DataFrame(act_rows).with_columns(pl.col("enforcement_status").cast(pl.Int32))),
            ("ch_act_version", "true", [], pl.DataFrame(version_rows)),
            ("ch_act_article", "true", [], pl.DataFrame(article_rows)),
        ]
    )
    return len(article_rows)


def builder_steps(store, build_dir: Path, langs: tuple[str, ...]) -> tuple[dict[str, float], dict]:
    """The builder's steps for `langs`, then the report, as the checkout's Dagster assets call them;
    returns seconds per step (summed over languages) and counts of the last language."""
    from chpit_assets.bench import eligibility, items
    from chpit_assets.bench.build_report import build_report, write_report
    from chpit_assets.bench.changes import build_changes

    def eligible(lang):
        if hasattr(eligibility, "update_eligible"):  # one transaction per asset
            return eligibility.update_eligible(store, lang)
        result = eligibility.evaluate(store, lang)
        eligibility.write_eligible(store, result)
        return result

    def bench_items(lang):
        if hasattr(items, "update_items"):
            return items.update_items(store, build_dir, lang, items.BuildSettings(), build_dir / "frozen")[0]
        built = items.build_items(store, lang, items.BuildSettings(), [])
        items.write_items(store, build_dir, built)
        return built

    steps: dict[str, float] = {}

    def timed(step, fn):
        t = time.perf_counter()
        out = fn()
        steps[step] = round(steps.get(step, 0.0) + time.perf_counter() - t, 3)
        return out

    for lang in langs:
        changes = timed("act_changes", lambda: build_changes(store, lang))
        elig = timed("eligible_changes", lambda: eligible(lang))
        built = timed("bench_items", lambda: bench_items(lang))
        timed("core_split", lambda: items.write_core(store, build_dir, lang))
    timed("build_report", lambda: write_report(build_dir / "build-report.json", build_report(store, None)))
    counts = {
        "changes": changes.height,
        "modified": int((changes["change_type"] == "modified").sum()),
        "eligible": elig.eligible.height,
        "items": len(built.items),
    }
    return steps, counts


def run_scenario(name: str, acts: int, editions: int, articles: int) -> dict:
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
    steps, counts = builder_steps(store, tmp / "build", ("de",))
    return {
        "scenario": name,
        "article_rows": size,
        **counts,
        "seconds": steps,
        "total_seconds": round(sum(steps.values()), 3),
        "peak_rss_mb_process": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rss_mb_before_build": round(rss_before / 1024, 1),
    }


def run_phase(corpus: Path, work: Path) -> dict:
    """Ingest the synthetic corpus into WORK's store (reusing what is there), then build every language."""
    from chpit_assets.corpus.ingest import ingest_language
    from chpit_assets.corpus.store import Store
    from chpit_assets.fedlex.catalog import load_sample_catalog

    store = Store(work / "chpit.duckdb")
    catalog = load_sample_catalog(corpus)
    start = time.perf_counter()
    for lang in LANGS:
        ingest_language(store, catalog, lang, work / "cache")
    ingest_s = round(time.perf_counter() - start, 3)
    steps, counts = builder_steps(store, work / "build", LANGS)
    return {
        "ingest_seconds": ingest_s,
        "seconds": steps,
        "total_seconds": round(sum(steps.values()), 3),
        **counts,
        "peak_rss_mb_process": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def run_incremental(args) -> dict:
    from chpit_assets.fedlex.catalog import load_sample_catalog
    from chpit_assets.synthetic.generator import (
        Params,
        append_edition,
        generate,
        next_month,
    )

    tmp = Path(tempfile.mkdtemp(prefix="bench-builder-"))
    corpus, work = tmp / "synthetic", tmp / "work"
    summary = generate(
        Params(acts=args.synthetic_acts, editions_per_act=args.synthetic_editions, langs=LANGS, seed=1),
        corpus,
        ROOT / "data" / "fedlex-sample",
        workers=2,
    )
    full = _phase(args, corpus, work)
    catalog = load_sample_catalog(corpus)
    act = catalog.acts[0]
    append_edition(
        corpus, act.eli, next_month(max(e.date_applicability for e in catalog.editions if e.act_eli == act.eli))
    )
    incremental = _phase(args, corpus, work)
    return {
        "scenario": "incremental",
        "editions": summary.editions,
        "files": summary.files,
        "full": full,
        "incremental": incremental,
    }


def _child(args, *extra: str) -> dict:
    cmd = [sys.executable, __file__, "--code", str(args.code), *extra]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _phase(args, corpus: Path, work: Path) -> dict:
    return _child(args, "--phase", str(corpus), str(work))


def _markdown(args, results: list[dict]) -> str:
    lines = [
        f"Code measured: {args.code}\n",
        "| scenario | article rows | modified changes | eligible | items | act_changes s | eligible_changes s | "
        "bench_items s | core s | report s | total s | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        runs = (
            [(r["scenario"], r)]
            if "full" not in r
            else [
                (f"synthetic {r['editions']:,} editions, {phase} build (3 languages)", r[phase])
                for phase in ("full", "incremental")
            ]
        )
        for name, x in runs:
            s = x["seconds"]
            lines.append(
                f"| {name} | {x.get('article_rows', '')} | {x['modified']} | {x['eligible']} | {x['items']} | "
                f"{s['act_changes']} | {s['eligible_changes']} | {s['bench_items']} | {s['core_split']} | "
                f"{s['build_report']} | {x['total_seconds']} | {x['peak_rss_mb_process']} |"
            )
        if "full" in r:
            full, inc = r["full"], r["incremental"]
            lines.append(
                f"\nIncremental builder / full builder: {inc['total_seconds'] / full['total_seconds']:.1%}; "
                f"ingest (not the builder's) full {full['ingest_seconds']} s, incremental "
                f"{inc['ingest_seconds']} s; incremental (ingest + builder) / full (ingest + builder): "
                f"{(inc['ingest_seconds'] + inc['total_seconds']) / (full['ingest_seconds'] + full['total_seconds']):.1%}."
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scenario",
        choices=["sample", "constructed", "incremental"],
        action="append",
        help="run only these (repeatable); default all three",
    )
    parser.add_argument("--acts", type=int, default=400)
    parser.add_argument("--editions", type=int, default=6)
    parser.add_argument("--articles", type=int, default=60)
    parser.add_argument("--synthetic-acts", type=int, default=300)
    parser.add_argument("--synthetic-editions", type=int, default=4)
    parser.add_argument("--code", type=absolute, default=ROOT, help="checkout whose chpit_assets is measured")
    parser.add_argument("--write", type=absolute, help="append the figures to this markdown file")
    parser.add_argument("--smoke", type=absolute, metavar="DIR", help="every scenario at a tiny scale, files under DIR")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # child: one sample/constructed run
    parser.add_argument("--phase", nargs=2, type=absolute, help=argparse.SUPPRESS)  # child: CORPUS WORK
    args = parser.parse_args()
    sys.path.insert(0, str(args.code.resolve()))
    if args.smoke:
        vars(args).update(SMOKE_SCALE)
        args.smoke.mkdir(parents=True, exist_ok=True)
        os.environ["TMPDIR"] = str(args.smoke)  # the children's temporary folders too
        tempfile.tempdir = str(args.smoke)
    if args.one:
        print(json.dumps(run_scenario(args.one, args.acts, args.editions, args.articles)))
        return 0
    if args.phase:
        print(json.dumps(run_phase(*args.phase)))
        return 0
    results = []
    for scenario in args.scenario or ["sample", "constructed", "incremental"]:
        if scenario == "incremental":
            results.append(run_incremental(args))
        else:
            results.append(
                _child(
                    args,
                    "--one",
                    scenario,
                    "--acts",
                    str(args.acts),
                    "--editions",
                    str(args.editions),
                    "--articles",
                    str(args.articles),
                )
            )
        print(json.dumps(results[-1]), flush=True)
    text = _markdown(args, results)
    print(machine())
    print(text)
    if args.write:
        record(args.write, "Builder: build time and peak memory", text)
    emit("bench_builder", _figures(results))
    return 0


def _figures(results: list[dict]) -> dict:
    figures = {}
    for r in results:
        if "full" in r:
            full, inc = r["full"]["total_seconds"], r["incremental"]["total_seconds"]
            figures["incremental"] = {
                "full_s": full,
                "incremental_s": inc,
                "share": round(inc / full, 4) if full else 0,
            }
        else:
            figures[r["scenario"]] = {"total_s": r["total_seconds"], "peak_rss_mb": r["peak_rss_mb_process"]}
    return figures


if __name__ == "__main__":
    sys.exit(main())
