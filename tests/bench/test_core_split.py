"""B16 as published (PROTOCOL §2): equal share per as_of year (remainder to the earliest), cells
shuffled year by year in the published cell order, popped from the end, per-year cursors carried
from pass 1 into the fill pass."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from chpit_assets.bench.core_split import CELLS, cell_label, select_core


def pool(year: int, n: int, cells=CELLS, tag: str = "") -> list[dict]:
    """n items in `year`, spread over `cells` in turn."""
    return [
        {
            "id": f"{tag}{year}-{i:04d}",
            "as_of": f"{year}-06-01",
            "kind": cells[i % len(cells)][0],
            "gold_is_current": cells[i % len(cells)][1],
        }
        for i in range(n)
    ]


def test_published_cell_order():
    assert CELLS == (("before", False), ("after", False), ("before", True), ("after", True))


def test_equal_share_per_year_with_remainder_to_earliest_years():
    items = pool(2021, 40) + pool(2022, 40) + pool(2023, 40)
    core = select_core(items, "de", 1, size=11)
    assert core.years == {"2021": 4, "2022": 4, "2023": 3}


def test_rotation_follows_the_published_cell_order_within_a_year():
    # Cursor 0: cells 0, 1, 2, 3, 0, 1, 2, 3, 0, 1 -> the first two cells of C get the extra ones.
    core = select_core(pool(2024, 80), "de", 1, size=10)
    assert core.cells == {"before/superseded": 3, "after/superseded": 3, "before/current": 2, "after/current": 2}


def test_empty_cells_are_skipped_and_absent_from_the_report():
    only_two = [("before", False), ("after", True)]
    core = select_core(pool(2024, 50, cells=only_two), "de", 1, size=9)
    assert core.cells == {"before/superseded": 5, "after/current": 4}


def test_draw_order_is_years_ascending_cells_in_order_and_pop_last():
    # PROTOCOL §2.2-§2.4 replayed by hand: the one rng shuffles 2021's two cells (C order: before/
    # superseded, then after/superseded), then 2022's; each take pops a cell's LAST item.
    items = pool(2022, 6, cells=[("after", True)], tag="z") + pool(2021, 12, cells=CELLS[:2], tag="a")
    rng = random.Random("7:it:core")
    cells = [
        sorted(i["id"] for i in items if i["as_of"][:4] == y and (i["kind"], i["gold_is_current"]) == c)
        for y, c in (("2021", CELLS[0]), ("2021", CELLS[1]), ("2022", CELLS[3]))
    ]
    for ids in cells:
        rng.shuffle(ids)
    # Size 5: 2021 wants 3 (cells 0, 1, 0), 2022 wants 2 (its only cell, twice).
    expected = {cells[0][-1], cells[1][-1], cells[0][-2], cells[2][-1], cells[2][-2]}
    assert select_core(items, "it", 7, size=5).ids == expected


def test_cursors_carry_over_into_the_fill_pass():
    # 2021 has one after/current item: pass 1 takes it (cursor 0 -> 0) and stops; 2022 takes cells 0,
    # 1, 2 (cursor -> 3). The fill pass continues 2022 at cell 3 then 0; restarting at 0 would give
    # two after/superseded and one after/current.
    items = pool(2021, 1, cells=[("after", True)]) + pool(2022, 40)
    core = select_core(items, "de", 1, size=6)
    assert core.years == {"2021": 1, "2022": 5}
    assert sorted(core.cells.items()) == sorted(
        {"before/superseded": 2, "after/superseded": 1, "before/current": 1, "after/current": 2}.items()
    )


def test_report_keys_in_first_appearance_over_the_id_sorted_core():
    items = pool(2023, 8, tag="a") + pool(2021, 8, tag="b")  # the 2023 ids sort first
    core = select_core(items, "de", 3, size=6)
    chosen = sorted((i for i in items if i["id"] in core.ids), key=lambda i: i["id"])
    assert list(core.years) == ["2023", "2021"]
    assert list(core.cells) == list(dict.fromkeys(cell_label(i["kind"], i["gold_is_current"]) for i in chosen))
    assert core.stats() == {"items": 6, "per_year": core.years, "per_cell": core.cells}


def test_thin_year_keeps_what_it_has_and_the_others_fill_round_robin():
    # Share 4 each; 2011 has 1, so 3 more come from 2022, 2023, 2024 in turn (earliest first, §2.6).
    items = pool(2011, 1) + pool(2022, 30) + pool(2023, 30) + pool(2024, 30)
    core = select_core(items, "fr", 1, size=16)
    assert core.years == {"2011": 1, "2022": 5, "2023": 5, "2024": 5}


def test_fewer_items_than_size_takes_them_all():
    items = pool(2021, 3) + pool(2022, 2)
    assert select_core(items, "it", 1, size=500).ids == {i["id"] for i in items}


def test_seed_and_language_decide_the_draw():
    items = pool(2021, 60) + pool(2022, 60)
    assert select_core(items, "de", 1, 10).ids == select_core(items, "de", 1, 10).ids
    assert select_core(items, "de", 1, 10).ids != select_core(items, "fr", 1, 10).ids


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.dictionaries(st.integers(2011, 2029), st.integers(0, 40), max_size=6),
    size=st.integers(0, 60),
    shuffle_seed=st.integers(0, 10),
    cells=st.lists(st.sampled_from(CELLS), min_size=1, max_size=4, unique=True),
)
def test_core_properties(sizes, size, shuffle_seed, cells):
    """The core is a function of (items, seed) only; shares are as even as the years allow."""
    items = [i for y, n in sizes.items() for i in pool(y, n, cells=cells)]
    core = select_core(items, "de", 20260825, size)
    assert len(core.ids) == min(size, len(items)) == sum(core.years.values()) == sum(core.cells.values())
    assert core.ids <= {i["id"] for i in items}
    shuffled = list(items)
    random.Random(shuffle_seed).shuffle(shuffled)
    assert select_core(shuffled, "de", 20260825, size).ids == core.ids  # order of input is irrelevant
    # Equal shares: a year below its share is exhausted; no two years with spare items differ by more
    # than the remainder allows.
    years = sorted(y for y, n in sizes.items() if n)
    if years and len(items) >= size:
        share = size // len(years)
        for y in years:
            assert core.years.get(str(y), 0) >= min(share, sizes[y])
