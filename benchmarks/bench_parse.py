"""P2: article extraction against a bare `lxml.etree.parse` of the same bytes, each side in its own process.

    .venv/bin/python benchmarks/bench_parse.py [--runs 3] [--rounds 5] [--min-mb 0.3] [--tree DIR] [DIR ...]
    .venv/bin/python benchmarks/bench_parse.py --smoke DIR      # 2 smallest sample files, 1 run, 1 round
    .venv/bin/python benchmarks/bench_parse.py --write docs/benchmarks.md

Method (issue 27.3). A run is two child processes back to back on the same files, read into memory
first: one only parses each file with `etree.parse` (the limit), the other only extracts it with
`parse_edition`. One process per side so that neither warms the other's caches or allocator (timed
in one process, whichever side runs second inherits the memory the first freed, which is how an
in-process comparison once reported 3.35x for SR 220 where separate processes say about 2x). Inside
a process each file is timed `--rounds` times in CPU time (`time.process_time`: other jobs on the 2
shared cores count less than in wall time) and its best round kept. The order of the two sides
alternates from run to run. Per file over `--min-mb` and for the whole set (sum of the files' best
times) the ratio extraction/bare is reported as the median of `--runs` runs with min and max.

`--tree DIR` takes the extraction side's code from another checkout (e.g. a worktree at main), so
old and new can be measured side by side by running the script once per tree, interleaved.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from io import BytesIO
from pathlib import Path

from lxml import etree

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import absolute, emit, machine, record, spread  # noqa: E402

SAMPLE = ROOT / "data" / "fedlex-sample"


def real_files(dirs: list[Path]) -> list[Path]:
    """Every edition file under `dirs`, the Federal Gazette negative example left out (it is refused)."""
    return [p for d in dirs for p in sorted(d.rglob("*.xml")) if "not-sr" not in p.relative_to(d).parts]


def side(kind: str, paths: list[Path], rounds: int, tree: Path) -> dict[str, float]:
    """Child process: the best CPU time (s) of each file on one side."""
    sys.path.insert(0, str(tree))  # ahead of ROOT and the editable install: the code under test
    from chpit_assets.akn.parser import parse_edition

    files = [(str(p), p.read_bytes()) for p in paths]
    best = dict.fromkeys((name for name, _ in files), float("inf"))
    for _ in range(rounds):
        for name, data in files:
            start = time.process_time()
            if kind == "bare":
                etree.parse(BytesIO(data))
            else:
                parse_edition(data, name)
            best[name] = min(best[name], time.process_time() - start)
    return best


def run_side(kind: str, paths: list[Path], rounds: int, tree: Path) -> dict[str, float]:
    args = [sys.executable, str(Path(__file__).resolve()), "--side", kind, "--rounds", str(rounds), "--tree", str(tree)]
    done = subprocess.run([*args, *map(str, paths)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{kind} side failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(paths: list[Path], runs: int, rounds: int, tree: Path) -> list[dict[str, dict[str, float]]]:
    out = []
    for r in range(runs):
        order = ("bare", "extract") if r % 2 == 0 else ("extract", "bare")
        times = {kind: run_side(kind, paths, rounds, tree) for kind in order}
        out.append(times)
    return out


def label(path: Path) -> str:
    return "/".join(path.parts[-2:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=absolute)
    parser.add_argument("--runs", type=int, default=3, help="process pairs, back to back (median, min, max)")
    parser.add_argument("--rounds", type=int, default=5, help="timings of each file inside a process (best kept)")
    parser.add_argument("--min-mb", type=float, default=0.3, help="files reported one by one from this size")
    parser.add_argument("--tree", type=absolute, default=ROOT, help="checkout whose chpit_assets the extraction uses")
    parser.add_argument("--smoke", type=absolute, metavar="DIR", help="tiny scale: the 2 smallest sample files")
    parser.add_argument("--write", type=absolute, metavar="PATH", help="append the figures to a markdown record")
    parser.add_argument("--side", choices=("bare", "extract"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:  # the child: `dirs` are the files
        print(json.dumps(side(args.side, args.dirs, args.rounds, args.tree)))
        return
    if args.smoke:
        smallest = sorted(real_files([SAMPLE]), key=lambda p: p.stat().st_size)[:2]
        args.smoke.mkdir(parents=True, exist_ok=True)
        for p in smallest:
            shutil.copy(p, args.smoke / p.name)
        args.dirs, args.runs, args.rounds, args.min_mb = [args.smoke], 1, 1, 0.0
    paths = real_files(args.dirs or [SAMPLE])
    results = measure(paths, args.runs, args.rounds, args.tree.resolve())
    large = [p for p in paths if p.stat().st_size >= args.min_mb * 1e6]
    ratios = {label(p): [r["extract"][str(p)] / r["bare"][str(p)] for r in results] for p in large}
    whole = [sum(r["extract"].values()) / sum(r["bare"].values()) for r in results]
    bare_ms = {label(p): min(r["bare"][str(p)] for r in results) * 1e3 for p in large}
    lines = [
        f"{len(paths)} files ({sum(p.stat().st_size for p in paths) / 1e6:.1f} MB), {args.runs} runs of a "
        f"bare-parse process and an extraction process back to back, best of {args.rounds} rounds (CPU "
        f"time) inside each; extraction from {args.tree}",
        "",
        "| file | MB | bare ms (best) | extraction / bare: median (min, max) |",
        "|---|---|---|---|",
    ]
    for p in large:
        s = spread(ratios[label(p)])
        lines.append(
            f"| {label(p)} | {p.stat().st_size / 1e6:.2f} | {bare_ms[label(p)]:.1f} | "
            f"{s['median']:.2f}x ({s['min']:.2f}, {s['max']:.2f}) |"
        )
    w = spread(whole)
    lines.append(f"| all {len(paths)} files | | | {w['median']:.2f}x ({w['min']:.2f}, {w['max']:.2f}) |")
    body = "\n".join(lines)
    print(machine())
    print(body)
    if args.write:
        record(args.write, "P2: extraction vs bare lxml parse, one process per side", body)
    emit("bench_parse", {"files": {k: spread(v) for k, v in ratios.items()}, "all": spread(whole)})


if __name__ == "__main__":
    main()
