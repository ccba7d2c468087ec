"""P5 (issue 27.4): the five model-free systems over every item of one language, old code against new.

    nice .venv/bin/python benchmarks/bench_free_systems.py --corpus data/synthetic --baseline ../main \\
        [--lang de] [--items 5000] [--runs 3] [--write docs/perf/free-systems.md]
    .venv/bin/python benchmarks/bench_free_systems.py --smoke DIR     # tiny scale, for make test

Needs the corpus `benchmarks/bench_scale.py` builds (CORPUS/_build: store and bench-{lang}.jsonl);
the search index is built into CORPUS/_build/search-bench when it is not there yet (about two
minutes at CH-PiT scale). Each system (`oracle`, `recite`, `cite/current`, `cite/pit`,
`search/pit`) answers every item through the runner, as a real run does: scored, logged, fsynced
per line, one worker, all five in one `PitTools.session()`.

`--baseline DIR` is a checkout of the code to compare with (a git worktree at main): each run
measures both trees back to back, each in a fresh process importing its own `chpit_assets`, so a
shared, noisy machine slows both alike; the figures are the median, min and max over `--runs`.
Every pair of logs is compared too, line by line, less what the clock decides (latency, start and
end): `identical` is 1 when the new code wrote exactly the old code's lines.

`--smoke DIR` generates a tiny synthetic corpus under DIR, builds it, and compares this tree with
itself once: the script's whole path runs, its figures are well-formed, no time is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import absolute, emit, record, spread, spread_text  # noqa: E402

SYSTEMS = ("oracle", "recite", "cite/current", "cite/pit", "search/pit")
TODAY = "2026-09-04"  # recite and cite/current read "today's" edition: fixed, so runs compare


def measure(code: Path, corpus: Path, lang: str, items_n: int, out: Path) -> dict:
    """One tree's five systems, in this (fresh) process; `code` is the tree whose chpit_assets is imported."""
    sys.path.insert(0, str(code))
    from datetime import date

    import chpit_assets
    from chpit_assets.corpus.store import Store
    from chpit_assets.pit.tools import PitTools
    from chpit_assets.runs.runner import load_log, run_items
    from chpit_assets.runs.systems import build_system

    assert Path(chpit_assets.__file__).resolve().is_relative_to(code.resolve()), chpit_assets.__file__
    data = corpus / "_build"
    lines = (data / "build" / f"bench-{lang}.jsonl").read_text("utf-8").splitlines()
    items = [json.loads(line) for line in lines[:items_n]]
    tools = PitTools(Store(data / "chpit.duckdb"), today=date.fromisoformat(TODAY), search_dir=data / "search-bench")
    report: dict = {"items": len(items)}
    fsync, synced = os.fsync, [0.0]

    def timed_fsync(fd: int) -> None:
        # The runner's fsync per line, timed: how much of a run is the disk's, not the code's.
        start = time.perf_counter()
        fsync(fd)
        synced[0] += time.perf_counter() - start

    os.fsync = timed_fsync
    with tools.session():
        for key in SYSTEMS:
            path = out / f"{key.replace('/', '_')}.jsonl"
            start = time.perf_counter()
            run_items(build_system(key, tools=tools), items, path)
            seconds = time.perf_counter() - start
            log = load_log(path).values()
            report[key] = {
                "s": seconds,
                "fsync_s": synced[0],
                "correct_share": sum(line["verdict"]["label"] == "grounded_correct" for line in log) / len(items),
            }
            synced[0] = 0.0
        cache = getattr(tools, "_cache", None)  # the new code's LookupCache
        report["store_queries"] = cache.queries if cache is not None else None
    return report


def timeless(path: Path) -> list[str]:
    """A log's lines less latency, start and end: what must not change with the code."""
    out = []
    for raw in path.read_text("utf-8").splitlines():
        line = json.loads(raw)
        line.pop("latency_s")
        line["receipt"].pop("started_at")
        line["receipt"].pop("finished_at")
        out.append(json.dumps(line, ensure_ascii=False))
    return out


def ensure_index(corpus: Path, lang: str) -> None:
    from chpit_assets.corpus.store import Store
    from chpit_assets.search.index import build_index, index_path

    search_dir = corpus / "_build" / "search-bench"
    if not index_path(search_dir, lang).exists():
        with Store(corpus / "_build" / "chpit.duckdb").connect(read_only=True) as con:
            build_index(con, lang, search_dir)


