"""P2, P3 and P3b at CH-PiT scale on a synthetic corpus (issue 7). Not a test: run it by hand, niced.

    nice .venv/bin/python benchmarks/bench_scale.py [--acts 1070 --editions-per-act 4] [--write docs/benchmarks.md]

1. generate  `python -m chpit_assets.synthetic` into --corpus (default data/synthetic, wiped first) (1,070 acts x 4 editions x de/fr/it =
             12,840 catalog editions, 12,036 files: the skipped editions have none), timed.
2. P2        `benchmarks/bench_parse.py` (reused, not duplicated) over the first --parse-acts act folders:
             it holds its files in memory, so not over the whole corpus.
3. P3        the full build in a fresh process (so ru_maxrss is the build's alone): per language the
             fetch into the content-addressed cache (`download_editions`) and parse + store
             (`store_editions`) -- together `ingest_language` --, then per language act_changes,
             eligible_changes, bench_items, core_split (the builder's domain functions, as the Dagster
             assets call them), then build_report; the store held open from the first step to the
             last and closed at the end (`close_store`: the last checkpoint), as an in-process run holds it.
   and again through Dagster itself (`--executors`): one asset backfill over the same assets (each
             language's partition, then build_report), checks included, driven as the CLI drives it
             (chpit_assets.orchestration), on a SQLite instance of its own, per executor.
4. P3b       one new edition of one act in every language (`append_edition`, amending the act's longest
             article so that the new change is eligible and B15 reshuffles the pool), and the same steps
             again on the same store and cache in a fresh process: what a rebuild after a Fedlex update costs.
5. --repeat  the full build and the rebuild again, pair after pair, each full build from an empty store
             (the catalog switched back and forth): the median ratio, since one pair's ratio is noisy.
The scorer at 15,000 items is `benchmarks/bench_scorer.py` (the scorer engineer's); its figures are
reported next to these in docs/benchmarks.md, not measured again here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LANGS = ("de", "fr", "it")


def _rss_mb() -> float:
    # ru_maxrss is in KiB on Linux: the process's peak, and the peak of its largest waited-for child.
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, children) / 1024, 1)


def build(corpus: Path) -> dict:
    """One build over the corpus into CORPUS/_build (store, cache and outputs kept between builds)."""
    from chpit_assets.bench.build_report import build_report, write_report
    from chpit_assets.bench.changes import update_changes
    from chpit_assets.bench.eligibility import update_eligible
    from chpit_assets.bench.items import BuildSettings, update_items, write_core
    from chpit_assets.corpus.ingest import store_editions
    from chpit_assets.corpus.store import Store, release_held
    from chpit_assets.fedlex.catalog import load_sample_catalog
    from chpit_assets.fedlex.download import download_editions

    data = corpus / "_build"
    # Held open from the first step to the last, as an in-process Dagster run holds it (ChpitStore).
    store = Store(data / "chpit.duckdb", hold=True)
    steps: dict[str, dict] = {}

    def timed(name: str, fn, **extra):
        start = time.perf_counter()
        out = fn()
        steps[name] = {"s": round(time.perf_counter() - start, 2), "peak_rss_mb": _rss_mb(), **extra}
        return out

    catalog = timed("load_catalog", lambda: load_sample_catalog(corpus))
    for lang in LANGS:
        editions = catalog.for_lang(lang).editions
        fetched = timed(f"fetch[{lang}]", lambda: download_editions(catalog, data / "cache", editions=editions))
        report = timed(f"parse+store[{lang}]", lambda: store_editions(store, catalog, lang, fetched))
        steps[f"parse+store[{lang}]"].update(parsed=report.reparsed, reused=report.reused, articles=report.articles)
    for lang in LANGS:
        # The domain functions exactly as the assets call them: one transaction each.
        changes = timed(f"act_changes[{lang}]", lambda: update_changes(store, lang))
        steps[f"act_changes[{lang}]"].update(changes=changes.changes.height, acts_recomputed=changes.acts_recomputed)
        result = timed(f"eligible_changes[{lang}]", lambda: update_eligible(store, lang))
        steps[f"eligible_changes[{lang}]"].update(considered=result.changes_considered, eligible=result.eligible.height)
        built, _ = timed(
            f"bench_items[{lang}]", lambda: update_items(store, data / "build", lang, BuildSettings(), data / "frozen")
        )
        steps[f"bench_items[{lang}]"].update(items=len(built.ids), rendered=len(built.fresh))
        timed(f"core_split[{lang}]", lambda: write_core(store, data / "build", lang))
    timed("build_report", lambda: write_report(data / "build" / "build-report.json", build_report(store, None)))
    timed("close_store", lambda: release_held(store.path))  # the run's last checkpoint
    total = round(sum(s["s"] for s in steps.values()), 2)
    return {
        "steps": steps,
        "total_s": total,
        "peak_rss_mb": _rss_mb(),
        "store_mb": round((data / "chpit.duckdb").stat().st_size / 1e6, 1),
    }


BUILD_ASSETS = (
    "fedlex_catalog",
    "fedlex_editions",
    "parsed_articles",
    "act_changes",
    "eligible_changes",
    "bench_items",
)
BUILD_ASSETS += ("core_split",)


def build_with_dagster(corpus: Path, executor: str) -> dict:
    """The same build as `build`, through the path a user's build takes (issue 22): one asset backfill
    over the same assets as the domain build (every language's fedlex_catalog .. core_split, then
    build_report), checks included, driven as `python -m chpit_assets run` drives it, on the
    project's instance (dagster.yaml, SQLite in a DAGSTER_HOME of its own). Data in CORPUS/_dagster_<executor>."""
    import warnings

    root = corpus / f"_dagster_{executor}"
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    import dagster as dg

    from chpit_assets.definitions import defs
    from chpit_assets.instance import open_instance, prepare_instance
    from chpit_assets.orchestration import backfill
    from chpit_assets.orchestration.invocation import invoke
    from chpit_assets.orchestration.request import QUIET_RUNS
    from chpit_assets.orchestration.target import Target

    warnings.filterwarnings("ignore", category=dg.PreviewWarning)
    instance = open_instance()
    prepare_instance(instance)  # registers the languages: a dynamic axis (the script once forgot it)
    target = Target({dg.AssetKey(k): list(LANGS) for k in BUILD_ASSETS}, {dg.AssetKey("build_report")})
    config = {
        **QUIET_RUNS,
        "resources": {
            "fedlex": {"config": {"sample_dir": str(corpus)}},
            "chpit": {"config": {"data_dir": str(root / "data")}},
        },
        "execution": {"config": {executor: {}}},
    }
    start = time.perf_counter()
    outcome = invoke(
        instance,
        backfill.subset(target, defs.resolve_asset_graph()),
        tags={"chpit/trigger": "benchmark"},
        run_config=config,
        title="bench_scale",
        echo=lambda line: None,
    )
    wall = round(time.perf_counter() - start, 2)
    if not outcome.ok:
        raise SystemExit(f"the build failed through Dagster: {[f.line() for f in outcome.failures]}")
    runs: dict[str, dict] = {}
    for run in outcome.runs:
        record = instance.get_run_record_by_id(run.run_id)
        assert record is not None and record.start_time and record.end_time
        logs = [(r.timestamp, r.dagster_event) for r in instance.all_logs(run.run_id) if r.dagster_event]
        started = {e.step_key: ts for ts, e in logs if e.event_type_value == "STEP_START"}
        steps = {
            e.step_key: round(ts - started[e.step_key], 2) for ts, e in logs if e.event_type_value == "STEP_SUCCESS"
        }
        name = run.tags.get("dagster/partition") or "build_report"
        runs[name] = {"s": round(record.end_time - record.start_time, 2), "steps": steps}
    return {"runs": runs, "total_s": wall, "peak_rss_mb": _rss_mb()}


