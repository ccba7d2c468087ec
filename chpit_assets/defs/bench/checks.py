"""Asset checks on bench_items, per language partition: each names the offending item ids."""

import json

import dagster as dg

from chpit_assets.bench import validate
from chpit_assets.bench.frozen import changed_items, load_frozen
from chpit_assets.bench.items import load_items

from ..partitions import lang_partitions
from ..resources import ChpitStore
from .assets import bench_items


def _result(bad: list[str], what: str) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=not bad,
        metadata={"failing": len(bad), "ids": dg.MetadataValue.md(", ".join(bad[:50]) or f"all {what}")},
    )


def _stats(chpit: ChpitStore, lang: str) -> dict:
    raw = chpit.store.frame("SELECT stats FROM bench_stats WHERE lang = ? AND step = 'bench_items'", [lang])
    return json.loads(raw["stats"][0])


@dg.asset_check(asset=bench_items, partitions_def=lang_partitions, description="B17: item ids are unique.")
def ids_unique(context: dg.AssetCheckExecutionContext, chpit: ChpitStore) -> dg.AssetCheckResult:
    return _result(validate.duplicate_ids(load_items(chpit.store, context.partition_key)), "unique")


@dg.asset_check(asset=bench_items, partitions_def=lang_partitions,
                description="B13: as_of inside the gold edition's validity, outside the distractor's.")
def as_of_in_gold_edition(context: dg.AssetCheckExecutionContext, chpit: ChpitStore) -> dg.AssetCheckResult:
    return _result(validate.misdated(load_items(chpit.store, context.partition_key)), "dated correctly")


@dg.asset_check(asset=bench_items, partitions_def=lang_partitions,
                description="B12: every item's gold has a unit the distractor does not contain.")
def has_discriminating_unit(context: dg.AssetCheckExecutionContext, chpit: ChpitStore) -> dg.AssetCheckResult:
    items = load_items(chpit.store, context.partition_key)
    return _result(validate.without_discriminating_unit(items), "discriminable")


@dg.asset_check(asset=bench_items, partitions_def=lang_partitions,
                description="B18: every published item is in the build, unchanged.")
def published_items_unchanged(context: dg.AssetCheckExecutionContext, chpit: ChpitStore) -> dg.AssetCheckResult:
    lang = context.partition_key
    frozen = load_frozen(_stats(chpit, lang)["frozen_dir"], lang)
    return _result(changed_items(frozen, load_items(chpit.store, lang)), f"{len(frozen)} published items unchanged")


@dg.asset_check(asset=bench_items, partitions_def=lang_partitions,
                description="B14: at most item_cap items per language and per_act_cap changes per act.")
def cap_respected(context: dg.AssetCheckExecutionContext, chpit: ChpitStore) -> dg.AssetCheckResult:
    lang = context.partition_key
    stats = _stats(chpit, lang)
    frozen = load_frozen(stats["frozen_dir"], lang)
    bad = validate.over_cap(load_items(chpit.store, lang), frozen, stats["item_cap"], stats["per_act_cap"])
    return _result(bad, "within the caps")
