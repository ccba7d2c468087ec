"""Stamp `recite_label` and `recite_as_of` into items at publication (PROTOCOL §9, card "Fields").

Build items do not carry the two fields: they exist only in the published data, measured by a
recite run. `stamp_recite(items, recite_log)` is what the publisher calls before writing.

- `recite_label` is the scorer's verdict on today's edition as `ch_get_act_article` returned it
  without a date; None where the recite line is an error (the tool could not resolve the article).
- `recite_as_of` is ONE date for the whole run, the published run's `finished[:10]`. Our recite
  log is resumable, so a "run" may span several sittings; its finished date is the last day any
  of its lines measured today's edition: the latest `lookup.as_of` over its error-free lines (the
  tool's "today" for a call without a date). Read from the lines, not from a run report's wall
  clock, so the same log always stamps the same bytes, and a run with an injected `today` stamps
  that day. Errored items get None, as the card specifies.
- Position: the card's field table lists the two keys after `source` and before `licence`, so
  they are inserted right after `source`; the rest of the published order (`licence, build,
  core`) is untouched. A stale pair already in an item is replaced, never duplicated.
Items with no recite line are returned unchanged: nothing was measured for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from chpit_assets.runs.runner import errored

STAMPED = ("recite_label", "recite_as_of")


class StampError(ValueError):
    """A recite line or an item the stamp cannot be computed from; the message names the item."""


def recite_finished(recite_log: Mapping[str, dict]) -> str | None:
    """The recite run's finished date (YYYY-MM-DD): the latest lookup day of its error-free lines."""
    days = []
    for item_id, line in recite_log.items():
        if errored(line):
            continue
        day = (line.get("lookup") or {}).get("as_of")
        if not isinstance(day, str) or len(day) < 10:
            raise StampError(f"recite line for item {item_id!r} has no lookup.as_of date (got {day!r})")
        days.append(day[:10])
    return max(days, default=None)


def with_stamp(item: dict, label: str | None, as_of: str | None) -> dict:
    if "source" not in item:
        raise StampError(f"item {item.get('id')!r} has no 'source' field to place the recite stamp after")
    out = {}
    for key, value in item.items():
        if key in STAMPED:
            continue
        out[key] = value
        if key == "source":
            out["recite_label"], out["recite_as_of"] = label, as_of
    return out


def stamp_recite(items: Iterable[dict], recite_log: Mapping[str, dict]) -> list[dict]:
    """New item dicts stamped from {item id: recite line} (a scored-view or a raw run-log line)."""
    finished = recite_finished(recite_log)
    stamped = []
    for item in items:
        line = recite_log.get(item["id"])
        if line is None:
            stamped.append(dict(item))
        elif errored(line):
            stamped.append(with_stamp(item, None, None))
        else:
            stamped.append(with_stamp(item, line["verdict"]["label"], finished))
    return stamped
