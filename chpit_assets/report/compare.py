"""Paired comparisons (R4, issue 25 item 2): two systems on the same items, the difference in correct
share with a paired interval and an exact McNemar p-value (stats.paired), for the report's section
and for `python -m chpit_assets compare A B`.

Pairs are matched on (lang, id); an item only one system answered is left out and the count of
shared items is printed, so a partial run cannot pass for a comparison on everything. An errored
line counts as not correct, as in every share of the report."""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Mapping
from pathlib import Path

from chpit_assets.runs.systems import parse_system_key
from chpit_scorer import GROUNDED_CORRECT

from .stats import cluster_of, paired

ALL, DATE_SENSITIVE = "all", "date-sensitive"


def compare(lists: Mapping[str, list[dict]], a: str, b: str, easy: Mapping[str, bool], items: str = ALL) -> dict:
    """{a, b, items, n, a_correct, b_correct, a_only, b_only, diff_pct, low, high, p_value, verdict}."""
    b_lines = {(line["lang"], line["id"]): line for line in lists[b]}
    pairs = [
        (line, b_lines[(line["lang"], line["id"])])
        for line in sorted(lists[a], key=lambda l: (l["lang"], l["id"]))
        if (line["lang"], line["id"]) in b_lines and (items == ALL or easy.get(line["id"]) is False)
    ]
    result = paired(
        [x["verdict"]["label"] == GROUNDED_CORRECT for x, _ in pairs],
        [y["verdict"]["label"] == GROUNDED_CORRECT for _, y in pairs],
        [cluster_of(x) for x, _ in pairs],
        a,
        b,
    )
    return {"a": a, "b": b, "items": items, **result.as_dict()}


def comparison_rows(lists: Mapping[str, list[dict]], systems: list[str], easy: Mapping[str, bool]) -> list[dict]:
    """Every system but the oracle against recite on the date-sensitive items (when recite ran),
    then each pair of modes of one model on all the items they share."""
    rows = []
    if "recite" in lists:
        rows += [compare(lists, s, "recite", easy, DATE_SENSITIVE) for s in systems if s not in ("oracle", "recite")]
    models: dict[str, list[str]] = {}
    for system in systems:
        slug = parse_system_key(system).slug
        if slug is not None:
            models.setdefault(slug, []).append(system)
    for keys in models.values():
        rows += [compare(lists, a, b, easy) for a, b in itertools.combinations(keys, 2)]
    return rows


def describe(row: dict) -> str:
    """The comparison in a few plain lines."""
    n = row["n"]
    if n == 0:
        return f"{row['a']} vs {row['b']} ({row['items']} items): {row['verdict']}"
    of = lambda k: f"{k}/{n} ({100.0 * k / n:.1f}%)"  # noqa: E731
    return "\n".join(
        [
            f"{row['a']} vs {row['b']} on {n} shared {'' if row['items'] == ALL else row['items'] + ' '}items",
            f"  correct: {row['a']} {of(row['a_correct'])}, {row['b']} {of(row['b_correct'])}",
            f"  difference {row['a']} - {row['b']}: {row['diff_pct']:+.1f} points, 95% paired interval "
            f"[{row['low']:+.1f}, {row['high']:+.1f}] (cluster bootstrap by change, at least Newcombe's square-and-add)",
            f"  discordant: {row['a_only']} only {row['a']} right, {row['b_only']} only {row['b']} right; "
            f"exact McNemar p = {row['p_value']:.4g}",
            f"  {row['verdict']}",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    from .collect import collect_scored
    from .tables import recite_easy_by_id

    parser = argparse.ArgumentParser(
        prog="python -m chpit_assets compare",
        description="Two systems on the same items: difference in correct share, paired 95%% interval, exact McNemar.",
    )
    parser.add_argument("a", help="a system key, e.g. recite or smollm2-135m/pit")
    parser.add_argument("b", help="the other system key")
    parser.add_argument(
        "--items",
        choices=(ALL, DATE_SENSITIVE),
        default=ALL,
        help="every shared item, or only the date-sensitive ones (recite not grounded_correct)",
    )
    parser.add_argument(
        "--data-dir",
        default="",
        help="the folder holding results/ and build/ (default: the one `run` writes, $CHPIT_DATA_DIR or the "
        "project's data/)",
    )
    args = parser.parse_args(argv)
    if args.data_dir:
        root = Path(args.data_dir)
    else:
        from chpit_assets.layout import Layout

        root = Layout.resolve().root
    lists = collect_scored(root / "results", root / "build")
    for key in (args.a, args.b):
        if key not in lists:
            known = ", ".join(sorted(lists)) or f"none: no scored results under {root / 'results'}"
            print(f"{parser.prog}: error: no scored results for system {key!r}; known: {known}", file=sys.stderr)
            return 2
    easy = recite_easy_by_id(lists)
    if args.items == DATE_SENSITIVE and not easy:
        print(
            f"{parser.prog}: error: no recite run or stamped recite labels: date-sensitive is unknown", file=sys.stderr
        )
        return 2
    print(describe(compare(lists, args.a, args.b, easy, args.items)))
    return 0
