"""B16: the core subset, 500 items per language that every published baseline runs on.

Selection, with `random.Random(f"{seed}:{lang}:core")`:
 * every `as_of` year present gets an equal share of `size`, the remainder going
   one each to the earliest years;
 * within a year, items are taken round-robin over the four (kind, gold_is_current)
   cells, each cell in a seeded shuffle of its id-sorted items, so before/after and
   current/superseded are as even as the year's pool allows;
 * a year too thin for its share keeps what it has; the shortfall is filled from
   the other years round-robin (earliest first, one item per year per turn, each
   year continuing its own cell rotation).
The result depends only on the items' ids, years and cells, not on their order.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

CORE_SIZE = 500
# Fixed cell order of the rotation; a cell label is how the report names it.
CELLS: tuple[tuple[str, bool], ...] = (("before", False), ("before", True), ("after", False), ("after", True))


def cell_label(kind: str, gold_is_current: bool) -> str:
    return f"{kind}/{'current' if gold_is_current else 'superseded'}"


@dataclass(frozen=True)
class CoreSplit:
    ids: frozenset[str]
    years: dict[str, int]   # as_of year -> core items
    cells: dict[str, int]   # cell label -> core items

    def stats(self) -> dict:
        return {"size": len(self.ids), "years": dict(self.years), "cells": dict(self.cells)}


class _Year:
    """One year's four shuffled cell queues and its position in the rotation."""

    def __init__(self, queues: list[list[str]]):
        self.queues = queues
        self.turn = 0

    def left(self) -> int:
        return sum(map(len, self.queues))

    def take(self) -> tuple[str, int]:
        while not self.queues[self.turn % len(CELLS)]:
            self.turn += 1
        cell = self.turn % len(CELLS)
        self.turn += 1
        return self.queues[cell].pop(), cell


def select_core(items: Iterable[Mapping], lang: str, seed: int, size: int = CORE_SIZE) -> CoreSplit:
    """Pick the core ids among `items` (dicts with id, as_of, kind, gold_is_current)."""
    rng = random.Random(f"{seed}:{lang}:core")
    pools: dict[int, list[list[str]]] = {}
    for item in items:
        year = int(str(item["as_of"])[:4])
        cell = CELLS.index((item["kind"], bool(item["gold_is_current"])))
        pools.setdefault(year, [[] for _ in CELLS])[cell].append(item["id"])
    years = {}
    for year in sorted(pools):
        queues = []
        for ids in pools[year]:
            ids = sorted(ids)
            rng.shuffle(ids)
            queues.append(ids[::-1])  # pop() from the end takes the shuffle's first item
        years[year] = _Year(queues)

    chosen: list[tuple[str, int, int]] = []

    def take(year: int) -> None:
        item_id, cell = years[year].take()
        chosen.append((item_id, year, cell))

    if years:
        share, extra = divmod(size, len(years))
        for i, year in enumerate(sorted(years)):
            for _ in range(min(share + (i < extra), years[year].left())):
                take(year)
        while len(chosen) < size:
            open_years = [y for y in sorted(years) if years[y].left()]
            if not open_years:
                break
            for year in open_years:
                if len(chosen) == size:
                    break
                take(year)

    year_counts: dict[str, int] = {}
    cell_counts = {cell_label(k, c): 0 for k, c in CELLS}
    for _, year, cell in chosen:
        year_counts[str(year)] = year_counts.get(str(year), 0) + 1
        cell_counts[cell_label(*CELLS[cell])] += 1
    return CoreSplit(frozenset(i for i, _, _ in chosen), dict(sorted(year_counts.items())), cell_counts)
