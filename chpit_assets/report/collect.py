"""The report's input read from the results folder: every system's scored view (`{lang}.scored.jsonl`)
and, for runs with repeats, the scored view of every repeat (`{lang}.repeats.jsonl`)."""

from __future__ import annotations

from pathlib import Path

from chpit_assets.bench.items import core_path
from chpit_assets.runs.runner import REPEATS_SUFFIX, SCORED_SUFFIX, read_jsonl


def _collect(results_dir: Path, build_dir: Path, suffix: str) -> dict[str, list[dict]]:
    current: dict[str, set[str]] = {}
    scored: dict[str, list[dict]] = {}
    for path in sorted(Path(results_dir).rglob(f"*{suffix}")):
        lang = path.name.removesuffix(suffix)
        if lang not in current:
            core = core_path(build_dir, lang)
            current[lang] = {item["id"] for item in read_jsonl(core)} if core.exists() else set()
        system_key = path.parent.relative_to(results_dir).as_posix()
        scored.setdefault(system_key, []).extend(line for line in read_jsonl(path) if line["id"] in current[lang])
    return scored


def collect_scored(results_dir: Path, build_dir: Path) -> dict[str, list[dict]]:
    """{system key: scored lines of every language} from `{system}/{lang}.scored.jsonl`, in sorted path order.

    Only lines whose item is in the current core split count: a system not re-run since the last
    rebuild keeps answers to items that no longer exist, which would silently mix two builds."""
    return _collect(results_dir, build_dir, SCORED_SUFFIX)


def collect_repeats(results_dir: Path, build_dir: Path) -> dict[str, list[dict]]:
    """{system key: scored lines of every repeat} for the systems run with `repeats` > 1."""
    return _collect(results_dir, build_dir, REPEATS_SUFFIX)
