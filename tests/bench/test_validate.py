"""The invariants behind the asset checks flag exactly the bad items."""

from chpit_assets.bench.validate import (
    duplicate_ids,
    misdated,
    over_cap,
    without_discriminating_unit,
)

from .conftest import long_text


def item(
    id_,
    as_of="2024-12-31",
    gold=("2023-01-01", "2024-12-31"),
    distractor=("2025-01-01", None),
    gold_text=long_text("Die Frist beträgt 30 Tage ab Zustellung des Entscheids."),
    distractor_text=long_text("Die Frist beträgt 60 Tage ab Zustellung des Entscheids."),
    act_id=1,
    e_id="art_1",
):
    return {
        "id": id_,
        "as_of": as_of,
        "act_id": act_id,
        "e_id": e_id,
        "change_date": "2025-01-01",
        "gold": {"date_applicability": gold[0], "date_end_applicability": gold[1], "text": gold_text},
        "distractor": {
            "date_applicability": distractor[0],
            "date_end_applicability": distractor[1],
            "text": distractor_text,
        },
    }


def test_duplicate_ids():
    assert duplicate_ids([item("a"), item("b"), item("a")]) == ["a"]


def test_misdated_items():
    good = item("ok")
    outside_gold = item("late", as_of="2025-01-01")  # the distractor's first day
    gold_end_inclusive = item("last", as_of="2024-12-31", gold=("2023-01-01", "2024-12-31"))
    overlapping = item("both", distractor=("2024-12-31", None))
    # B11 allows an old edition without an end date: the `after` item's day is covered by both
    # editions, and the lookup returns the newer one, which is gold here.
    open_old_edition = item("after", as_of="2025-01-01", gold=("2025-01-01", None), distractor=("2023-01-01", None))
    open_old_edition_wrong_way = item(
        "before", as_of="2025-01-01", gold=("2023-01-01", None), distractor=("2025-01-01", None)
    )
    assert misdated(
        [good, outside_gold, gold_end_inclusive, overlapping, open_old_edition, open_old_edition_wrong_way]
    ) == ["late", "both", "before"]


def test_items_without_discriminating_unit():
    shorter = long_text("Die Frist beträgt 30 Tage.")
    longer = long_text("Die Frist beträgt 30 Tage.", "Sie kann einmal um zehn Tage verlängert werden.")
    assert without_discriminating_unit([item("ok"), item("del", gold_text=shorter, distractor_text=longer)]) == ["del"]


def test_over_cap_ignores_published_items():
    frozen = [item(f"f{n}", e_id=f"art_{n}") for n in range(3)]
    new = [item(f"n{n}", e_id=f"art_{10 + n}") for n in range(2)]
    assert over_cap(frozen + new, frozen, item_cap=5, per_act_cap=50) == []
    assert over_cap(frozen + new, frozen, item_cap=4, per_act_cap=50) == ["n0", "n1"]
    assert over_cap(frozen + new, frozen, item_cap=9, per_act_cap=4) == ["n0", "n1"]
    assert over_cap(frozen, frozen, item_cap=1, per_act_cap=1) == []  # a lowered cap never flags published items


def test_an_item_cap_of_zero_is_no_cap():
    items = [{"id": f"n{k}", "act_id": 1, "e_id": f"art_{k}", "change_date": "2024-01-01"} for k in range(7)]
    assert over_cap(items, [], item_cap=0, per_act_cap=50) == []
    assert over_cap(items, [], item_cap=0, per_act_cap=6) == [i["id"] for i in items]
