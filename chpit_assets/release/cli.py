"""`python -m chpit_assets release {pull,validate,report}` and `run --items release:REV|release-dir:PATH`.

    python -m chpit_assets release pull overthelex/ch-pit --revision v2026.09
    python -m chpit_assets release validate release:v2026.09
    python -m chpit_assets run --items release:v2026.09 --systems oracle,recite
    python -m chpit_assets release report release:v2026.09

Exit codes as `run`'s: 0 ok, 1 a bad release or some items errored, 2 a bad argument or a paid
run without confirmation (its estimate printed on stdout in the published shape, PROTOCOL §7).
"""

from __future__ import annotations

import argparse
import json
import sys

from .errors import ReleaseError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m chpit_assets release", description="a published CH-PiT release")
    sub = parser.add_subparsers(dest="action", required=True)
    pull = sub.add_parser("pull", help="download a release from the Hub (HF_ENDPOINT, HF_TOKEN) and validate it")
    pull.add_argument("repo_id", help="the Hub dataset, e.g. overthelex/ch-pit")
    pull.add_argument("--revision", required=True, help="the tag or commit, e.g. v2026.09")
    for action, text in (
        ("validate", "check a pulled or local release"),
        ("report", "our rows beside the published ones"),
    ):
        sub.add_parser(action, help=text).add_argument("items", help="release:REVISION or release-dir:PATH")
    return parser


def main(argv: list[str]) -> int:
    from chpit_assets.defs.resources import ChpitStore

    from .layout import open_release
    from .pull import pull
    from .report import write_release_report
    from .validate import validate_release

    args = _parser().parse_args(argv)
    root = ChpitStore().root
    try:
        if args.action == "pull":
            release = pull(args.repo_id, args.revision, root)
            counts = validate_release(release)
            files = (release.manifest() or {}).get("files", {})
            print(f"release {args.revision}: {release.files} ({len(files)} files, sha256 in {release.manifest_path})")
            print(f"valid: {json.dumps(counts)}")
        elif args.action == "validate":
            print(f"valid: {json.dumps(validate_release(open_release(args.items, root)))}")
        else:
            release = open_release(args.items, root)
            validate_release(release)
            _print_report(write_release_report(release))
    except ReleaseError as exc:
        print(f"python -m chpit_assets release {args.action}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _print_report(paths: dict) -> None:
    check = json.loads(paths["rescore.json"].read_text(encoding="utf-8"))
    verdict = (
        "reproduced exactly"
        if check["reproduced"]
        else f"NOT reproduced: {len(check['differing_numbers'])} numbers differ"
    )
    print(
        f"published report-all.json re-scored with our scorer: {verdict}; {len(check['differing_items'])} item verdicts differ"
    )
    print(paths["summary.md"].read_text(encoding="utf-8"), end="")
    print("report: " + ", ".join(str(p) for p in paths.values()))


def run_on_release(langs: list[str], systems: list[str], model_config: dict, runs_config: dict) -> int:
    """`run --items SPEC`: the systems on the release's core (release.run.run_release), then the report."""
    from chpit_assets.defs.resources import ChpitStore
    from chpit_assets.defs.runs.resources import ModelEndpoint
    from chpit_assets.pit.tools import PitTools
    from chpit_assets.runs.client import dry_run_estimate
    from chpit_assets.runs.errors import RunError, SpendNotConfirmedError
    from chpit_assets.runs.systems import parse_system_key

    from .report import write_release_report
    from .run import run_release

    chpit = ChpitStore()
    tools = PitTools(chpit.released_store()) if chpit.store_path.exists() else None
    model = ModelEndpoint(**model_config)
    slugs = sorted(slug for key in systems if (slug := parse_system_key(key).slug) is not None)
    try:
        with model.endpoints(slugs[0] if slugs else None) as endpoints:
            run = run_release(
                runs_config["items"],
                systems,
                chpit.root,
                langs=langs,
                tools=tools,
                endpoints=endpoints,
                confirm=model.confirm,
                sample_per_lang=runs_config.get("sample_per_lang", 0),
                limit=runs_config.get("limit", 0),
                workers=model.workers,
                retry_errors=runs_config.get("retry_errors", True),
                new_run=runs_config.get("new_run", False),
                echo=lambda s: print(s, file=sys.stderr),
            )
    except SpendNotConfirmedError as exc:
        print(json.dumps(dry_run_estimate({model.model or model.slug: exc.estimate}), ensure_ascii=False))
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except (ReleaseError, RunError) as exc:
        print(
            f"python -m chpit_assets run --items {runs_config['items']}: {type(exc).__name__}: {exc}", file=sys.stderr
        )
        return EXIT_FAILED
    errored = 0
    for summary in run.summaries:
        print(
            f"  {summary.system} [{summary.path.stem}]: {summary.asked} asked, {summary.errors} errored, {summary.skipped} answered before"
        )
        errored += summary.errors
    _print_report(write_release_report(run.release))
    return EXIT_FAILED if errored else EXIT_OK
