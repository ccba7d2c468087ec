"""build-report.json in the published shape (PROTOCOL §1):

    {<lang>: {changes_considered, selected, items, skipped, core}, ..., seed,
     caps: {per_lang_cap, per_act_cap, core_per_lang}, built_at, sources, build}

`skipped` holds the reasons that occurred, in the order the published builder meets them: B8 and
B9 (counted by its query), then B7 and B4/B5 in change order, then the item loop's B11 and B12,
then `capped` (§1.3-§1.8). Its counts are in mixed units, as published: changes, except
`overlapping_editions` (two per change) and `no_discriminating_unit` (halves), and `capped` counts
changes plus the one trimmed item. What always adds up is checked: `changes_considered` = the
B8/B9/B7/B4-B5 counts + `selected`.

Determinism: `built_at` is whatever the build was configured with (ReportConfig.build_date, the
release date, e.g. "2026-09-04"; null on a dev build), never the wall clock, so two builds from the
same store and settings are byte-identical; when a build actually ran is in Dagster's run record.
Our further counts (filtered changes, published and new items, halves without a discriminating
unit) are in bench_stats and the assets' metadata, not here.
"""

from __future__ import annotations

import json
from pathlib import Path

from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import LANGS

from ..files import write_atomic
from .tables import missing_tables


class BuildReportError(RuntimeError):
    """The per-language counts are missing, inconsistent, or from different builds."""


def report_langs(report: dict) -> list[str]:
    """The languages a build report has a section for, in LANGS order."""
    return [lang for lang in LANGS if lang in report]


def language_report(lang: str, eligible: dict, items: dict) -> dict:
    """One language's section (PROTOCOL §1.3-§1.8)."""
    counted = sum(eligible["skips"].values())
    if (
        counted + items["selected"] != eligible["changes_considered"]
        or items["eligible_changes"] != eligible["eligible"]
    ):
        raise BuildReportError(
            f"{lang}: counts do not add up: {eligible['changes_considered']} considered, {counted} skipped before "
            f"the shuffle + {items['selected']} selected ({items['eligible_changes']} eligible read by bench_items, "
            f"{eligible['eligible']} written by eligible_changes)"
        )
    skipped = {**eligible["skips"], **items["skips"]}
    if items["capped"] > 0:
        skipped["capped"] = items["capped"]
    return {
        "changes_considered": eligible["changes_considered"],
        "selected": items["selected"],
        "items": items["items"],
        "skipped": skipped,
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
    keys = ("build", "seed", "per_act_cap", "item_cap", "core_size")
    first = {k: stats[langs[0]]["bench_items"][k] for k in keys}
    report: dict = {}
    sources = None
    for lang in langs:
        items = stats[lang]["bench_items"]
        other = {k: items[k] for k in keys}
        if other != first:
            raise BuildReportError(f"{lang} was built with {other}, {langs[0]} with {first}; rebuild both")
        if "eligible_changes" not in stats[lang]:
            raise BuildReportError(f"{lang}: bench_items ran but eligible_changes stats are missing")
        eligible = stats[lang]["eligible_changes"]
        if sources is not None and eligible["sources"] != sources:
            raise BuildReportError(f"{lang} was built from sources {eligible['sources']}, {langs[0]} from {sources}")
        sources = eligible["sources"]
        report[lang] = language_report(lang, eligible, items)
    return {
        **report,
        "seed": first["seed"],
        "caps": {
            "per_lang_cap": first["item_cap"],
            "per_act_cap": first["per_act_cap"],
            "core_per_lang": first["core_size"],
        },
        "built_at": build_date,
        "sources": sources,
        "build": first["build"],
    }


def write_report(path: Path | str, report: dict) -> None:
    write_atomic(Path(path), (json.dumps(report, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
