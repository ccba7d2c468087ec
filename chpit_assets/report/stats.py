"""Uncertainty for the report (R4, issue 25): Wilson intervals, a cluster bootstrap by change, and the
paired comparison of two systems on the same items (difference, paired interval, exact McNemar).

Every number comes from scipy.stats; this module only decides what is counted and how items
are grouped. CH-PiT's two halves (before/after) of one change, and the same change in another
language, are not independent draws: a system that knows an amendment tends to get both halves
right. So a share over items from distinct changes gets the Wilson interval, and a share where
some change contributes two or more items (rows pooled over kinds or languages) gets a cluster
bootstrap that resamples whole changes. The bootstrap is seeded (deterministic) and, because a
percentile bootstrap cannot move off 0 % or 100 % (nor far from them on few clusters), it is
never reported narrower than the Wilson interval of the same counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

# scipy.stats is imported inside the functions that use it: it takes about 3 s to import, and this
# module is imported by every run process of the code location (through the report's assets), most
# of which compute no interval (issue 27: a run's fixed cost).

CONFIDENCE = 0.95
ALPHA = 1.0 - CONFIDENCE
BOOTSTRAP_SEED = 20260825  # the build's published seed (PROTOCOL §1): one documented seed for the report
BOOTSTRAP_RESAMPLES = 2000
WILSON = "wilson"
CLUSTER_BOOTSTRAP = "cluster bootstrap"
PAIRED = "paired"
METHODS = {
    WILSON: f"{CONFIDENCE:.0%} Wilson score interval (scipy.stats.binomtest(...).proportion_ci(method='wilson'))",
    CLUSTER_BOOTSTRAP: (
        f"{CONFIDENCE:.0%} cluster bootstrap by change (the before/after halves of one change, in every language, "
        f"resampled together): scipy.stats.bootstrap, percentile, {BOOTSTRAP_RESAMPLES} resamples, seed "
        f"{BOOTSTRAP_SEED}; never narrower than the Wilson interval of the same counts"
    ),
    PAIRED: (
        f"{CONFIDENCE:.0%} interval of the paired difference A - B: the cluster bootstrap by change of the "
        "difference, never narrower than Newcombe's square-and-add interval (1998, method 10, on scipy's Wilson "
        "limits); p: exact McNemar, scipy.stats.binomtest on the discordant items"
    ),
}


def cluster_of(line: dict) -> Hashable:
    """The change an item was made from: (act_id, e_id, change_date), as the builder keys changes
    (bench.items.change_key); an item without those fields is its own cluster."""
    if line.get("change_date") is None or line.get("e_id") is None or line.get("act_id") is None:
        return ("item", line["lang"], line["id"])
    return (int(line["act_id"]), line["e_id"], str(line["change_date"]))


def pct(count: int, total: int) -> float | None:
    """A share in %, 2 decimals; None on an empty denominator (never 0: "no data" is not "always wrong")."""
    return None if total == 0 else round(100.0 * count / total, 2)


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials, as fractions."""
    from scipy import stats

    ci = stats.binomtest(k, n).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    return float(ci.low), float(ci.high)


def _per_cluster(clusters: Sequence[Hashable], *columns: Sequence[float]) -> list[np.ndarray]:
    """Each column summed per cluster, clusters in sorted order (so the draw does not depend on line order)."""
    index = {key: i for i, key in enumerate(sorted(set(clusters), key=repr))}
    out = []
    for column in columns:
        sums = np.zeros(len(index))
        np.add.at(sums, [index[c] for c in clusters], np.asarray(column, dtype=float))
        out.append(sums)
    return out


def _bootstrap(data: tuple[np.ndarray, ...], statistic) -> tuple[np.ndarray, np.ndarray]:
    from scipy import stats

    result = stats.bootstrap(
        data,
        statistic,
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=BOOTSTRAP_RESAMPLES,
        confidence_level=CONFIDENCE,
        rng=np.random.default_rng(BOOTSTRAP_SEED),
    )
    return np.atleast_1d(result.confidence_interval.low), np.atleast_1d(result.confidence_interval.high)


def _ratios(*sums: np.ndarray, axis: int = -1) -> np.ndarray:
    """Each hit count's share of the items (the last array), per resample."""
    items = sums[-1].sum(axis=axis)
    return np.stack([k.sum(axis=axis) / items for k in sums[:-1]])


def cluster_bootstraps(columns: Sequence[Sequence[bool]], clusters: Sequence[Hashable]) -> list[tuple[float, float]]:
    """Percentile intervals of several shares of the same items, resampling whole clusters (a ratio
    estimator: hits over items of the drawn clusters). One set of draws serves every share, and
    it is the draw a single share gets, so each interval is the one it would have alone."""
    *hits, items = _per_cluster(clusters, *columns, [1.0] * len(clusters))
    if len(items) < 2:  # one cluster: nothing to resample
        return [(float(k.sum() / items.sum()),) * 2 for k in hits]
    low, high = _bootstrap((*hits, items), _ratios)
    return [(float(lo), float(hi)) for lo, hi in zip(low, high, strict=True)]


def cluster_bootstrap(hits: Sequence[bool], clusters: Sequence[Hashable]) -> tuple[float, float]:
    return cluster_bootstraps([hits], clusters)[0]


