"""CLI: python -m chpit_assets.synthetic --out data/synthetic --acts N --editions-per-act M --langs de,fr,it --seed S"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date
from pathlib import Path

from .generator import Params, SyntheticError, generate
from .material import MaterialError

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m chpit_assets.synthetic",
        description="Write a synthetic (clearly labelled, never publishable) Fedlex-shaped corpus.",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "synthetic")
    parser.add_argument("--acts", type=int, required=True)
    parser.add_argument("--editions-per-act", type=int, required=True)
    parser.add_argument("--langs", default="de,fr,it")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--today",
        type=date.fromisoformat,
        default=Params.today,
        help="editions after this date are future-dated (default %(default)s)",
    )
    parser.add_argument("--articles", default="10:60", help="articles per act in its first edition, MIN:MAX")
    parser.add_argument("--workers", type=int, default=2, help="processes (output is the same for any number)")
    parser.add_argument(
        "--sample-dir",
        type=Path,
        default=ROOT / "data" / "fedlex-sample",
        help="the real Fedlex sample the articles are taken from",
    )
    args = parser.parse_args(argv)
    try:
        lo, _, hi = args.articles.partition(":")
        params = Params(
            acts=args.acts,
            editions_per_act=args.editions_per_act,
            langs=tuple(code.strip() for code in args.langs.split(",") if code.strip()),
            seed=args.seed,
            today=args.today,
            articles=(int(lo), int(hi or lo)),
        )
        start = time.perf_counter()
        summary = generate(params, args.out, args.sample_dir, workers=args.workers)
    except (SyntheticError, MaterialError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - start
    print(
        f"{args.out}: {summary.acts} acts, {summary.editions} catalog editions, {summary.files} files "
        f"({summary.bytes / 1e6:.1f} MB), {summary.amendments} amendment records in {seconds:.1f} s"
    )
    for shape, count in sorted(summary.shapes.items()):
        print(f"  {shape}: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
