"""P3 and P3b at CH-PiT scale on a synthetic corpus (issues 7, 22.7, 27.2). Not a test: run it by hand, niced.

    nice .venv/bin/python benchmarks/bench_scale.py [--acts 1070 --editions-per-act 4] [--write docs/benchmarks.md]
    .venv/bin/python benchmarks/bench_scale.py --smoke DIR      # tiny scale, both paths, for make test

1. generate  `python -m chpit_assets.synthetic` into --corpus (default data/synthetic, wiped first) (1,070 acts x
             4 editions x de/fr/it = 12,840 catalog editions, 12,036 files: the skipped editions have none), timed.
2. P3        the full build in a fresh process (so ru_maxrss is the build's alone): per language the
             fetch into the content-addressed cache (`download_editions`) and parse + store
             (`store_editions`), then per language act_changes, eligible_changes, bench_items,
             core_split, search_index and search_track (the domain functions, as the Dagster assets
             call them), then build_report; the store held open from the first step to the last and
             closed at the end (`close_store`: the last checkpoint), as an in-process run holds it.
   and again through Dagster itself (`--executors`): one asset backfill over the same assets (each
             language's partition, then build_report), checks included, driven as the CLI and
             `python -m chpit_assets nightly` drive it (chpit_assets.orchestration), on a SQLite
             instance of its own, per executor. Both paths cover the same assets (issue 27.2: the domain
             figure once left the search assets out and looked five times better than a user's rebuild).
3. P3b       one new edition of one act in every language (`append_edition`, amending the act's longest
             article so that the new change is eligible and B15 reshuffles the pool), and the same builds
             again on the same store and cache in a fresh process: what a rebuild after a Fedlex update costs.
4. --repeat  that pair (full from empty folders, then the rebuild) again on both paths, the catalog switched
             back and forth: medians with min and max, since one pair's ratio is noisy on 2 shared cores.
P2 is `benchmarks/bench_parse.py` over the real Fedlex files; the scorer at 15,000 items is
`benchmarks/bench_scorer.py`; `make bench` runs them all.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import absolute, emit, record, spread, spread_text  # noqa: E402

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
        index = timed(f"search_index[{lang}]", lambda: _search_index(store, data, lang))
        steps[f"search_index[{lang}]"].update(indexed_now=index.editions_added)
        track = timed(f"search_track[{lang}]", lambda: _search_track(store, data, lang))
        steps[f"search_track[{lang}]"].update(track_items=track.written, searched=track.searched)
    timed("build_report", lambda: write_report(data / "build" / "build-report.json", build_report(store, None)))
    timed("close_store", lambda: release_held(store.path))  # the run's last checkpoint
    total = round(sum(s["s"] for s in steps.values()), 2)
    return {
        "steps": steps,
        "total_s": total,
        "peak_rss_mb": _rss_mb(),
        "store_mb": round((data / "chpit.duckdb").stat().st_size / 1e6, 1),
    }


def _search_index(store, data: Path, lang: str):
    from chpit_assets.search.index import build_index

    with store.connect(read_only=True) as con:
        return build_index(con, lang, data / "search")


def _search_track(store, data: Path, lang: str):
    from chpit_assets.bench.items import _load_lines
    from chpit_assets.search.track import update_track

    lines = _load_lines(store, lang, core_only=False)  # as the asset reads them
    with store.connect(read_only=True) as con:
        track, _ = update_track(con, lines, lang, data / "build", data / "search")
    return track


BUILD_ASSETS = (
    "fedlex_catalog",
    "fedlex_editions",
    "parsed_articles",
    "act_changes",
    "eligible_changes",
    "bench_items",
    "core_split",
    "search_index",
    "search_track",
)


def build_with_dagster(corpus: Path, executor: str) -> dict:
    """The same build as `build`, through the path a user's build takes (issue 22): one asset backfill
    over the same assets as the domain build (every language's fedlex_catalog .. core_split, then
    build_report), checks included, driven as `python -m chpit_assets run` drives it, on the
    project's instance (dagster.yaml, SQLite in a DAGSTER_HOME of its own). Data in CORPUS/_dagster_<executor>."""
    import warnings

    from chpit_assets.orchestration import forkserver

    forkserver.start()  # first thing, as `python -m chpit_assets run|nightly` does (before Dagster's import)
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
    done = subprocess.run(
        [sys.executable, __file__, *(mode or ("--build-only",)), str(corpus)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(mode) or 'domain build'} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _steps_markdown(full: dict, incremental: dict) -> str:
    rows = ["| step | full build s | peak RSS MB | incremental s | notes |", "|---|---|---|---|---|"]
    for name, step in full["steps"].items():
        inc = incremental["steps"].get(name, {})
        notes = ", ".join(f"{k} {v:,}" for k, v in step.items() if k not in ("s", "peak_rss_mb"))
        inc_notes = ", ".join(
            f"{k} {v:,}"
            for k, v in inc.items()
            if k in ("parsed", "reused", "acts_recomputed", "eligible", "rendered", "indexed_now", "searched")
        )
        rows.append(
            f"| {name} | {step['s']} | {step['peak_rss_mb']} | {inc.get('s', '')} | {notes}"
            + (f"; incremental: {inc_notes}" if inc_notes else "")
            + " |"
        )
    rows.append(
        f"| **total** | **{full['total_s']}** | **{full['peak_rss_mb']}** | **{incremental['total_s']}** "
        f"| incremental / full = {incremental['total_s'] / full['total_s']:.1%} |"
    )
    return "\n".join(
        [
            "P3 / P3b per step, domain path, first pair (peak RSS is the build process's running `ru_maxrss`; "
            f"store after the full build: {full['store_mb']} MB):",
            "",
            *rows,
        ]
    )


def _runs_markdown(executor: str, full: dict, incremental: dict) -> str:
    rows = ["| run | full build s | incremental s | slowest steps of the incremental run (s) |", "|---|---|---|---|"]
    for name, run in full["runs"].items():
        inc = incremental["runs"].get(name, {"s": "", "steps": {}})
        slow = ", ".join(f"{k} {v}" for k, v in sorted(inc["steps"].items(), key=lambda kv: -kv[1])[:3])
        rows.append(f"| {name} | {run['s']} | {inc['s']} | {slow} |")
    outside_full = full["total_s"] - sum(r["s"] for r in full["runs"].values())
    outside_inc = incremental["total_s"] - sum(r["s"] for r in incremental["runs"].values())
    rows.append(
        f"| outside the runs (code server, run processes' start, queue) | {outside_full:.2f} | {outside_inc:.2f} | |"
    )
    rows.append(f"| **total (wall)** | **{full['total_s']}** | **{incremental['total_s']}** | |")
    return "\n".join([f"Through Dagster ({executor} executor), first pair, per run:", "", *rows])


def _pairs(pairs: list[tuple[float, float]]) -> dict:
    fulls, incs = [f for f, _ in pairs], [i for _, i in pairs]
    return {
        "full_s": spread(fulls),
        "incremental_s": spread(incs),
        "ratio": spread([i / f for f, i in pairs]),
    }


def _summary_markdown(paths: dict[str, list[tuple[float, float]]]) -> str:
    rows = [
        "| path | full build s | rebuild after one new edition s | rebuild / full |",
        "|---|---|---|---|",
    ]
    for path, pairs in paths.items():
        fulls, incs, ratios = [f for f, _ in pairs], [i for _, i in pairs], [i / f * 100 for f, i in pairs]
        rows.append(f"| {path} | {spread_text(fulls)} | {spread_text(incs)} | **{spread_text(ratios, '%', 1)}** |")
    n = len(next(iter(paths.values())))
    return "\n".join([f"Medians of {n} full/rebuild pairs, each full build from empty folders:", "", *rows])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--acts", type=int, default=1070)
    parser.add_argument("--editions-per-act", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--articles", default="10:60", help="articles per act in its first edition, MIN:MAX")
    parser.add_argument("--workers", type=int, default=2, help="generator processes")
    parser.add_argument(
        "--corpus",
        type=absolute,
        default=ROOT / "data" / "synthetic",
        help="wiped and regenerated; the builds go in CORPUS/_build and CORPUS/_dagster_<executor>",
    )
    parser.add_argument("--repeat", type=int, default=3, help="full + rebuild pairs measured on each path")
    parser.add_argument("--write", type=absolute, help="append the figures (markdown) to this file")
    parser.add_argument(
        "--executors",
        default="in_process",
        help="also build through Dagster with these executors (comma-separated, e.g. in_process,multiprocess; "
        "empty: skip)",
    )
    parser.add_argument("--smoke", type=absolute, metavar="DIR", help="tiny scale, everything under DIR (make test)")
    parser.add_argument("--build-only", type=absolute, help=argparse.SUPPRESS)  # the fresh-process builds
    parser.add_argument("--dagster-only", nargs=2, metavar=("EXECUTOR", "CORPUS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_only:
        print(json.dumps(build(args.build_only)))
        return 0
    if args.dagster_only:
        print(json.dumps(build_with_dagster(absolute(args.dagster_only[1]), args.dagster_only[0])))
        return 0
    if args.smoke:
        args.acts, args.editions_per_act, args.articles, args.repeat = 4, 3, "6:10", 1
        args.corpus, args.executors, args.workers = args.smoke / "synthetic", "in_process", 1
    executors = [e for e in args.executors.split(",") if e]

    from chpit_assets.akn.parser import parse_edition
    from chpit_assets.fedlex.catalog import load_sample_catalog
    from chpit_assets.synthetic.generator import Params, append_edition, generate, next_month

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
    described = (
        f"{summary.acts:,} acts x {args.editions_per_act} editions x {len(LANGS)} languages = "
        f"{summary.editions:,} catalog editions, {summary.files:,} files, {summary.bytes / 1e6:,.0f} MB, "
        f"generated in {time.perf_counter() - start:.0f} s with {args.workers} workers (seed {args.seed}, "
        f"articles {args.articles})"
    )
    print(described, flush=True)

    base_catalog = (corpus / "catalog.json").read_bytes()
    appended_catalog: bytes | None = None
    paths: dict[str, list[tuple[float, float]]] = {"domain functions, one process": []}
    paths.update({f"one backfill, {e} executor": [] for e in executors})
    first: dict[str, tuple[dict, dict]] = {}
    for pair in range(args.repeat):
        (corpus / "catalog.json").write_bytes(base_catalog)
        if pair:  # each full build from empty folders (the first pair's: the freshly generated corpus)
            for built in [*corpus.glob("_build"), *corpus.glob("_dagster_*")]:
                shutil.rmtree(built)
        full = {"domain": _in_fresh_process(corpus)}
        full.update({e: _in_fresh_process(corpus, "--dagster-only", e) for e in executors})
        if appended_catalog is None:
            catalog = load_sample_catalog(corpus)
            act = catalog.acts[0]
            # The worst realistic case: amend the act's longest article, so the new change is eligible and
            # joins the sampling pool, which B15 then reshuffles (a new change that is not eligible leaves
            # every item as it was).
            latest = max(
                (e for e in catalog.editions if e.act_eli == act.eli and e.lang == "de"),
                key=lambda e: e.date_applicability,
            )
            edition_file = Path(url2pathname(urlsplit(latest.file_url).path))
            parsed = parse_edition(edition_file.read_bytes(), latest.consolidation)
            longest = max(parsed.articles, key=lambda a: len(a.text)).e_id
            line = append_edition(corpus, act.eli, next_month(latest.date_applicability), e_id=longest)
            print(f"appended {line['edition']} ({line['shape']} on {line['e_id']})", flush=True)
            appended_catalog = (corpus / "catalog.json").read_bytes()
        (corpus / "catalog.json").write_bytes(appended_catalog)
        incremental = {"domain": _in_fresh_process(corpus)}
        incremental.update({e: _in_fresh_process(corpus, "--dagster-only", e) for e in executors})
        for measured, key in zip(paths.values(), ["domain", *executors], strict=True):
            measured.append((full[key]["total_s"], incremental[key]["total_s"]))
            first.setdefault(key, (full[key], incremental[key]))
        print(json.dumps({path: measured[-1] for path, measured in paths.items()}), flush=True)

    sections = [f"Corpus: {described}.", _summary_markdown(paths), _steps_markdown(*first["domain"])]
    sections += [_runs_markdown(e, *first[e]) for e in executors]
    text = "\n\n".join(sections)
    print(text)
    if args.write:
        record(args.write, "P3 / P3b: the build and the rebuild after one new edition (bench_scale.py)", text)
    emit("bench_scale", {path: _pairs(pairs) for path, pairs in paths.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
