"""The report (R4) on constructed scored results: exact percentages, the card's columns, the
date-sensitive split, the tools report, deterministic standalone files."""

from __future__ import annotations

import json

from chpit_assets.report import (
    HEADLINE_COLUMNS,
    build_report,
    to_html,
    to_markdown,
    write_report,
)

# id: (lang, kind, gold_is_current, recite label)
ITEMS = {
    "d1": ("de", "before", False, "grounded_wrong_version"),
    "d2": ("de", "after", True, "grounded_correct"),
    "d3": ("de", "before", False, "ungrounded"),
    "d4": ("de", "after", False, "grounded_correct"),
    "f1": ("fr", "after", True, "grounded_correct"),
    "f2": ("fr", "before", False, "grounded_wrong_version"),
}
PIT = {
    "d1": "grounded_correct",
    "d2": "grounded_correct",
    "d3": "grounded_wrong_version",
    "d4": None,
    "f1": "grounded_correct",
    "f2": "grounded_correct",
}  # None: the call failed (ungrounded + error)


def line(item_id: str, system: str, label: str | None, *, gold_cov: float = 0.0, tool_calls=(), with_recite=False):
    lang, kind, current, recite = ITEMS[item_id]
    return {
        "id": item_id,
        "lang": lang,
        "kind": kind,
        "gold_is_current": current,
        "system": system,
        "as_of": "2022-06-30",
        "sr_number": "170.512",
        "article_number": "5",
        "recite_label": recite if with_recite else None,
        "answer": None if label is None else "…",
        "error": "ModelCallError: HTTP 500" if label is None else None,
        "verdict": {
            "label": label or "ungrounded",
            "gold_coverage": gold_cov,
            "distractor_coverage": 0.0,
            "distractor_all_coverage": 0.0,
            "shared_coverage": 0.5,
        },
        "tool_calls": list(tool_calls),
    }


def scored(with_recite_run: bool = True) -> dict:
    out = {
        "m/pit": [
            line(
                i,
                "m/pit",
                PIT[i],
                gold_cov=1.0 if PIT[i] == "grounded_correct" else 0.0,
                with_recite=not with_recite_run,
            )
            for i in ITEMS
        ]
    }
    if with_recite_run:
        out["recite"] = [line(i, "recite", ITEMS[i][3]) for i in ITEMS]
    right = {"sr_number": "170.512", "article_number": "5", "lang": "de", "as_of": "2022-06-30"}
    out["m/agentic"] = [
        line(
            "d1",
            "m/agentic",
            "grounded_correct",
            tool_calls=[{"round": 1, "name": "ch_get_act_article", "arguments": right}],
        ),
        line("d2", "m/agentic", "ungrounded"),
    ]
    return out


def test_headline_numbers_are_exact():
    report = build_report(scored())
    by_system = {h["system"]: h for h in report["headline"]}
    assert report["systems"] == ["recite", "m/pit", "m/agentic"]  # the card's order
    pit = by_system["m/pit"]
    assert (pit["n"], pit["correct_pct"], pit["wrong_version_pct"], pit["ungrounded_pct"], pit["errors"]) == (
        6,
        66.67,
        16.67,
        16.67,
        1,
    )
    # date-sensitive = items where recite is not grounded_correct: d1, d3, f2; pit gets d1 and f2
    assert pit["date_sensitive_correct_pct"] == 66.67
    assert pit["date_sensitive_correct_pct_by_lang"] == {"de": 50.0, "fr": 100.0, "it": None}
    assert pit["recite_easy_correct_pct"] == 66.67  # d2, f1 of d2, d4, f1
    recite = by_system["recite"]
    assert (recite["correct_pct"], recite["date_sensitive_correct_pct"], recite["recite_easy_correct_pct"]) == (
        50.0,
        0.0,
        100.0,
    )
    assert report["date_sensitive"]["de"] == {
        "lang": "de",
        "items": 4,
        "known": 4,
        "date_sensitive": 2,
        "date_sensitive_pct": 50.0,
        "ci": {"date_sensitive": {"low": 15.0039, "high": 84.9961, "method": "wilson"}},  # Wilson 2/4
    }


def test_rows_per_language_system_kind_plus_all_with_the_gold_is_current_split():
    rows = {(r["lang"], r["system"], r["kind"]): r for r in build_report(scored())["rows"]}
    assert {k for k in rows if k[1] == "m/pit"} == {
        (lang, "m/pit", kind) for lang in ("de", "fr") for kind in ("before", "after", "all")
    }
    de_all = rows[("de", "m/pit", "all")]
    assert (de_all["n"], de_all["correct_pct"], de_all["errors"]) == (4, 50.0, 1)
    assert (de_all["correct_gold_current_pct"], de_all["correct_gold_superseded_pct"]) == (100.0, 33.33)
    assert de_all["mean_gold_coverage"] == 0.5 and de_all["mean_shared_coverage"] == 0.5
    after = rows[("de", "m/pit", "after")]
    assert (after["n"], after["correct_pct"], after["n_gold_current"], after["n_gold_superseded"]) == (2, 50.0, 1, 1)


def test_stamped_recite_labels_stand_in_when_there_is_no_recite_run():
    with_run, without = build_report(scored(True)), build_report(scored(False))
    pick = lambda r: next(h for h in r["headline"] if h["system"] == "m/pit")  # noqa: E731
    assert pick(with_run)["date_sensitive_correct_pct_by_lang"] == pick(without)["date_sensitive_correct_pct_by_lang"]
    assert pick(without)["recite_easy_correct_pct"] == 66.67


