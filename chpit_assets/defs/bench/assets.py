"""Benchmark builder assets (issue 4), thin wrappers over `chpit_assets.bench`.

Per language (lang_partitions): act_changes -> eligible_changes -> bench_items -> core_split;
then build_report over every built language. Outputs: ch_act_change, bench_eligible,
bench_item, bench_stats in the store; data/build/bench-{lang}.jsonl, core-{lang}.jsonl and
build-report.json.
"""

import json

import dagster as dg

from chpit_assets.bench import changes, eligibility, items
from chpit_assets.bench.build_report import build_report as make_report
from chpit_assets.bench.build_report import report_langs, write_report
from chpit_assets.bench.core_split import CORE_SIZE
from chpit_assets.markdown import table

from ..metadata import data_version
from ..partitions import lang_partitions
from ..resources import ChpitStore

GROUP = "bench"
REPORT_NAME = "build-report.json"


class EligibleConfig(dg.Config):
    sources: list[str] = list(eligibility.DEFAULT_SOURCES)  # B2: edition sources both sides must come from


class ItemsConfig(dg.Config):
    build: str = "dev"  # stamped on new items, e.g. "v2026.09"
    seed: int = items.SEED  # B15/B16
    per_act_cap: int = items.PER_ACT_CAP  # B14
    item_cap: int = items.ITEM_CAP  # B14
    core_size: int = CORE_SIZE  # B16


class ReportConfig(dg.Config):
    build_date: str | None = None  # the release date, written as `built_at`; never the wall clock


@dg.asset(
    partitions_def=lang_partitions, group_name=GROUP, deps=["parsed_articles"], kinds={"duckdb"}, pool="duckdb_writer"
)
def act_changes(context: dg.AssetExecutionContext, chpit: ChpitStore) -> dg.MaterializeResult:
    """ch_act_change: added/removed/modified articles between consecutive parsed editions
    (recomputed only for acts whose parsed editions changed since the last build)."""
    built = changes.update_changes(chpit.store, context.partition_key)
    frame = built.changes
    by_type = dict(sorted(frame.group_by("change_type").len().rows()))
    return dg.MaterializeResult(
        data_version=data_version(frame.write_csv().encode()),
        metadata={
            "changes": frame.height,
            **{t: by_type.get(t, 0) for t in ("added", "removed", "modified")},
            "acts": built.acts,
            "acts_recomputed": built.acts_recomputed,
        },
    )


@dg.asset(partitions_def=lang_partitions, group_name=GROUP, deps=[act_changes], kinds={"duckdb"}, pool="duckdb_writer")
def eligible_changes(
    context: dg.AssetExecutionContext, config: EligibleConfig, chpit: ChpitStore
) -> dg.MaterializeResult:
    """PROTOCOL §1.1-§1.4 (B1-B10, B12 precomputed per half): the changes the item loop can draw from,
    every exclusion counted."""
    result = eligibility.update_eligible(chpit.store, context.partition_key, tuple(config.sources))
    return dg.MaterializeResult(
        data_version=data_version(result.eligible.write_csv().encode() + repr(result.stats()).encode()),
        metadata={
            "sources": ", ".join(result.sources),
            "changes_considered": result.changes_considered,
            "eligible": result.eligible.height,
            "halves_without_discriminating_unit": result.halves_without_discriminating_unit,
            "acts": result.act_outcomes.height,
            "acts_recomputed": result.acts_recomputed,
            "skips": dg.MetadataValue.md(table(["reason", "changes"], list(result.skips.items()))),
            # Dropped before changes_considered, as the published query drops them: named, not silent.
            "filtered": dg.MetadataValue.md(table(["reason", "changes"], list(result.filtered.items()))),
        },
    )


@dg.asset(
    partitions_def=lang_partitions,
    group_name=GROUP,
    deps=[eligible_changes],
    kinds={"duckdb", "json"},
    pool="duckdb_writer",
)
def bench_items(context: dg.AssetExecutionContext, config: ItemsConfig, chpit: ChpitStore) -> dg.MaterializeResult:
    """Items B13-B19 with core flags: data/build/bench-{lang}.jsonl and the bench_item table."""
    lang = context.partition_key
    settings = items.BuildSettings(config.build, config.seed, config.per_act_cap, config.item_cap, config.core_size)
    result, path = items.update_items(chpit.store, chpit.build_dir, lang, settings, chpit.frozen_path)
    head = [json.loads(line) for line in result.lines[:3]]
    examples = [(i["id"], i["kind"], i["as_of"], i["question"], i["gold"]["text"][:100]) for i in head]
    s = result.stats
    return dg.MaterializeResult(
        data_version=data_version(path.read_bytes()),
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            "items": s["items"],
            "items_new": s["items_new"],
            "items_published": s["items_published"],
            "selected_changes": s["selected"],
            "consumed_changes": s["consumed"],
            "capped": s["capped"],
            "core": s["core"]["items"],
            "examples": dg.MetadataValue.md(table(["id", "kind", "as_of", "question", "gold (start)"], examples)),
        },
    )


@dg.asset(partitions_def=lang_partitions, group_name=GROUP, deps=[bench_items], kinds={"json"})
def core_split(context: dg.AssetExecutionContext, chpit: ChpitStore) -> dg.MaterializeResult:
    """B16: data/build/core-{lang}.jsonl, the bench items flagged core."""
    lang = context.partition_key
    core = items.write_core(chpit.store, chpit.build_dir, lang)
    path = items.core_path(chpit.build_dir, lang)
    years: dict[str, int] = {}
    cells: dict[tuple[str, bool], int] = {}
    for i in core:
        years[i["as_of"][:4]] = years.get(i["as_of"][:4], 0) + 1
        cells[(i["kind"], i["gold_is_current"])] = cells.get((i["kind"], i["gold_is_current"]), 0) + 1
    return dg.MaterializeResult(
        data_version=data_version(path.read_bytes()),
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            "core": len(core),
            "per_year": dg.MetadataValue.md(table(["as_of year", "items"], sorted(years.items()))),
            "per_cell": dg.MetadataValue.md(
                table(["kind", "gold_is_current", "items"], [(*k, n) for k, n in sorted(cells.items())])
            ),
        },
    )


@dg.asset(group_name=GROUP, deps=[core_split], kinds={"json"})
def build_report(context: dg.AssetExecutionContext, config: ReportConfig, chpit: ChpitStore) -> dg.MaterializeResult:
    """data/build/build-report.json over every built language."""
    report = make_report(chpit.store, config.build_date)
    path = chpit.build_dir / REPORT_NAME
    write_report(path, report)
    langs = report_langs(report)
    reasons = list(dict.fromkeys(r for lang in langs for r in report[lang]["skipped"]))
    rows = [
        (
            lang,
            report[lang]["changes_considered"],
            report[lang]["selected"],
            report[lang]["items"],
            report[lang]["core"]["items"],
            *(report[lang]["skipped"].get(r, 0) for r in reasons),
        )
        for lang in langs
    ]
    columns = ["lang", "considered", "selected", "items", "core", *reasons]
    return dg.MaterializeResult(
        data_version=data_version(path.read_bytes()),
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            "build": report["build"],
            "languages": ", ".join(langs),
            "counts": dg.MetadataValue.md(table(columns, rows)),
        },
    )
