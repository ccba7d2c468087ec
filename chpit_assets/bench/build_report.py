"""build-report.json: per-language counts, skip reasons, sources, core per year and per cell.

Determinism: the report holds no wall-clock time. `build_date` is whatever the
build was configured with (a release sets it, e.g. "2026-09-04"; a dev build leaves
it null), so two builds from the same store and settings are byte-identical; when
a build actually ran is in Dagster's run record, not in the output.
"""

from __future__ import annotations

import json
from pathlib import Path

from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import LANGS

from ..files import write_atomic
from .eligibility import SKIP_REASONS
from .tables import missing_tables


class BuildReportError(RuntimeError):
    """The per-language counts are missing, inconsistent, or from different builds."""


def language_report(eligible: dict, items: dict) -> dict:
    """One language's section; its skip counts plus `selected` and `published` add up to
    `changes_considered` (checked, since a bucket that leaks would make the report lie)."""
    skips = {**eligible["skips"], "capped": items["capped"], "duplicate_question": items["duplicate_question"]}
    total = sum(skips.values()) + items["selected"] + items["published"]
    if total != eligible["changes_considered"] or items["eligible_changes"] != eligible["eligible"]:
        raise BuildReportError(
            f"counts do not add up: {eligible['changes_considered']} considered, {total} accounted for "
            f"({items['eligible_changes']} eligible read by bench_items, {eligible['eligible']} written)"
        )
    return {
        "sources": eligible["sources"],
        "changes_considered": eligible["changes_considered"],
        "skips": skips,
        "halves_dropped_no_discriminating_unit": eligible["halves_dropped_no_discriminating_unit"],
        "published": items["published"],
        "selected": items["selected"],
        "items": items["items"],
        "items_published": items["items_published"],
        "items_new": items["items_new"],
        "core": items["core"],
    }


def build_report(store: Store, build_date: str | None) -> dict:
    """The report over every language the store holds a full build of (bench_items ran). Read-only."""
    with store.connect(read_only=True) as con:
        rows = [] if missing_tables(con) else con.execute("SELECT lang, step, stats FROM bench_stats").fetchall()
    stats: dict[str, dict[str, dict]] = {}
    for lang, step, raw in rows:
        stats.setdefault(lang, {})[step] = json.loads(raw)
    langs = [lang for lang in LANGS if "bench_items" in stats.get(lang, {})]
    if not langs:
        raise BuildReportError("no language has been built (no bench_items stats in the store)")
    settings = {k: stats[lang]["bench_items"][k] for lang in langs[:1] for k in ("build", "seed", "per_act_cap", "item_cap", "core_size")}
    report: dict = {**settings, "build_date": build_date, "skip_reasons": [*SKIP_REASONS, "capped", "duplicate_question"]}
    report["languages"] = langs
    for lang in langs:
        items = stats[lang]["bench_items"]
        other = {k: items[k] for k in settings}
        if other != settings:
            raise BuildReportError(f"{lang} was built with {other}, {langs[0]} with {settings}; rebuild both")
        if "eligible_changes" not in stats[lang]:
            raise BuildReportError(f"{lang}: bench_items ran but eligible_changes stats are missing")
        report[lang] = language_report(stats[lang]["eligible_changes"], items)
    return report


def write_report(path: Path | str, report: dict) -> None:
    write_atomic(Path(path), (json.dumps(report, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
