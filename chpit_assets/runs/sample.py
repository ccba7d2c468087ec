"""Which items a model run asks (PROTOCOL §6): the published `:llm`-seeded, kind-balanced subsample of
the core split (the published agentic rows used N = 100 per language), then an optional `--limit`.

Pure functions of (items, N, seed): the input order never matters, because every bucket is sorted
by id before its one shuffle.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from chpit_assets.bench.items import SEED

QUOTA_ORDER = ("before", "after")  # PROTOCOL §6: the odd item of a quota goes to `before`


def _by_id(items: Iterable[dict]) -> list[dict]:
    return sorted(items, key=lambda item: item["id"])


def sample_lang(items: list[dict], lang: str, n: int, seed: int = SEED) -> list[dict]:
    """N items of one language, half `before` (rounded up), half `after`, topped up from the rest."""
    rng = random.Random(f"{seed}:{lang}:llm")
    buckets: dict[str, list[dict]] = {}
    for item in items:
        buckets.setdefault(item["kind"], []).append(item)
    for kind in sorted(buckets):  # alphabetically: after, then before -- the RNG's order
        buckets[kind] = _by_id(buckets[kind])
        rng.shuffle(buckets[kind])
    target = min(n, len(items))
    base = target // 2
    quota = {"before": base + target % 2, "after": base}
    chosen: list[dict] = []
    leftover: list[dict] = []
    for kind in QUOTA_ORDER:
        bucket = buckets.get(kind, [])
        chosen += bucket[: quota[kind]]
        leftover += bucket[quota[kind] :]
    if len(chosen) < target:
        rng.shuffle(leftover)
        chosen += leftover[: target - len(chosen)]
    return _by_id(chosen)


def subsample(items: Iterable[dict], n: int, seed: int = SEED) -> list[dict]:
    """PROTOCOL §6 over items of any languages: per language `sample_lang`, concatenated, sorted by
    id. N <= 0 means every item."""
    items = list(items)
    if n <= 0:
        return _by_id(items)
    langs = sorted({item["lang"] for item in items})
    return _by_id(x for lang in langs for x in sample_lang([i for i in items if i["lang"] == lang], lang, n, seed))


def select_items(items: Iterable[dict], *, sample_per_lang: int = 0, limit: int = 0, seed: int = SEED) -> list[dict]:
    """The items a run asks: the §6 subsample (N <= 0: all), then the first `limit` by id (0: all),
    for a quick look (issue 14 item 4)."""
    chosen = subsample(items, sample_per_lang, seed)
    return chosen[:limit] if limit > 0 else chosen
