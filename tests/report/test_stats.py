"""Intervals and paired tests (issue 25) against published textbook values and independent
computations: Wilson (Newcombe 1998, Table I), exact McNemar (Fagerland et al. 2013; Agresti's
presidential-approval table), the cluster bootstrap (deterministic, wider when halves agree)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chpit_assets.report.stats import (
    CLUSTER_BOOTSTRAP,
    WILSON,
    cluster_bootstrap,
    cluster_of,
    mcnemar_exact,
    min_discordant,
    newcombe_paired,
    paired,
    share,
    wilson,
)

# Newcombe RG (1998), "Two-sided confidence intervals for the single proportion: comparison of
# seven methods", Stat Med 17:857-872, Table I, method 3 (Wilson score, no continuity correction).
NEWCOMBE_WILSON = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
    (29, 29, 0.8830, 1.0000),
]


@pytest.mark.parametrize(("k", "n", "low", "high"), NEWCOMBE_WILSON)
def test_wilson_equals_newcombes_table(k, n, low, high):
    got = wilson(k, n)
    assert (round(got[0], 4), round(got[1], 4)) == (low, high)


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
@settings(max_examples=60, deadline=None)
def test_wilson_equals_the_closed_form_score_interval(kn):
    """The score interval solved in closed form (Wilson 1927), z from the normal quantile."""
    k, n = kn
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = wilson(k, n)
    assert low == pytest.approx(max(0.0, centre - half), abs=1e-9)
    assert high == pytest.approx(min(1.0, centre + half), abs=1e-9)


def _exact_two_sided(b: int, c: int) -> float:
    """Conditional exact McNemar from the binomial(b + c, 1/2) tail, summed by hand."""
    d, low = b + c, min(b, c)
    return min(1.0, 2 * sum(math.comb(d, i) for i in range(low + 1)) / 2**d)


def test_mcnemar_exact_known_answers():
    # Fagerland, Lydersen, Laake (2013) BMC Med Res Methodol 13:91, the AHR example: 1 and 7
    # discordant pairs, exact conditional p = 0.070.
    assert round(mcnemar_exact(1, 7), 3) == 0.070
    assert mcnemar_exact(7, 1) == mcnemar_exact(1, 7)
    # Agresti, Categorical Data Analysis, presidential approval: 150 and 86 discordant.
    assert mcnemar_exact(150, 86) == pytest.approx(_exact_two_sided(150, 86), rel=1e-9)
    assert mcnemar_exact(150, 86) < 1e-4
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(3, 3) == 1.0


def test_newcombe_paired_interval_equals_the_textbook():
    # Fagerland, Lydersen, Laake, Statistical Analysis of Contingency Tables (2017), ch. 8, Cavo et al.
    # (2012): 59 both, 6 first only, 16 second only, 80 neither; square-and-add -0.0621 (-0.1186 to -0.0046).
    low, high = newcombe_paired(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    assert newcombe_paired(16, 59, 6, 80) != newcombe_paired(59, 6, 16, 80)  # the cells are not interchangeable
    flipped = newcombe_paired(59, 16, 6, 80)
    assert flipped == pytest.approx((-high, -low))  # B - A is A - B mirrored


def test_the_paired_interval_is_never_narrower_than_newcombes():
    # 4 items, all only A right: the bootstrap cannot vary, Newcombe's interval stands.
    result = paired([True] * 4, [False] * 4, [0, 0, 1, 1], "A", "B")
    low, high = newcombe_paired(0, 4, 0, 0)
    assert (result.low, result.high) == (round(100 * low, 4), round(100 * high, 4)) and result.low < 100.0


def test_too_few_discordant_pairs_is_said_plainly():
    # 2 * 0.5**5 = 0.0625 >= 0.05 but 2 * 0.5**6 = 0.03125: six all-one-way pairs are the fewest that can tell.
    assert min_discordant() == 6
    five = paired([True] * 5 + [False] * 5, [False] * 10, list(range(10)), "A", "B")
    assert five.a_only == 5 and five.b_only == 0 and five.verdict.startswith("too few items to tell")
    six = paired([True] * 6 + [False] * 4, [False] * 10, list(range(10)), "A", "B")
    assert six.p_value == pytest.approx(0.03125) and six.verdict == "A is better (p = 0.0312)"


def test_paired_difference_counts_and_interval():
    # 40 items: both right 20, only A 12, only B 4, neither 4.
    a = [True] * 20 + [True] * 12 + [False] * 4 + [False] * 4
    b = [True] * 20 + [False] * 12 + [True] * 4 + [False] * 4
    result = paired(a, b, list(range(40)), "A", "B")
    assert (result.n, result.a_correct, result.b_correct, result.a_only, result.b_only) == (40, 32, 24, 12, 4)
    assert result.diff_pct == 20.0
    assert result.p_value == pytest.approx(_exact_two_sided(12, 4), rel=1e-12)
    assert result.low < 20.0 < result.high and result.low > -10 and result.high < 45
    assert result.verdict.startswith("no difference shown")  # p = 0.077
    assert paired(a, b, list(range(40)), "A", "B") == result  # seeded: the same every time


def test_cluster_bootstrap_is_deterministic_and_independent_of_line_order():
    rng = random.Random(1)
    hits = [rng.random() < 0.4 for _ in range(120)]
    clusters = [i // 2 for i in range(120)]
    first = cluster_bootstrap(hits, clusters)
    order = list(range(120))
    rng.shuffle(order)
    assert cluster_bootstrap([hits[i] for i in order], [clusters[i] for i in order]) == first
    assert first == cluster_bootstrap(hits, clusters)


def test_halves_that_agree_widen_the_interval_beyond_wilson():
    """20 changes, both halves of each right or both wrong: 40 items but 20 independent draws."""
    hits = [i // 2 < 10 for i in range(40)]
    clusters = [i // 2 for i in range(40)]
    low, high = cluster_bootstrap(hits, clusters)
    w_items, w_changes = wilson(20, 40), wilson(10, 20)
    assert low < w_items[0] - 0.05 and high > w_items[1] + 0.05
    assert abs(low - w_changes[0]) < 0.08 and abs(high - w_changes[1]) < 0.08
    s = share(hits, clusters)
    assert s["method"] == CLUSTER_BOOTSTRAP and (s["low"], s["high"]) == (round(100 * low, 4), round(100 * high, 4))


def test_independent_items_bootstrap_close_to_the_normal_interval():
    hits = [i < 120 for i in range(400)]
    low, high = cluster_bootstrap(hits, list(range(400)))
    half = 1.96 * math.sqrt(0.3 * 0.7 / 400)
    assert abs(low - (0.3 - half)) < 0.01 and abs(high - (0.3 + half)) < 0.01


def test_a_share_is_never_reported_narrower_than_wilson():
    # All right, pooled halves: the percentile bootstrap cannot move off 100 %; Wilson's lower limit stands.
    s = share([True] * 10, [i // 2 for i in range(10)])
    assert s["method"] == CLUSTER_BOOTSTRAP and s["high"] == 100.0
    assert s["low"] == round(100 * wilson(10, 10)[0], 4)
    distinct = share([True, False, True], [1, 2, 3])
    assert distinct["method"] == WILSON and distinct["pct"] == 66.67
    assert share([], [])["pct"] is None and share([], [])["low"] is None


def test_an_item_is_clustered_with_the_other_half_and_languages_of_its_change():
    before = {"id": "a", "lang": "de", "act_id": 7, "e_id": "art_5", "change_date": "2023-09-01"}
    after = {**before, "id": "b"}
    french = {**before, "id": "c", "lang": "fr"}
    other = {**before, "id": "d", "change_date": "2025-01-01"}
    assert cluster_of(before) == cluster_of(after) == cluster_of(french) != cluster_of(other)
    assert cluster_of({"id": "x", "lang": "de"}) != cluster_of({"id": "y", "lang": "de"})
