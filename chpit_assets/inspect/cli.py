"""`python -m chpit_assets inspect export|import`: chpit run logs to and from Inspect `.eval` logs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="inspect_command", required=True)
    export = sub.add_parser("export", help="a run log (data/results/{system}/{lang}.jsonl) -> an Inspect .eval log")
    export.add_argument("run_log", type=Path)
    export.add_argument("-o", "--out", type=Path, help="the .eval file (default: data/inspect/{system}/{lang}.eval)")
    export.add_argument("--data-dir", default="", help="the data folder with build/ (default: data/)")
    imp = sub.add_parser(
        "import", help="an Inspect .eval log of a CH-PiT task -> data/results/{system}/{lang}.jsonl and its scored view"
    )
    imp.add_argument("eval_log", type=Path)
    imp.add_argument("--data-dir", default="", help="the data folder with results/ and build/ (default: data/)")
    imp.add_argument("--replace", action="store_true", help="overwrite a run log that holds other lines")


def main(args: argparse.Namespace) -> int:
    try:
        from chpit_assets.defs.resources import ChpitStore
        from chpit_assets.runs.runner import results_path

        from .logs import InspectLogError, export_run, import_log
    except ImportError as exc:  # the optional extra is not installed
        print(f"python -m chpit_assets inspect: {exc}; install it with pip install '.[inspect]'", file=sys.stderr)
        return 2
    chpit = ChpitStore(data_dir=args.data_dir)
    try:
        if args.inspect_command == "export":
            out = args.out
            if out is None:
                relative = args.run_log.resolve().relative_to(chpit.results_dir.resolve())
                out = chpit.root / "inspect" / relative.with_suffix(".eval")
            lang = args.run_log.stem  # {lang}.jsonl
            recite = results_path(chpit.results_dir, "recite", lang)
            print(export_run(args.run_log, chpit.build_dir, out, recite_log=recite))
        else:
            for path in import_log(args.eval_log, chpit.results_dir, chpit.build_dir, replace=args.replace):
                print(path)
    except (InspectLogError, FileNotFoundError, ValueError) as exc:
        print(f"python -m chpit_assets inspect {args.inspect_command}: {exc}", file=sys.stderr)
        return 1
    return 0