def _in_fresh_process(corpus: Path, *mode: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, *(mode or ("--build-only",)), str(corpus)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _markdown(meta: dict, full: dict, incremental: dict, parse_out: str) -> str:
    rows = ["| step | full build s | peak RSS MB | incremental s | notes |", "|---|---|---|---|---|"]
    for name, step in full["steps"].items():
        inc = incremental["steps"].get(name, {})
        notes = ", ".join(f"{k} {v:,}" for k, v in step.items() if k not in ("s", "peak_rss_mb"))
        inc_notes = ", ".join(
            f"{k} {v:,}" for k, v in inc.items() if k in ("parsed", "reused", "acts_recomputed", "eligible", "rendered")
        )
        rows.append(
            f"| {name} | {step['s']} | {step['peak_rss_mb']} | {inc.get('s', '')} | {notes}"
            + (f"; incremental: {inc_notes}" if inc_notes else "")
            + " |"
        )
    ratio = incremental["total_s"] / full["total_s"]
    rows.append(
        f"| **total** | **{full['total_s']}** | **{full['peak_rss_mb']}** | **{incremental['total_s']}** "
        f"| incremental / full = {ratio:.1%} |"
    )
    return "\n".join(
        [
            f"### Run of {meta['date']}",
            "",
            f"Machine: `{meta['machine']}`, {meta['nproc']} cores ({meta['cpu']}), Python {meta['python']}, "
            f"load average at start {meta['load']}. Corpus: {meta['corpus']}.",
            "",
            "P3 / P3b, per step (peak RSS is the build process's running `ru_maxrss`; store after the full build: "
            f"{full['store_mb']} MB):",
            "",
            *rows,
            "",
            "P2 (`benchmarks/bench_parse.py` over " + meta["parse_slice"] + "):",
            "",
            "```",
            parse_out.strip(),
            "```",
            "",
        ]
    )


def _pairs_markdown(pairs: list[tuple[float, float]]) -> str:
    rows = ["| pair | full build s | incremental s | incremental / full |", "|---|---|---|---|"]
    rows += [f"| {n} | {f} | {i} | {i / f:.1%} |" for n, (f, i) in enumerate(pairs, 1)]
    ratios = sorted(i / f for f, i in pairs)
    return "\n".join(
        [
            "",
            f"P3 / P3b repeated ({len(pairs)} pairs, each from an empty store; the first is the table above): "
            f"median ratio {statistics.median(ratios):.1%}, range {ratios[0]:.1%} to {ratios[-1]:.1%}.",
            "",
            *rows,
            "",
        ]
    )


def _dagster_markdown(full: dict, incremental: dict) -> str:
    if not full:
        return ""
    rows = [
        "| executor | run | full build s | incremental s | slowest steps of the incremental run (s) |",
        "|---|---|---|---|---|",
    ]
    for executor, runs in full.items():
        for name, run in runs["runs"].items():
            inc = incremental[executor]["runs"][name]
            slow = ", ".join(f"{k} {v}" for k, v in sorted(inc["steps"].items(), key=lambda kv: -kv[1])[:3])
            rows.append(f"| {executor} | {name} | {run['s']} | {inc['s']} | {slow} |")
        ratio = incremental[executor]["total_s"] / runs["total_s"]
        rows.append(
            f"| **{executor}** | **total** | **{runs['total_s']}** | **{incremental[executor]['total_s']}** "
            f"| incremental / full = {ratio:.1%}; peak RSS {runs['peak_rss_mb']} MB |"
        )
    return "\n".join(
        [
            "",
            "P3 / P3b through Dagster (one asset backfill per build over the same assets, driven as the CLI "
            "drives it, checks included, the project's dagster.yaml on SQLite; total = the backfill's wall time):",
            "",
            *rows,
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--acts", type=int, default=1070)
    parser.add_argument("--editions-per-act", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--articles", default="10:60", help="articles per act in its first edition, MIN:MAX")
    parser.add_argument("--workers", type=int, default=2, help="generator processes")
    parser.add_argument("--parse-acts", type=int, default=100, help="act folders timed by bench_parse.py (P2)")
    parser.add_argument(
        "--corpus",
        type=Path,
        default=ROOT / "data" / "synthetic",
        help="wiped and regenerated; the build (store, cache, outputs) goes in CORPUS/_build",
    )
    parser.add_argument("--repeat", type=int, default=3, help="full + incremental pairs measured (the first in detail)")
    parser.add_argument("--write", type=Path, help="append the figures (markdown) to this file")
    parser.add_argument(
        "--executors",
        default="in_process,multiprocess",
        help="also build through Dagster with these executors (comma-separated; empty: skip)",
    )
    parser.add_argument("--build-only", type=Path, help=argparse.SUPPRESS)  # the fresh-process builds
    parser.add_argument("--dagster-only", nargs=2, metavar=("EXECUTOR", "CORPUS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_only:
        print(json.dumps(build(args.build_only)))
        return 0
    if args.dagster_only:
        print(json.dumps(build_with_dagster(Path(args.dagster_only[1]), args.dagster_only[0])))
        return 0
    executors = [e for e in args.executors.split(",") if e]

    from chpit_assets.akn.parser import parse_edition
    from chpit_assets.fedlex.catalog import load_sample_catalog
    from chpit_assets.synthetic.generator import (
        Params,
        append_edition,
        generate,
        next_month,
    )

    meta = {
        "date": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "machine": platform.machine(),
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
    }
    corpus = args.corpus
    lo, _, hi = args.articles.partition(":")
    params = Params(
        acts=args.acts,
        editions_per_act=args.editions_per_act,
        langs=LANGS,
        seed=args.seed,
        articles=(int(lo), int(hi or lo)),
    )
    start = time.perf_counter()
    summary = generate(params, corpus, ROOT / "data" / "fedlex-sample", workers=args.workers)
    gen_s = time.perf_counter() - start
    meta["corpus"] = (
        f"{summary.acts:,} acts x {args.editions_per_act} editions x {len(LANGS)} languages = "
        f"{summary.editions:,} catalog editions, {summary.files:,} files, {summary.bytes / 1e6:,.0f} MB, "
        f"generated in {gen_s:.0f} s with {args.workers} workers (seed {args.seed}, articles {args.articles})"
    )
    print(meta["corpus"], flush=True)

    folders = sorted(corpus.glob("cc-*"))[: args.parse_acts]
    meta["parse_slice"] = (
        f"the first {len(folders)} act folders ({sum(1 for f in folders for _ in f.glob('*.xml'))} files)"
    )
    parse_out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_parse.py"), "--rounds", "3", *map(str, folders)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    print(parse_out, flush=True)

    base_catalog = (corpus / "catalog.json").read_bytes()
    full = _in_fresh_process(corpus)
    print(json.dumps(full), flush=True)
    dagster_full = {e: _in_fresh_process(corpus, "--dagster-only", e) for e in executors}
    print(json.dumps(dagster_full), flush=True)
    catalog = load_sample_catalog(corpus)
    act = catalog.acts[0]
    # The worst realistic case: amend the act's longest article, so the new change is eligible and
    # joins the sampling pool, which B15 then reshuffles (a new change that is not eligible leaves
    # every item as it was).
    latest = max(
        (e for e in catalog.editions if e.act_eli == act.eli and e.lang == "de"), key=lambda e: e.date_applicability
    )
    parsed = parse_edition(Path(url2pathname(urlsplit(latest.file_url).path)).read_bytes(), latest.consolidation)
    longest = max(parsed.articles, key=lambda a: len(a.text)).e_id
    line = append_edition(corpus, act.eli, next_month(latest.date_applicability), e_id=longest)
    print(f"appended {line['edition']} ({line['shape']} on {line['e_id']})", flush=True)
    incremental = _in_fresh_process(corpus)
    print(json.dumps(incremental), flush=True)
    dagster_incremental = {e: _in_fresh_process(corpus, "--dagster-only", e) for e in executors}
    print(json.dumps(dagster_incremental), flush=True)
    # The same pair again, side by side, from an empty store each time: on a shared 2-core machine one
    # pair's ratio moves by a quarter from run to run.
    appended_catalog = (corpus / "catalog.json").read_bytes()
    pairs = [(full["total_s"], incremental["total_s"])]
    for _ in range(args.repeat - 1):
        (corpus / "catalog.json").write_bytes(base_catalog)
        shutil.rmtree(corpus / "_build")
        again_full = _in_fresh_process(corpus)["total_s"]
        (corpus / "catalog.json").write_bytes(appended_catalog)
        pairs.append((again_full, _in_fresh_process(corpus)["total_s"]))
        print(json.dumps(pairs[-1]), flush=True)
    text = (
        _markdown(meta, full, incremental, parse_out)
        + _pairs_markdown(pairs)
        + _dagster_markdown(dagster_full, dagster_incremental)
    )
    print(text)
    if args.write:
        with args.write.open("a", encoding="utf-8") as fh:
            fh.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