def run_tree(code: Path, corpus: Path, lang: str, items: int, out: Path) -> dict:
    out.mkdir(parents=True)
    command = [sys.executable, __file__, "--measure", str(code), str(out), "--corpus", str(corpus)]
    done = subprocess.run(
        [*command, "--lang", lang, "--items", str(items)], check=True, capture_output=True, text=True, cwd=code
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(corpus: Path, lang: str, items: int, runs: int, baseline: Path) -> tuple[dict, dict]:
    sides: dict[str, list[dict]] = {"old": [], "new": []}
    identical = {key: 1 for key in SYSTEMS}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(runs):
            # Old, then new, then the other way round: neither always runs on a warmer page cache.
            order = [("old", baseline), ("new", ROOT)] if n % 2 == 0 else [("new", ROOT), ("old", baseline)]
            for side, code in order:
                sides[side].append(run_tree(code, corpus, lang, items, Path(tmp, f"{n}-{side}")))
                print(side, json.dumps(sides[side][-1]), flush=True)
            for key in SYSTEMS:
                name = f"{key.replace('/', '_')}.jsonl"
                same = timeless(Path(tmp, f"{n}-old", name)) == timeless(Path(tmp, f"{n}-new", name))
                identical[key] = min(identical[key], int(same))
    figures: dict = {"items": items, "runs": runs}
    raw = {
        side: {
            **{key: [r[key]["s"] for r in reports] for key in SYSTEMS},
            "total": [sum(r[key]["s"] for key in SYSTEMS) for r in reports],
            "fsync": [sum(r[key]["fsync_s"] for key in SYSTEMS) for r in reports],
        }
        for side, reports in sides.items()
    }
    for side, seconds in raw.items():
        figures[side] = {key: spread(values) for key, values in seconds.items()}
    figures["new_store_queries"] = sides["new"][0]["store_queries"]
    figures["correct_share"] = {key: sides["new"][0][key]["correct_share"] for key in SYSTEMS}
    figures["identical"] = identical
    figures["new_over_old_total"] = figures["new"]["total"]["median"] / figures["old"]["total"]["median"]
    return figures, raw


def markdown(figures: dict, raw: dict[str, dict[str, list[float]]]) -> str:
    rows = [
        "| system | old s | new s | new / old (medians) | identical lines |",
        "|---|---|---|---|---|",
    ]
    for key in (*SYSTEMS, "total", "fsync"):
        old, new = raw["old"][key], raw["new"][key]
        ratio = figures["new"][key]["median"] / figures["old"][key]["median"]
        same = "yes" if figures["identical"].get(key) else "**no**" if key in SYSTEMS else ""
        rows.append(f"| {key} | {spread_text(old, digits=1)} | {spread_text(new, digits=1)} | {ratio:.2f} | {same} |")
    return (
        f"{figures['items']} items of one language, {figures['runs']} runs, old and new back to back in each, "
        f"each tree in a fresh process. New code's store queries in a run: {figures['new_store_queries']}. "
        "`fsync`: the part of `total` spent in the runner's fsync per line.\n\n" + "\n".join(rows)
    )


def smoke(root: Path) -> tuple[Path, int]:
    """A tiny synthetic corpus under `root`, built as bench_scale.py builds it."""
    from benchmarks.bench_scale import build
    from chpit_assets.synthetic.generator import Params, generate

    corpus = root / "synthetic"
    generate(Params(acts=4, editions_per_act=3, articles=(6, 10)), corpus, ROOT / "data" / "fedlex-sample")
    build(corpus)
    return corpus, 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=absolute, default=ROOT / "data" / "synthetic")
    parser.add_argument("--lang", default="de")
    parser.add_argument("--items", type=int, default=5000, help="the first N items of bench-{lang}.jsonl")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=absolute, help="a checkout of the code to compare with (e.g. main)")
    parser.add_argument("--write", type=absolute, help="append the figures (markdown) to this file")
    parser.add_argument("--smoke", type=absolute, metavar="DIR", help="tiny scale, everything under DIR (make test)")
    parser.add_argument("--measure", nargs=2, type=absolute, metavar=("CODE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure[0], args.corpus, args.lang, args.items, args.measure[1])))
        return 0
    if args.smoke:
        args.corpus, args.runs = smoke(args.smoke)
        args.baseline = ROOT  # this tree against itself: the comparison's whole path, no second checkout
    if args.baseline is None:
        parser.error("--baseline DIR (a checkout of the code to compare with) is required")
    ensure_index(args.corpus, args.lang)
    items = min(
        args.items, len((args.corpus / "_build" / "build" / f"bench-{args.lang}.jsonl").read_text().splitlines())
    )
    figures, raw = compare(args.corpus, args.lang, items, args.runs, args.baseline)
    print(markdown(figures, raw), flush=True)
    if args.write:
        record(args.write, "P5: the five model-free systems, old vs new (issue 27.4)", markdown(figures, raw))
    emit("bench_free_systems", figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
