"""B16: the core subset, 500 items per language that every published baseline runs on.

The published draw, step for step (PROTOCOL §2; CHPIT.md B16 lacks the shuffle order, the pop from
the end and the cursor carry-over), with `rng = random.Random(f"{seed}:{lang}:core")`:
 1. the items, in id order, go into pool[year][cell], year = `as_of[:4]`, cell = (kind,
    gold_is_current);
 2. for each year ascending, each of its cells in `CELLS` order is shuffled;
 3. target = min(size, items). take(year) tries the year's cells from its cursor on, in `CELLS`
    order: the first non-empty one gives its LAST item and the cursor moves past it; when all are
    empty nothing is taken and the cursor stays;
 4. pass 1: year i of n wants share + (i < rem), (share, rem) = divmod(target, n), and stops at its
    first empty take; pass 2: while short, one take per year ascending, until the target or a sweep
    that took nothing. The cursors carry over from pass 1.
The result depends only on the items' ids, years and cells, not on their order.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

CORE_SIZE = 500
# The published cell order of the shuffles and of the rotation.
CELLS: tuple[tuple[str, bool], ...] = (("before", False), ("after", False), ("before", True), ("after", True))


def cell_label(kind: str, gold_is_current: bool) -> str:
    return f"{kind}/{'current' if gold_is_current else 'superseded'}"


@dataclass(frozen=True)
class CoreSplit:
    ids: frozenset[str]
    years: dict[str, int]  # as_of year -> core items, first appearance over the id-sorted core
    cells: dict[str, int]  # cell label -> core items, same order

    def stats(self) -> dict:
        """As build-report.json's `{lang}.core` (PROTOCOL §2.7)."""
        return {"items": len(self.ids), "per_year": dict(self.years), "per_cell": dict(self.cells)}


def select_core(items: Iterable[Mapping], lang: str, seed: int, size: int = CORE_SIZE) -> CoreSplit:
    """Pick the core ids among `items` (dicts with id, as_of, kind, gold_is_current)."""
    rng = random.Random(f"{seed}:{lang}:core")
    pools: dict[str, dict[int, list[tuple[str, str, int]]]] = {}
    for item in sorted(items, key=lambda i: i["id"]):
        year = str(item["as_of"])[:4]
        cell = CELLS.index((item["kind"], bool(item["gold_is_current"])))
        pools.setdefault(year, {}).setdefault(cell, []).append((item["id"], year, cell))
    years = sorted(pools)
    for year in years:
        for cell in range(len(CELLS)):
            if cell in pools[year]:
                rng.shuffle(pools[year][cell])
    target = min(size, sum(len(c) for y in pools.values() for c in y.values()))
    cursor = dict.fromkeys(years, 0)
    chosen: list[tuple[str, str, int]] = []

    def take(year: str) -> bool:
        for offset in range(len(CELLS)):
            cell = (cursor[year] + offset) % len(CELLS)
            if pools[year].get(cell):
                chosen.append(pools[year][cell].pop())
                cursor[year] = (cell + 1) % len(CELLS)
                return True
        return False

    if years:
        share, rem = divmod(target, len(years))
        for i, year in enumerate(years):
            for _ in range(share + (i < rem)):
                if not take(year):
                    break
        took = True
        while len(chosen) < target and took:
            took = False
            for year in years:
                if len(chosen) >= target:
                    break
                took = take(year) or took

    per_year: dict[str, int] = {}
    per_cell: dict[str, int] = {}
    for _, year, cell in sorted(chosen):
        per_year[year] = per_year.get(year, 0) + 1
        label = cell_label(*CELLS[cell])
        per_cell[label] = per_cell.get(label, 0) + 1
    return CoreSplit(frozenset(i for i, _, _ in chosen), per_year, per_cell)
