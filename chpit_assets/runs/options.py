"""The `run` options of issue 25, kept out of cli.py's own parser: `--repeats` (model systems ask
every item N times) and `--cutoff` (the model's training cutoff, recorded in each receipt)."""

from __future__ import annotations

import argparse
from datetime import date

from .systems import model_systems


def add_model_options(model: argparse._ArgumentGroup, runs: argparse._ArgumentGroup) -> None:
    model.add_argument(
        "--cutoff",
        default="",
        help="the model's training cutoff (YYYY-MM-DD), recorded in every receipt; the report splits the "
        "date-sensitive items before/after it",
    )
    runs.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="model systems: ask every item N times (repeat 0 is the published run; the report shows mean ± sd "
        "and per-item agreement)",
    )


def check_model_options(args: argparse.Namespace, systems: list[str]) -> str:
    """The first problem with --repeats or --cutoff, or ""."""
    if args.repeats < 1:
        return f"--repeats must be >= 1, got {args.repeats}"
    if args.repeats > 1 and not model_systems(systems):
        return f"--repeats {args.repeats} asks model systems again; none of {', '.join(systems)} asks a model"
    if args.cutoff:
        try:
            date.fromisoformat(args.cutoff)
        except ValueError:
            return f"--cutoff {args.cutoff!r} is not a date (YYYY-MM-DD)"
    return ""
