"""Stamp `recite_label` and `recite_as_of` into items from a recite run (card, "Fields").

For the builder and the publisher: call `stamp_recite(items, recite_log)` before
writing the items to publish. The label is the scorer's verdict on today's
edition as `ch_get_act_article` returned it without a date; `recite_as_of` is the
day that lookup was made (the tools' "today", recorded as the line's `lookup.as_of`).
An item the tool could not resolve (an error line) gets None for both, as the
card specifies. Items with no recite line yet are returned unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def stamp_recite(items: Iterable[dict], recite_log: Mapping[str, dict]) -> list[dict]:
    """New item dicts with recite_label/recite_as_of set from {item id: recite result line}."""
    stamped = []
    for item in items:
        line = recite_log.get(item["id"])
        if line is None:
            stamped.append(dict(item))
        elif line["error"] is not None:
            stamped.append({**item, "recite_label": None, "recite_as_of": None})
        else:
            stamped.append({**item, "recite_label": line["verdict"]["label"], "recite_as_of": line["lookup"]["as_of"]})
    return stamped
