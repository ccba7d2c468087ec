"""B18: an item published in a build never changes; later builds only add.

Where the record lives: `frozen/{lang}.jsonl` at the repository root, committed to
git. One line per published item, the item exactly as published (its `build` is
the build it first appeared in), sorted by id. Being in git is what makes a fresh
clone and a nightly rebuild honour it alike: neither depends on a local store or
on reaching the hub. The publish step calls `record_published` after an upload
and the change is committed with it; the builder only reads the record.

What the builder does with it (`items.build_items`): every recorded item of the
language is emitted unchanged, whether or not its change is still eligible; its
change is taken out of the sampling pool and its items count against both caps
(B14) first, so a new build only adds. Free to change between builds:
`FREE_FIELDS` -- `core` (each build draws its core over all its items, B16) and
the recite stamps (a dated fact, re-stamped at each publication).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..files import write_atomic
from .files import jsonl_bytes

DEFAULT_FROZEN_DIR = "frozen"  # relative to the repository root, where `make run` runs
FREE_FIELDS: frozenset[str] = frozenset({"core", "recite_label", "recite_as_of"})


class FrozenError(ValueError):
    """The frozen record is unreadable, or a build tried to change a published item."""


def frozen_path(frozen_dir: Path | str, lang: str) -> Path:
    return Path(frozen_dir) / f"{lang}.jsonl"


def load_frozen(frozen_dir: Path | str, lang: str) -> list[dict]:
    """The published items of `lang` (empty when nothing was published yet)."""
    path = frozen_path(frozen_dir, lang)
    if not path.exists():
        return []
    items: list[dict] = []
    seen: set[str] = set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FrozenError(f"{path}:{n}: not JSON: {exc}") from exc
        if not isinstance(item, dict) or item.get("lang") != lang or not item.get("id"):
            raise FrozenError(f"{path}:{n}: not a {lang} item with an id")
        if item["id"] in seen:
            raise FrozenError(f"{path}:{n}: id {item['id']} recorded twice")
        seen.add(item["id"])
        items.append(item)
    return items


def _frozen_part(item: Mapping) -> dict:
    return {k: v for k, v in item.items() if k not in FREE_FIELDS}


def changed_items(frozen: Iterable[Mapping], items: Iterable[Mapping]) -> list[str]:
    """Ids of published items missing from `items` or different outside `FREE_FIELDS`."""
    by_id = {i["id"]: i for i in items}
    return [f["id"] for f in frozen if f["id"] not in by_id or _frozen_part(by_id[f["id"]]) != _frozen_part(f)]


def record_published(frozen_dir: Path | str, lang: str, items: Iterable[Mapping]) -> int:
    """Add the items of a publication to the record; returns how many were new.

    Raises FrozenError, writing nothing, if a published item would change."""
    recorded = {i["id"]: i for i in load_frozen(frozen_dir, lang)}
    added = 0
    for item in items:
        if item.get("lang") != lang:
            raise FrozenError(f"item {item.get('id')} is not {lang}")
        old = recorded.get(item["id"])
        if old is None:
            recorded[item["id"]] = dict(item)
            added += 1
        elif _frozen_part(old) != _frozen_part(item):
            raise FrozenError(f"{lang} item {item['id']} was published as {_frozen_part(old)} and may not change")
    write_atomic(frozen_path(frozen_dir, lang), jsonl_bytes(recorded[k] for k in sorted(recorded)))
    return added
