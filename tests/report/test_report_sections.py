"""The report's sections of issue 25 on constructed scored lines: intervals by the method each
cell calls for, breakdowns by kind, as_of year and article length, the training-cutoff split,
paired comparisons, repeats; every section declared once and drawn alike in md, JSON and HTML."""

from __future__ import annotations

import json
import re

import pytest

from chpit_assets.report import build_report, to_html, to_json, to_markdown
from chpit_assets.report.breakdowns import LENGTH_BINS, length_bin
from chpit_assets.report.layout import SECTIONS
from chpit_assets.report.stats import CLUSTER_BOOTSTRAP, PAIRED, WILSON, wilson

CORRECT, WRONG = "grounded_correct", "grounded_wrong_version"


def line(i: int, kind: str, label: str, system: str, *, change: int | None = None, **extra) -> dict:
    """Item i of change `change` (default: its own), German, as_of/change_date in 2023 or 2025."""
    change = i if change is None else change
    year = 2023 if change % 2 == 0 else 2025
    return {
        "id": f"{i:04d}",
        "lang": "de",
        "act_id": 1,
        "e_id": f"art_{change}",
        "change_date": f"{year}-07-01",
        "as_of": f"{year}-06-30" if kind == "before" else f"{year}-07-01",
        "kind": kind,
        "gold_is_current": kind == "after",
        "system": system,
        "sr_number": "1",
        "article_number": str(change),
        "recite_label": None,
        "answer": "…",
        "error": None,
        "verdict": {
            "label": label,
            "gold_coverage": 0.0,
            "distractor_coverage": 0.0,
            "distractor_all_coverage": 0.0,
            "shared_coverage": 0.0,
        },
        "tool_calls": [],
        "gold_chars": 300,
        "gold_paragraphs": 2,
        **extra,
    }


def paired_changes(system: str, right: set[int], n_changes: int = 20, **extra) -> list[dict]:
    """Both halves of each change, both right when the change is in `right`, else both wrong."""
    out = []
    for c in range(n_changes):
        for h, kind in enumerate(("before", "after")):
            out.append(line(2 * c + h, kind, CORRECT if c in right else WRONG, system, change=c, **extra))
    return out


def recite_lines(n_changes: int = 20) -> list[dict]:
    # recite: right on every `after` half (today's wording), wrong on every `before`: before = date-sensitive.
    return [
        line(2 * c + h, kind, WRONG if kind == "before" else CORRECT, "recite", change=c)
        for c in range(n_changes)
        for h, kind in enumerate(("before", "after"))
    ]


def test_pooled_rows_use_the_cluster_bootstrap_and_single_kind_rows_wilson():
    report = build_report({"m/pit": paired_changes("m/pit", set(range(10)))})
    rows = {r["kind"]: r for r in report["rows"]}
    assert rows["before"]["ci"]["correct"]["method"] == WILSON  # one item per change
    low, high = wilson(10, 20)
    assert (rows["before"]["ci"]["correct"]["low"], rows["before"]["ci"]["correct"]["high"]) == (
        round(100 * low, 4),
        round(100 * high, 4),
    )
    pooled = rows["all"]["ci"]["correct"]
    w_items = wilson(20, 40)
    assert pooled["method"] == CLUSTER_BOOTSTRAP
    assert pooled["low"] < 100 * w_items[0] and pooled["high"] > 100 * w_items[1]  # halves agree: wider
    assert report["headline"][0]["ci"]["correct"] == pooled
    assert set(report["methods"]) == {WILSON, CLUSTER_BOOTSTRAP, PAIRED}


def test_breakdowns_by_kind_year_and_length_with_n_and_intervals():
    lines = paired_changes("m/pit", {0, 1, 2})
    lines[0] = {**lines[0], "gold_chars": 1500, "gold_paragraphs": 1}
    lines[1] = {**lines[1], "gold_chars": 2500, "gold_paragraphs": 4}
    report = build_report({"m/pit": lines, "recite": recite_lines()})
    rows = {(r["by"], r["bin"], r["system"]): r for r in report["breakdowns"]}
    assert rows[("kind", "before", "m/pit")]["n"] == 20 and rows[("kind", "before", "m/pit")]["correct_pct"] == 15.0
    assert rows[("kind", "before", "m/pit")]["n_date_sensitive"] == 20  # recite wrong on every before half
    assert rows[("as_of year", "2023", "m/pit")]["n"] == 20 and rows[("as_of year", "2025", "m/pit")]["n"] == 20
    length = [r["bin"] for r in report["breakdowns"] if r["by"] == "article length" and r["system"] == "m/pit"]
    assert length == [LENGTH_BINS[0], LENGTH_BINS[2], LENGTH_BINS[3]]  # in bin order, empty bins left out
    assert rows[("article length", LENGTH_BINS[3], "m/pit")]["n"] == 1
    ci = rows[("kind", "before", "m/pit")]["ci"]["correct"]
    assert (ci["low"], ci["high"]) == tuple(round(100 * x, 4) for x in wilson(3, 20))