def shares(columns: Mapping[str, Sequence[bool]], clusters: Sequence[Hashable]) -> dict[str, dict]:
    """{name: {k, n, pct, low, high, method}} for shares of the same items: each share in %
    (2 decimals), its 95% interval in % (4 decimals, so a .1f cell is rounded once) by the rule in
    the module doc; an empty denominator is pct None and no interval."""
    n = len(clusters)
    if n == 0:
        return {name: {"k": 0, "n": 0, "pct": None, "low": None, "high": None, "method": None} for name in columns}
    limits = {name: wilson(int(sum(hits)), n) for name, hits in columns.items()}
    method = WILSON
    if len(set(clusters)) < n:
        method = CLUSTER_BOOTSTRAP
        boot = cluster_bootstraps(list(columns.values()), clusters)
        for name, (b_low, b_high) in zip(list(limits), boot, strict=True):
            low, high = limits[name]
            limits[name] = min(low, b_low), max(high, b_high)
    return {
        name: {
            "k": int(sum(hits)),
            "n": n,
            "pct": pct(int(sum(hits)), n),
            "low": round(100.0 * limits[name][0], 4),
            "high": round(100.0 * limits[name][1], 4),
            "method": method,
        }
        for name, hits in columns.items()
    }


def share(hits: Sequence[bool], clusters: Sequence[Hashable]) -> dict:
    return shares({"share": hits}, clusters)["share"]


def line_intervals(lines: Sequence[dict], tests: Mapping[str, Callable[[dict], object]]) -> dict[str, dict]:
    """{name: {low, high, method}}: the intervals of the shares of scored `lines` where each test
    holds, the lines clustered by their change."""
    clusters = [cluster_of(line) for line in lines]
    out = shares({name: [bool(test(line)) for line in lines] for name, test in tests.items()}, clusters)
    return {name: {k: s[k] for k in ("low", "high", "method")} for name, s in out.items()}


def line_interval(lines: Sequence[dict], hit: Callable[[dict], object]) -> dict:
    return line_intervals(lines, {"share": hit})["share"]


@cache
def min_discordant() -> int:
    """The fewest discordant pairs for which an exact two-sided McNemar test can reach p < ALPHA at
    all (all pairs one way): below it, no result could tell the two systems apart."""
    from scipy import stats

    d = 1
    while stats.binomtest(0, d, 0.5).pvalue >= ALPHA:
        d += 1
    return d


def newcombe_paired(both: int, a_only: int, b_only: int, neither: int) -> tuple[float, float]:
    """Newcombe's square-and-add interval for the difference of two paired proportions (A - B;
    Newcombe 1998, Stat Med 17:2635, method 10): the two marginal shares' Wilson limits (scipy)
    combined with the pairs' correlation (phi, corrected towards zero by n/2 when positive)."""
    n = both + a_only + b_only + neither
    p1, p2 = (both + a_only) / n, (both + b_only) / n
    l1, u1 = wilson(both + a_only, n)
    l2, u2 = wilson(both + b_only, n)
    cross = both * neither - a_only * b_only
    corrected = cross - n / 2 if cross > n / 2 else min(cross, 0)
    margins = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither)
    phi = corrected / math.sqrt(margins) if margins else 0.0
    d = p1 - p2
    low = d - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = d + math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    return max(-1.0, low), min(1.0, high)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact two-sided McNemar p-value: the discordant pairs as a binomial(a_only + b_only, 1/2)."""
    from scipy import stats

    d = a_only + b_only
    return 1.0 if d == 0 else float(stats.binomtest(a_only, d, 0.5).pvalue)


@dataclass(frozen=True)
class Paired:
    """A against B on the same items: correct shares, their difference (A - B) and its paired
    interval in percentage points, the discordant counts and the exact McNemar p-value."""

    n: int
    a_correct: int
    b_correct: int
    a_only: int  # A correct, B not
    b_only: int
    diff_pct: float | None
    low: float | None
    high: float | None
    p_value: float | None
    verdict: str

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def paired(a: Sequence[bool], b: Sequence[bool], clusters: Sequence[Hashable], a_name: str, b_name: str) -> Paired:
    """Paired comparison over items where both systems have a line (a[i], b[i] the same item).

    The interval is a cluster bootstrap by change of the difference in correct share (the pairs
    of one change resampled together), never narrower than Newcombe's square-and-add interval,
    which holds its coverage on few items and at 0 or 100 % where a percentile bootstrap cannot."""
    n = len(a)
    a_only = sum(x and not y for x, y in zip(a, b))
    b_only = sum(y and not x for x, y in zip(a, b))
    if n == 0:
        return Paired(0, 0, 0, 0, 0, None, None, None, None, "no shared items: nothing to compare")
    diff = (sum(a) - sum(b)) / n
    ca, cb, m = _per_cluster(clusters, a, b, [1.0] * n)
    both = sum(x and y for x, y in zip(a, b))
    low, high = newcombe_paired(both, a_only, b_only, n - both - a_only - b_only)
    if len(m) >= 2 and a_only + b_only > 0:  # else nothing varies between resamples
        b_low, b_high = _bootstrap((ca, cb, m), lambda ca, cb, m, axis=-1: (ca.sum(axis) - cb.sum(axis)) / m.sum(axis))
        low, high = min(low, float(b_low[0])), max(high, float(b_high[0]))
    p = mcnemar_exact(a_only, b_only)
    d = a_only + b_only
    if d < min_discordant():
        verdict = (
            f"too few items to tell: {d} discordant of {n} (an exact test needs at least {min_discordant()} "
            f"to reach p < {ALPHA:g})"
        )
    elif p < ALPHA:
        verdict = f"{a_name if a_only > b_only else b_name} is better (p = {p:.3g})"
    else:
        verdict = f"no difference shown (p = {p:.3g})"
    return Paired(
        n=n,
        a_correct=int(sum(a)),
        b_correct=int(sum(b)),
        a_only=a_only,
        b_only=b_only,
        diff_pct=round(100.0 * diff, 2),
        low=round(100.0 * low, 4),
        high=round(100.0 * high, 4),
        p_value=p,
        verdict=verdict,
    )