def test_tools_report_for_agentic():
    tools = {(t["system"], t["lang"]): t for t in build_report(scored())["tools"]}
    assert set(tools) == {("m/agentic", "de"), ("m/agentic", "all")}
    t = tools[("m/agentic", "all")]
    assert (t["right_date_pct"], t["right_act_article_pct"], t["no_tool_pct"], t["tool_calls"]) == (50.0, 50.0, 50.0, 1)


def test_markdown_has_exactly_the_cards_columns_and_rows():
    md = to_markdown(build_report(scored()))
    assert "| " + " | ".join(HEADLINE_COLUMNS) + " |" in md
    assert HEADLINE_COLUMNS == (
        "system",
        "n",
        "correct %",
        "wrong version %",
        "ungrounded %",
        "date-sensitive: correct %",
        "de / fr / it",
        "recite-easy: correct %",
        "errors",
    )
    # Every share with its Wilson interval (each item is its own change here): 4/6 -> 30.0-90.3,
    # 1/6 -> 3.0-56.4, 2/3 -> 20.8-93.9, 1/2 -> 9.5-90.5, 1/1 -> 20.7-100.
    assert (
        "| m/pit | 6 | 66.7 [30.0–90.3] | 16.7 [3.0–56.4] | 16.7 [3.0–56.4] | 66.7 [20.8–93.9] "
        "| 50.0 [9.5–90.5] / 100.0 [20.7–100.0] / – | 66.7 [20.8–93.9] | 1 |" in md
    )
    assert (
        "| recite | 6 | 50.0 [18.8–81.2] | 33.3 [9.7–70.0] | 16.7 [3.0–56.4] | 0.0 [0.0–56.1] "
        "| 0.0 [0.0–65.8] / 0.0 [0.0–79.3] / – | 100.0 [43.9–100.0] | 0 |" in md
    )


def test_files_are_deterministic_standalone_and_atomic(tmp_path):
    report = build_report(scored())
    first = {k: p.read_bytes() for k, p in write_report(report, tmp_path / "a").items()}
    second = {k: p.read_bytes() for k, p in write_report(build_report(scored()), tmp_path / "b").items()}
    assert first == second and set(first) == {"md", "json", "html"}
    html = first["html"].decode()
    assert html.count("<svg") == 2 and "<rect" in html
    for external in ("<script", "src=", "href=", "@import", "url("):
        assert external not in html
    assert json.loads(first["json"])["headline"][1]["system"] == "m/pit"
    assert not [p for p in (tmp_path / "a").iterdir() if p.name.startswith(".")]  # no temp files left
    assert to_html(report) == html


def test_the_tools_report_reads_arguments_the_way_the_tool_does():
    data = scored()
    # "SR 170.512" and "Art. 5" name the same act and article as "170.512" and "5" for the tool.
    spelled = {"sr_number": "SR 170.512", "article": "Art. 5", "lang": "de", "as_of": "2022-06-30"}
    wrong = {"sr_number": "170.512", "article_number": "6", "lang": "de", "as_of": "2022-06-30"}
    data["m/agentic"][1]["tool_calls"] = [{"round": 1, "name": "ch_get_act_article", "arguments": spelled}]
    data["m/agentic"][0]["tool_calls"] = [{"round": 1, "name": "ch_get_act_article", "arguments": wrong}]
    [t] = [t for t in build_report(data)["tools"] if t["lang"] == "all"]
    assert t["right_act_article"] == 1


def test_report_md_shows_the_published_tools_table_beside_ours():
    from chpit_assets.report.published import TOOLS_HEADER

    report = build_report(scored())
    md = to_markdown(report)
    ours, published = md.index("## Tools (agentic)"), md.index("## Tools, published shape (PROTOCOL §5)")
    assert ours < published and "| " + " | ".join(TOOLS_HEADER) + " |" in md[published:]
    assert list(report["tools_published"]) == ["m/agentic"] and report["tools_published"]["m/agentic"]["n"] == 2


def test_verified_systems_get_an_abstention_rate_and_the_wrong_version_share_of_what_they_answered():
    # d1 answered correctly, d3 answered with the wrong edition, d2/d4 and f1 abstained, f2 answered correctly.
    given = {"d1": "grounded_correct", "d3": "grounded_wrong_version", "f2": "grounded_correct"}
    lines = []
    for item_id in ITEMS:
        abstained = item_id not in given
        entry = line(item_id, "m/pit+verify", "ungrounded" if abstained else given[item_id])
        lines.append({**entry, "abstained": abstained, "answer": "" if abstained else "…"})
    report = build_report({"m/pit+verify": lines, "m/pit": [line(i, "m/pit", "grounded_correct") for i in ITEMS]})
    rows = {(a["system"], a["lang"]): a for a in report["abstention"]}
    assert set(rows) == {("m/pit+verify", "de"), ("m/pit+verify", "fr"), ("m/pit+verify", "all")}  # unverified: none
    de, fr, every = rows[("m/pit+verify", "de")], rows[("m/pit+verify", "fr")], rows[("m/pit+verify", "all")]
    assert (de["n"], de["abstained"], de["answered"], de["abstained_pct"]) == (4, 2, 2, 50.0)
    assert (de["wrong_version_answered_pct"], de["correct_answered_pct"]) == (50.0, 50.0)
    assert (fr["abstained"], fr["wrong_version_answered_pct"], fr["correct_answered_pct"]) == (1, 0.0, 100.0)
    assert (every["n"], every["abstained"], every["wrong_version_answered_pct"]) == (6, 3, round(100 / 3, 2))
    assert "## Cite or abstain (verified systems)" in to_markdown(report)