@pytest.mark.parametrize(
    ("chars", "paragraphs", "expected"),
    [(499, 1, 0), (500, 3, 1), (1999, 1, 3), (2000, 5, 2), (999, 1, 1), (5000, 1, 3)],
)
def test_length_bins(chars, paragraphs, expected):
    assert length_bin({"gold_chars": chars, "gold_paragraphs": paragraphs}) == LENGTH_BINS[expected]


def test_the_cutoff_splits_the_date_sensitive_items_by_as_of_and_by_change_date():
    # m/pit knows the 2023 changes (even-numbered), not the 2025 ones; cutoff 2024-06-30.
    lines = paired_changes("m/pit", set(range(0, 20, 2)), cutoff="2024-06-30")
    report = build_report({"m/pit": lines, "recite": recite_lines(), "oracle": paired_changes("oracle", set())})
    rows = {(r["split"], r["side"]): r for r in report["cutoff"]}
    assert {r["system"] for r in report["cutoff"]} == {"m/pit"}  # only model systems with a cutoff
    before, after = rows[("as_of", "on or before")], rows[("as_of", "after")]
    assert (before["n"], before["correct_pct"], after["n"], after["correct_pct"]) == (10, 100.0, 10, 0.0)
    assert after["wrong_version_pct"] == 100.0 and after["ci"]["correct"]["high"] == round(100 * wilson(0, 10)[1], 4)
    assert rows[("change_date", "after")]["n"] == 10
    assert "<h3>Date-sensitive items: correct % before and after the cutoff</h3>" in to_html(report)


def test_comparisons_against_recite_and_between_the_modes_of_one_model():
    report = build_report(
        {
            "recite": recite_lines(),
            "m/pit": paired_changes("m/pit", set(range(20))),
            "m/closed": paired_changes("m/closed", set()),
            "oracle": paired_changes("oracle", set(range(20))),
        }
    )
    pairs = {(r["a"], r["b"], r["items"]): r for r in report["comparisons"]}
    assert set(pairs) == {
        ("m/closed", "recite", "date-sensitive"),
        ("m/pit", "recite", "date-sensitive"),
        ("m/closed", "m/pit", "all"),
    }
    pit = pairs[("m/pit", "recite", "date-sensitive")]
    assert (pit["n"], pit["a_only"], pit["b_only"], pit["diff_pct"]) == (20, 20, 0, 100.0)
    assert pit["p_value"] == pytest.approx(2 * 0.5**20) and pit["verdict"].startswith("m/pit is better")
    closed = pairs[("m/closed", "recite", "date-sensitive")]
    assert (closed["a_only"], closed["b_only"], closed["p_value"]) == (0, 0, 1.0)
    assert closed["verdict"].startswith("too few items to tell")


def test_repeats_mean_sd_and_agreement():
    runs = []
    for r, right in enumerate(({0, 1, 2, 3}, {0, 1}, {0, 1, 2, 3})):
        runs += [{**x, "repeat": r} for x in paired_changes("m/pit", right, n_changes=4)]
    report = build_report({"m/pit": [x for x in runs if x["repeat"] == 0]}, {"m/pit": runs})
    [row] = report["repeats"]
    assert (row["repeats"], row["n"], row["correct_pct_by_repeat"]) == (3, 8, [100.0, 50.0, 100.0])
    assert (row["correct_mean"], row["correct_sd"]) == (83.33, 28.87)
    assert (row["agreement"], row["agreement_pct"]) == (4, 50.0)
    assert "| m/pit | 3 | 8 | 83.3 ± 28.9 |" in to_markdown(report)


def test_every_section_is_drawn_from_one_declaration_in_md_json_and_html():
    report = build_report(
        {
            "recite": recite_lines(),
            "m/pit": paired_changes("m/pit", {1, 2}, cutoff="2024-06-30"),
            "m/agentic": paired_changes("m/agentic", {1}),
        },
        {"m/pit": [{**x, "repeat": r} for r in range(2) for x in paired_changes("m/pit", {1, 2})]},
    )
    md, html = to_markdown(report), to_html(report)
    md_titles = re.findall(r"^## (.+)$", md, re.M)
    assert md_titles == re.findall(r"<h2>(.+?)</h2>", html.replace("&amp;", "&"))
    assert md_titles == [t.title for t in SECTIONS if t.rows_of(report) or t.empty]
    declared = {s["key"]: s["columns"] for s in json.loads(to_json(report))["sections"]}
    for table in SECTIONS:
        assert declared[table.key] == table.headers
        if table.rows_of(report):
            assert "| " + " | ".join(table.headers) + " |" in md
            assert "".join(f"<th>{h}</th>" for h in table.headers).replace("&", "&amp;") in html
