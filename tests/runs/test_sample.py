"""The agentic subsample (PROTOCOL §6): `:llm`-seeded, kind-balanced, a function of (items, N, seed) only."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from chpit_assets.runs.sample import sample_lang, select_items, subsample


def _items(lang: str, before: int, after: int) -> list[dict]:
    return [{"id": f"{lang}-b{i:03d}", "lang": lang, "kind": "before"} for i in range(before)] + [
        {"id": f"{lang}-a{i:03d}", "lang": lang, "kind": "after"} for i in range(after)
    ]


def _ids(items):
    return [i["id"] for i in items]


pools = st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.integers(0, 30))


@settings(max_examples=60, deadline=None)
@given(pools, st.integers(-2, 70), st.randoms(use_true_random=False))
def test_the_sample_ignores_input_order_and_has_the_published_size(sizes, n, rnd):
    de_b, de_a, fr_b, fr_a = sizes
    items = _items("de", de_b, de_a) + _items("fr", fr_b, fr_a)
    shuffled = list(items)
    rnd.shuffle(shuffled)
    chosen = subsample(items, n)
    assert _ids(subsample(shuffled, n)) == _ids(chosen)
    assert _ids(chosen) == sorted(_ids(chosen)) and len(set(_ids(chosen))) == len(chosen)
    for lang, b, a in (("de", de_b, de_a), ("fr", fr_b, fr_a)):
        mine = [i for i in chosen if i["lang"] == lang]
        target = b + a if n <= 0 else min(n, b + a)
        assert len(mine) == target
        if n > 0:
            # Quotas: before gets the odd one; a short bucket is topped up from the other.
            want_before = min(b, max(target - a, (target + 1) // 2))
            assert sum(i["kind"] == "before" for i in mine) == want_before


def test_the_quota_draws_from_each_bucket_after_its_one_shuffle():
    """`after` is shuffled before `before` (alphabetical), each sorted by id first, seeded `{seed}:{lang}:llm`."""
    items = _items("it", 9, 9)
    rng = random.Random("7:it:llm")
    after = sorted(_ids(i for i in items if i["kind"] == "after"))
    before = sorted(_ids(i for i in items if i["kind"] == "before"))
    rng.shuffle(after)
    rng.shuffle(before)
    assert _ids(sample_lang(items, "it", 5, seed=7)) == sorted(before[:3] + after[:2])
    assert _ids(sample_lang(items, "it", 5, seed=8)) != _ids(sample_lang(items, "it", 5, seed=7))


def test_languages_are_sampled_independently():
    de, fr = _items("de", 10, 10), _items("fr", 10, 10)
    assert [i for i in subsample(de + fr, 4) if i["lang"] == "de"] == subsample(de, 4)


def test_limit_takes_the_first_items_by_id_of_the_sample():
    items = _items("de", 10, 10)
    assert select_items(items, sample_per_lang=6, limit=2) == subsample(items, 6)[:2]
    assert select_items(items) == sorted(items, key=lambda i: i["id"])
