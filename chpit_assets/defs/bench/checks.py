"""Asset checks on bench_items, per language partition: each names the offending item ids.

The five checks are one step that reads the language's lines once. What they read from an item is
remembered per line's bytes (chpit_assets/bench/check_memo.py): a rebuild decodes and checks only
the lines that changed since the last check, and the published items, which B18 compares whole.
"""

import json
from collections.abc import Callable, Iterator

import dagster as dg

from chpit_assets.bench import validate
from chpit_assets.bench.check_memo import Checked, check_language, memo_path
from chpit_assets.bench.frozen import changed_items, load_frozen

from ..partitions import lang_partitions
from ..resources import ChpitStore
from .assets import bench_items

# check name -> (description, what a passing check says, the offending ids of (checked lines, frozen, stats))
Check = Callable[[Checked, list[dict], dict], list[str]]
CHECKS: dict[str, tuple[str, str, Check]] = {
    "ids_unique": (
        "B17: item ids are unique.",
        "unique",
        lambda checked, frozen, stats: validate.duplicate_ids(checked.facts),
    ),
    "as_of_in_gold_edition": (
        "B13: as_of inside the gold edition's validity, outside the distractor's.",
        "dated correctly",
        lambda checked, frozen, stats: [f["id"] for f in checked.facts if not f["dated"]],
    ),
    "has_discriminating_unit": (
        "B12: every item's gold has a unit the distractor does not contain.",
        "discriminable",
        lambda checked, frozen, stats: [f["id"] for f in checked.facts if not f["discriminable"]],
    ),
    "published_items_unchanged": (
        "B18: every published item is in the build, unchanged.",
        "published items unchanged",
        lambda checked, frozen, stats: changed_items(frozen, checked.published),
    ),
    "cap_respected": (
        "B14: at most item_cap items per language and per_act_cap changes per act.",
        "within the caps",
        lambda checked, frozen, stats: validate.over_cap(
            checked.facts, frozen, stats["item_cap"], stats["per_act_cap"]
        ),
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
    checked = check_language(chpit.store, lang, memo_path(chpit.cache_dir, lang), {f["id"] for f in frozen})
    if checked.refused:
        context.log.warning(f"bench_items_checks[{lang}]: every line checked afresh: {checked.refused}")
    for name, (_, passing, offending) in CHECKS.items():
        bad = offending(checked, frozen, stats)
        yield dg.AssetCheckResult(
            asset_key=bench_items.key,
            check_name=name,
            passed=not bad,
            metadata={
                "failing": len(bad),
                "ids": dg.MetadataValue.md(", ".join(bad[:50]) or f"all {passing}"),
                "lines_checked_now": checked.checked_now,
            },
        )
