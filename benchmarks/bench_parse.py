"""P2: article extraction against bare `lxml.etree.fromstring` of the same bytes (the limit).

    .venv/bin/python benchmarks/bench_parse.py [--rounds 5] [--per-file N] [DIR ...]

Both are timed side by side in one process on the same files (read into memory
first), alternating per round, and the best round of each is compared: on a
noisy 2-core machine the minimum is the stable statistic. Target: within 2x.

`--per-file N` also times the N largest files one by one (bare parse and
extraction of one file back to back, best of the rounds, in CPU time so other
processes on the machine count less) and prints each file's ratio: the real
large codes (SR 220 de, 2.1 MB; SR 210 fr, 1.4 MB) are where a whole-corpus
figure could hide a file far over the target.
"""

from __future__ import annotations

import argparse
import platform
import time
from datetime import UTC, datetime
from pathlib import Path

from lxml import etree

from chpit_assets.akn.errors import AknError
from chpit_assets.akn.parser import parse_edition

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path, default=[ROOT / "data" / "fedlex-sample"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-file", type=int, default=0, metavar="N", help="also time the N largest files one by one")
    args = parser.parse_args()
    files = [(p, p.read_bytes()) for d in args.dirs for p in sorted(d.rglob("*.xml")) if "not-sr" not in p.parts]
    total_bytes = sum(len(b) for _, b in files)

    def bare() -> int:
        return sum(len(etree.fromstring(data)) for _, data in files)

    def extract() -> int:
        n = 0
        for path, data in files:
            try:
                n += len(parse_edition(data, str(path)).articles)
            except AknError:
                pass
        return n

    best = {"bare": float("inf"), "extract": float("inf")}
    articles = 0
    for _ in range(args.rounds):
        for name, fn in (("bare", bare), ("extract", extract)):
            start = time.perf_counter()
            out = fn()
            best[name] = min(best[name], time.perf_counter() - start)
            if name == "extract":
                articles = out
    mb = total_bytes / 1e6
    print(
        f"date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {platform.machine()} {platform.processor() or ''}".rstrip()
    )
    print(f"files: {len(files)} ({mb:.1f} MB), articles: {articles}, rounds: {args.rounds} (best of)")
    print(f"bare lxml parse:    {best['bare']:.3f} s  ({mb / best['bare']:.1f} MB/s)")
    print(
        f"article extraction: {best['extract']:.3f} s  ({mb / best['extract']:.1f} MB/s, {len(files) / best['extract']:.0f} editions/s)"
    )
    print(f"ratio extraction / bare parse: {best['extract'] / best['bare']:.2f}x (target <= 2x)")
    if args.per_file:
        print_per_file(sorted(files, key=lambda f: -len(f[1]))[: args.per_file], args.rounds)


def print_per_file(files: list[tuple[Path, bytes]], rounds: int) -> None:
    print(f"per file (CPU time, best of {rounds}):")
    print("| file | MB | articles | bare ms | extraction ms | ratio |")
    print("|---|---|---|---|---|---|")
    for path, data in files:
        bare = extract = float("inf")
        for _ in range(rounds):
            start = time.process_time()
            etree.fromstring(data)
            bare = min(bare, time.process_time() - start)
            start = time.process_time()
            n = len(parse_edition(data, str(path)).articles)
            extract = min(extract, time.process_time() - start)
        name = "/".join(path.parts[-2:])
        print(
            f"| {name} | {len(data) / 1e6:.2f} | {n} | {bare * 1e3:.1f} | {extract * 1e3:.1f} | {extract / bare:.2f}x |"
        )


if __name__ == "__main__":
    main()
