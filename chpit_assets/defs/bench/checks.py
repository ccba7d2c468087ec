"""Asset checks on bench_items, per language partition: each names the offending item ids.

The five checks are one step that reads the language's items once: each used to read and parse
all of them (15 MB at CH-PiT scale), which cost more than the rebuild they were checking.
"""

import json
from collections.abc import Callable, Iterator

import dagster as dg

from chpit_assets.bench import validate
from chpit_assets.bench.frozen import changed_items, load_frozen
from chpit_assets.bench.items import load_items

from ..partitions import lang_partitions
from ..resources import ChpitStore
from .assets import bench_items

# check name -> (description, what a passing check says, the offending ids of (items, frozen, stats))
Check = Callable[[list[dict], list[dict], dict], list[str]]
CHECKS: dict[str, tuple[str, str, Check]] = {
    "ids_unique": ("B17: item ids are unique.", "unique", lambda items, frozen, stats: validate.duplicate_ids(items)),
    "as_of_in_gold_edition": (
        "B13: as_of inside the gold edition's validity, outside the distractor's.",
        "dated correctly",
        lambda items, frozen, stats: validate.misdated(items),
    ),
    "has_discriminating_unit": (
        "B12: every item's gold has a unit the distractor does not contain.",
        "discriminable",
        lambda items, frozen, stats: validate.without_discriminating_unit(items),
    ),
    "published_items_unchanged": (
        "B18: every published item is in the build, unchanged.",
        "published items unchanged",
        lambda items, frozen, stats: changed_items(frozen, items),
    ),
    "cap_respected": (
        "B14: at most item_cap items per language and per_act_cap changes per act.",
        "within the caps",
        lambda items, frozen, stats: validate.over_cap(items, frozen, stats["item_cap"], stats["per_act_cap"]),
    ),
}


def _stats(chpit: ChpitStore, lang: str) -> dict:
    raw = chpit.store.frame("SELECT stats FROM bench_stats WHERE lang = ? AND step = 'bench_items'", [lang])
    return json.loads(raw["stats"][0])


@dg.multi_asset_check(
    specs=[
        dg.AssetCheckSpec(name, asset=bench_items, description=description, partitions_def=lang_partitions)
        for name, (description, _, _) in CHECKS.items()
    ],
)
def bench_items_checks(context: dg.AssetCheckExecutionContext, chpit: ChpitStore) -> Iterator[dg.AssetCheckResult]:
    lang = context.partition_key
    stats = _stats(chpit, lang)
    frozen = load_frozen(chpit.frozen_path, lang)  # the one setting the build read it from (issue 23.3)
    items = load_items(chpit.store, lang)
    for name, (_, passing, offending) in CHECKS.items():
        bad = offending(items, frozen, stats)
        yield dg.AssetCheckResult(
            asset_key=bench_items.key,
            check_name=name,
            passed=not bad,
            metadata={"failing": len(bad), "ids": dg.MetadataValue.md(", ".join(bad[:50]) or f"all {passing}")},
        )
