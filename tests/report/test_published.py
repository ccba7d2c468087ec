"""The published report files (PROTOCOL §5 tools report, §8 report-all.json, results-tables.md,
summary.md) on constructed scored lines: key and row order, rounding, dedup, errors, easy/hard."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from chpit_assets.report import report_all, results_tables, summary, tools_report, tools_table, write_published
from chpit_assets.report.published import RESULTS_HARD_HEADER, RESULTS_HEADER, SUMMARY_HEADER, TOOLS_HEADER

STATS_KEYS = [
    "n",
    "errors",
    "grounded_correct",
    "grounded_wrong_version",
    "ungrounded",
    "share_correct",
    "share_wrong",
    "share_ungrounded",
    "mean_gold_coverage",
    "mean_distractor_coverage",
    "n_gold_current",
    "correct_gold_current",
    "share_correct_gold_current",
    "n_gold_superseded",
    "correct_gold_superseded",
    "share_correct_gold_superseded",
    "score",
]
HARD_KEYS = [
    "n_recite_hard",
    "correct_recite_hard",
    "share_correct_recite_hard",
    "n_recite_easy",
    "correct_recite_easy",
    "share_correct_recite_easy",
]
C, W, U = "grounded_correct", "grounded_wrong_version", "ungrounded"


def line(
    item_id,
    system,
    label,
    *,
    lang="de",
    kind="before",
    current=False,
    gold_cov=0.0,
    dist_cov=0.0,
    error=None,
    tool_calls=None,
    **extra,
):
    """A scored-view line (runs.runner.scored_view keys), with only what a test varies as arguments."""
    return {
        "id": item_id,
        "lang": lang,
        "act_id": 1,
        "sr_number": "220",
        "article_number": "336a",
        "e_id": "art_336_a",
        "as_of": "2022-06-30",
        "kind": kind,
        "gold_is_current": current,
        "recite_label": None,
        "system": system,
        "answer": "" if error else "x",
        "error": error,
        "verdict": {
            "label": label,
            "gold_coverage": gold_cov,
            "distractor_coverage": dist_cov,
            "distractor_all_coverage": 0.0,
            "shared_coverage": 0.0,
        },
        "model": None,
        "provider": None,
        "cost": None,
        "tool_calls": tool_calls or [],
        "lookup": None,
        **extra,
    }


def test_shape_and_order_langs_systems_parts_and_stats_keys():
    scored = {
        "zz/pit": [line("f1", "zz/pit", C, lang="fr"), line("d1", "zz/pit", C)],
        "recite": [line("d1", "recite", W), line("f1", "recite", C, lang="fr")],
        "oracle": [line("d1", "oracle", C)],
        "aa/closed": [line("i1", "aa/closed", U, lang="it")],
    }
    report = report_all(scored)
    assert list(report) == ["de", "fr", "it", "tools"]
    # §7 names; the oracle by the same {name}/{mode} rule as recite; sorted by name
    assert list(report["de"]) == ["oracle/oracle", "recite/recite", "zz/pit"]
    assert list(report["it"]) == ["aa/closed"]
    assert list(report["de"]["zz/pit"]) == ["all", "after", "before"]
    assert list(report["de"]["zz/pit"]["all"]) == STATS_KEYS + HARD_KEYS
    assert report["tools"] == {}
    # without a recite run there is no hard-from split at all
    del scored["recite"]
    assert list(report_all(scored)["de"]["zz/pit"]["all"]) == STATS_KEYS


def test_numbers_on_a_partition_and_empty_partitions_are_zero():
    lines = [
        line("a", "m/pit", C, kind="after", current=True, gold_cov=1.0, dist_cov=0.25),
        line("b", "m/pit", W, kind="after", current=False, gold_cov=0.5, dist_cov=1.0),
        line("c", "m/pit", U, kind="after", current=False, error="ModelCallError: HTTP 500"),
    ]
    parts = report_all({"m/pit": lines})["de"]["m/pit"]
    a = parts["after"]
    assert (a["n"], a["errors"], a["grounded_correct"], a["grounded_wrong_version"], a["ungrounded"]) == (3, 1, 1, 1, 1)
    assert a["share_correct"] == a["score"] == 1 / 3 and a["share_wrong"] == 1 / 3  # raw floats, not rounded
    assert a["mean_gold_coverage"] == 0.5 and a["mean_distractor_coverage"] == 1.25 / 3
    assert (a["n_gold_current"], a["correct_gold_current"], a["share_correct_gold_current"]) == (1, 1, 1.0)
    assert (a["n_gold_superseded"], a["correct_gold_superseded"], a["share_correct_gold_superseded"]) == (2, 0, 0.0)
    assert parts["all"] == a
    before = parts["before"]
    assert before["n"] == 0
    assert all(before[k] == 0.0 and isinstance(before[k], float) for k in before if k.startswith(("share", "mean")))
    assert before["score"] == 0.0


def test_dedup_per_lang_system_id_keeps_the_last_error_free_line():
    err = "ModelCallError: timeout"
    lines = [
        line("a", "m/pit", C),
        line("a", "m/pit", U, error=err),  # later error does not displace
        line("b", "m/pit", U, error=err),
        line("b", "m/pit", W),  # later success replaces
        line("c", "m/pit", U, error=err),
        line("c", "m/pit", W, error=err),  # both errored: the last
        line("d", "m/pit", C),
        line("d", "m/pit", W),  # both fine: the last
    ]
    s = report_all({"m/pit": lines})["de"]["m/pit"]["all"]
    assert (s["n"], s["errors"], s["grounded_correct"], s["grounded_wrong_version"], s["ungrounded"]) == (4, 1, 1, 3, 0)


def test_an_oracle_error_counts_as_an_error():
    lines = [line("a", "oracle", U, oracle_error="no edition on 2022-06-30"), line("b", "oracle", C)]
    s = report_all({"oracle": lines})["de"]["oracle/oracle"]["all"]
    assert (s["n"], s["errors"]) == (2, 1)


def test_easy_and_hard_come_from_recite_winners_and_errored_recite_ids_are_neither():
    recite = [
        line("e", "recite", C),  # easy
        line("h", "recite", W),  # hard
        line("u", "recite", U),  # hard
        line("x", "recite", U, error="UnknownArticle: Art. 336a"),  # neither
        line("h", "recite", C, error="ModelCallError: x"),  # a later error does not displace h's winner
    ]
    pit = [line(i, "m/pit", C) for i in ("e", "h", "u", "x")] + [line("u", "m/pit", W)]
    s = report_all({"recite": recite, "m/pit": pit})["de"]["m/pit"]["all"]
    assert (s["n_recite_hard"], s["correct_recite_hard"], s["share_correct_recite_hard"]) == (2, 1, 0.5)
    assert (s["n_recite_easy"], s["correct_recite_easy"], s["share_correct_recite_easy"]) == (1, 1, 1.0)
    # a partition with no hard item: 0.0, not an exception or None
    only_easy = report_all({"recite": recite, "m/pit": [line("e", "m/pit", C)]})["de"]["m/pit"]["all"]
    assert (only_easy["n_recite_hard"], only_easy["share_correct_recite_hard"]) == (0, 0.0)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["de", "fr"]),
            st.sampled_from(["before", "after"]),
            st.sampled_from([C, W, U]),
            st.floats(0, 1),
            st.booleans(),
        ),
        min_size=1,
        max_size=12,
    ),
    st.randoms(),
)
def test_report_all_bytes_do_not_depend_on_line_order(rows, rnd):
    lines = [
        line(f"i{n}", "m/pit", label, lang=lang, kind=kind, gold_cov=cov, current=cur)
        for n, (lang, kind, label, cov, cur) in enumerate(rows)
    ]
    shuffled = lines[:]
    rnd.shuffle(shuffled)
    assert json.dumps(report_all({"m/pit": lines})) == json.dumps(report_all({"m/pit": shuffled}))


def test_results_tables_header_formats_and_row_order():
    scored = {
        "recite": [line("a", "recite", W), line("b", "recite", C, kind="after", lang="fr")],
        "m/pit": [line("a", "m/pit", C, gold_cov=2 / 3), line("b", "m/pit", W, kind="after", lang="fr")],
    }
    report = report_all(scored)
    lines = results_tables(report).splitlines()
    assert lines[0] == "| " + " | ".join(RESULTS_HEADER + RESULTS_HARD_HEADER) + " |"
    assert RESULTS_HEADER[-1] == "score" and RESULTS_HARD_HEADER == ("correct % (recite-hard)", "n recite-hard")
    assert lines[1] == "|" + "---|" * 15
    body = [row.strip("| ").split(" | ") for row in lines[2:]]
    expected_order = [
        (lang, system, kind)
        for lang in ("de", "fr")
        for system in ("m/pit", "recite/recite")
        for kind in ("all", "after", "before")
    ]
    assert [tuple(r[:3]) for r in body] == expected_order
    de_pit_all = body[0]
    assert de_pit_all[3:] == ["1", "0", "100.0", "0.0", "0.0", "0.0", "100.0", "0.667", "0.000", "1.000", "100.0", "1"]
    # without recite: no hard columns
    no_hard = results_tables(report_all({"m/pit": scored["m/pit"]})).splitlines()[0]
    assert no_hard == "| " + " | ".join(RESULTS_HEADER) + " |"


def test_summary_pools_counts_over_languages_and_orders_rows_as_published():
    de_items = [f"d{i}" for i in range(4)]
    recite = [line(i, "recite", W) for i in de_items] + [line("f0", "recite", W, lang="fr")]

    # de: 1 of 4 correct, fr: 1 of 1; pooled 2/5 = 40.0 (the mean of the shares would be 62.5)
    def model(key: str) -> list[dict]:
        return [line(i, key, C if i == "d0" else U) for i in de_items] + [line("f0", key, C, lang="fr")]

    keys = [
        "zeta/closed",
        "claude-sonnet-5/closed",
        "deepseek-v4-pro/closed",
        "claude-haiku-4.5/closed",
        "alpha/closed",
        "gpt-5.6-terra/agentic",
        "claude-haiku-4.5/pit",
    ]
    scored = {"recite": recite, "oracle": [line("d0", "oracle", C)], **{k: model(k) for k in keys}}
    lines = summary(report_all(scored)).splitlines()
    assert lines[0] == "| " + " | ".join(SUMMARY_HEADER) + " |"
    assert SUMMARY_HEADER[5] == "**date-sensitive: correct %**"
    rows = [r.strip("| ").split(" | ") for r in lines[2:]]
    assert [r[0] for r in rows] == [
        "recite/recite",
        "claude-haiku-4.5/closed",
        "claude-sonnet-5/closed",
        "deepseek-v4-pro/closed",
        "alpha/closed",
        "zeta/closed",
        "claude-haiku-4.5/pit",
        "gpt-5.6-terra/agentic",
    ]  # no oracle; mode order, then the published models, then others alphabetically
    assert rows[1] == [
        "claude-haiku-4.5/closed",
        "5",
        "40.0",
        "0.0",
        "60.0",
        "**40.0**",
        "25.0 / 100.0 / –",
        "0.0",
        "0",
    ]
    assert rows[0][1:] == ["5", "0.0", "100.0", "0.0", "**0.0**", "0.0 / 0.0 / –", "0.0", "0"]
    no_recite = summary(report_all({"m/pit": model("m/pit")})).splitlines()[2]
    assert no_recite == "| m/pit | 5 | 40.0 | 0.0 | 60.0 | – | – | – | 0 |"


def article(round_, **args):
    return {"round": round_, "name": "ch_get_act_article", "arguments": args, "ok": True, "latency_s": 0.1}


def test_tools_report_flags_rounding_and_winner_per_system_and_id():
    right = {"sr_number": "220", "article": "336a", "lang": "de"}
    lines = [
        # right date and right act+article, correct
        line("a", "m/agentic", C, tool_calls=[article(0, **right, as_of="2022-06-30")]),
        # a date, the wrong one; old call shape (no round/ok/latency) and arguments as a JSON string
        line(
            "b",
            "m/agentic",
            W,
            tool_calls=[{"name": "ch_get_act_article", "arguments": json.dumps({**right, "as_of": "2026-09-04"})}],
        ),
        # no date; a history call and a number-typed sr_number still count by str equality
        line(
            "c",
            "m/agentic",
            C,
            tool_calls=[
                {"round": 0, "name": "ch_get_act_history", "arguments": {"sr_number": "220"}},
                article(1, sr_number=220, article="336a"),
            ],
        ),
        # no tool at all
        line("d", "m/agentic", U),
        # superseded by a later error-free line for the same id: no tool call
        line("e", "m/agentic", C, tool_calls=[article(0, **right, as_of="2022-06-30")]),
        line("e", "m/agentic", U),
        # `as_of` on another tool is not `as_of_any` (§5: over ch_get_act_article calls)
        line(
            "f",
            "m/agentic",
            U,
            tool_calls=[
                {"round": 0, "name": "ch_get_act_text", "arguments": {"sr_number": "220", "as_of": "2022-06-30"}}
            ],
        ),
    ]
    tools = tools_report({"m/agentic": lines, "m/pit": [line("a", "m/pit", C)]})
    assert list(tools) == ["m/agentic"]
    t = tools["m/agentic"]
    assert list(t) == [
        "n",
        "share_any_tool_call",
        "share_as_of_any",
        "share_as_of_correct",
        "share_sr_article_correct",
        "mean_tool_calls",
        "share_correct_when_as_of",
        "share_correct_when_no_as_of",
    ]
    assert t == {
        "n": 6,
        "share_any_tool_call": 0.6667,
        "share_as_of_any": 0.3333,
        "share_as_of_correct": 0.1667,
        "share_sr_article_correct": 0.5,
        "mean_tool_calls": 0.833,
        # split on as_of_passed (the item's date), not as_of_any: b passed a date, the wrong one
        "share_correct_when_as_of": 1.0,
        "share_correct_when_no_as_of": 0.2,
    }
    table = tools_table(tools).splitlines()
    assert table[0] == "| " + " | ".join(TOOLS_HEADER) + " |"
    assert table[2] == "| m/agentic | 6 | 66.7 | 33.3 | 16.7 | 50.0 | 0.83 | 100.0 | 20.0 |"
    assert report_all({"m/agentic": lines})["tools"] == tools


def test_files_written_atomically_and_byte_identical(tmp_path):
    scored = {"recite": [line("a", "recite", W, lang="fr")], "m/pit": [line("a", "m/pit", C, lang="fr")]}
    first = {k: p.read_bytes() for k, p in write_published(scored, tmp_path / "a").items()}
    reordered = dict(reversed(list(scored.items())))
    second = {k: p.read_bytes() for k, p in write_published(reordered, tmp_path / "b").items()}
    assert first == second and set(first) == {"report-all.json", "results-tables.md", "summary.md"}
    assert json.loads(first["report-all.json"]) == report_all(scored)
    assert not [p for p in (tmp_path / "a").iterdir() if p.name.startswith(".")]
