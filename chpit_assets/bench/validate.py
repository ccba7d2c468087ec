"""Invariants of a built item set, for the asset checks: each returns the offending item ids
(empty = holds), so a failing check names exactly which items to look at."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date

from .eligibility import TextMemo
from .items import change_key


def duplicate_ids(items: Sequence[Mapping]) -> list[str]:
    """B17: ids are unique within a language."""
    return sorted(i for i, n in Counter(i["id"] for i in items).items() if n > 1)


def _covers(edition: Mapping, day: date) -> bool:
    start = date.fromisoformat(edition["date_applicability"])
    end = edition["date_end_applicability"]
    return start <= day and (end is None or day <= date.fromisoformat(end))


def dated_correctly(item: Mapping) -> bool:
    """B13: `as_of` lies inside the gold edition's validity (end inclusive), and the point-in-time
    lookup on that day returns gold, not the distractor (R2: of the editions covering a day, the later
    start wins). Usually the distractor simply does not cover `as_of`; when the old edition carries no
    end date (allowed by B11), both cover an `after` item's day and the newer gold wins."""
    day = date.fromisoformat(item["as_of"])
    gold, distractor = item["gold"], item["distractor"]
    return _covers(gold, day) and (
        not _covers(distractor, day) or gold["date_applicability"] > distractor["date_applicability"]
    )


def discriminable(item: Mapping, texts: TextMemo) -> bool:
    """B12: the gold text has a unit the distractor's normalised text does not contain."""
    return texts.discriminates(item["gold"]["text"], item["distractor"]["text"])


def misdated(items: Sequence[Mapping]) -> list[str]:
    """B13 (`dated_correctly`) over a set: the items it fails."""
    return [i["id"] for i in items if not dated_correctly(i)]


def without_discriminating_unit(items: Sequence[Mapping]) -> list[str]:
    """B12 (`discriminable`) over a set, with one memo for the whole set: a change's two items, and
    neighbouring changes, share their texts."""
    texts = TextMemo()
    return [i["id"] for i in items if not discriminable(i, texts)]


FACT_FIELDS = ("id", "act_id", "e_id", "change_date")
"""What B14 and B17 count an item by."""


def item_facts(item: Mapping, texts: TextMemo) -> dict:
    """All the asset checks read from one item besides the published items' whole records:
    `FACT_FIELDS`, and its own B13 and B12 outcomes (`dated`, `discriminable`)."""
    return {
        **{k: item[k] for k in FACT_FIELDS},
        "dated": dated_correctly(item),
        "discriminable": discriminable(item, texts),
    }


def over_cap(items: Sequence[Mapping], frozen: Sequence[Mapping], item_cap: int, per_act_cap: int) -> list[str]:
    """B14 on what this build added: the item cap (after the published items; 0 = none) and 50
    changes per act.
    Published items are kept even if a later build lowers a cap (B18), so they are not flagged."""
    frozen_ids = {f["id"] for f in frozen}
    new = [i for i in items if i["id"] not in frozen_ids]
    if item_cap and len(new) > max(0, item_cap - len(frozen)):  # 0 = no cap (PROTOCOL §1.7)
        return [i["id"] for i in new]
    changes = {change_key(i["act_id"], i["e_id"], i["change_date"]): i["act_id"] for i in [*frozen, *new]}
    per_act = Counter(changes.values())
    return [i["id"] for i in new if per_act[i["act_id"]] > per_act_cap]
