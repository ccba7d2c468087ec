"""Which asset partitions one invocation covers: the languages asked, everything downstream of them.

Derived from the asset specs' partitions definitions, not from a list of names: an asset on the
`lang` axis is backfilled for the languages built, one on (system, lang) for each system and
published language built, an unpartitioned one once. A partial run (`--limit`, `--sr-numbers`,
...) leaves out the publication (PUBLICATION), so it is reported and never published.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import dagster as dg

from chpit_assets.langs import BENCH_LANGS

TRIGGER_TAG = "chpit/trigger"
"""What launched a backfill and its runs: cli, schedule, sensor (or benchmark).

Here, not beside the driver, so the code location's schedules and sensors name it without importing
the driver and Dagster's daemon machinery into every run process."""

LANG_AXIS = "lang"
SYSTEM_AXIS = "system"
PUBLICATION = (dg.AssetKey("publish_gate"), dg.AssetKey("hf_dataset"))


@dataclass(frozen=True)
class Target:
    partitioned: dict[dg.AssetKey, list[str]] = field(default_factory=dict)
    unpartitioned: set[dg.AssetKey] = field(default_factory=set)

    @property
    def keys(self) -> set[dg.AssetKey]:
        return set(self.partitioned) | self.unpartitioned


def target_for(asset_graph, langs: Sequence[str], systems: Sequence[str], *, publish: bool) -> Target:
    """Every asset of the code location's asset graph (`Definitions.resolve_asset_graph()`, or a
    schedule's `repository_def.asset_graph`), with the partitions this invocation covers."""
    bench_langs = [lang for lang in langs if lang in BENCH_LANGS]
    partitioned: dict[dg.AssetKey, list[str]] = {}
    unpartitioned: set[dg.AssetKey] = set()
    for key in sorted(asset_graph.get_all_asset_keys()):
        partitions_def = asset_graph.get(key).partitions_def
        if partitions_def is None:
            if publish or key not in PUBLICATION:
                unpartitioned.add(key)
        elif _axes(partitions_def) == {SYSTEM_AXIS, LANG_AXIS}:
            keys = [
                str(dg.MultiPartitionKey({SYSTEM_AXIS: system, LANG_AXIS: lang}))
                for system in systems
                for lang in bench_langs
            ]
            if keys:
                partitioned[key] = keys
        elif _axes(partitions_def) == {LANG_AXIS}:
            partitioned[key] = list(langs)
        # Any other axis (a published release's) is not part of a build of ours.
    return Target(partitioned, unpartitioned)


def _axes(partitions_def: dg.PartitionsDefinition) -> set[str]:
    """The names of a partitions definition's dynamic axes (`lang`, `system` of the system|lang multi axis)."""
    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        return {d.name for d in partitions_def.partitions_defs}
    return {partitions_def.name or ""} if isinstance(partitions_def, dg.DynamicPartitionsDefinition) else set()
