"""The report's numbers (R4, card "Reading the report" and "Baselines"), as plain data.

Input: each system's scored view (`runs.runner.scored_view` lines). Every number
is a count plus a percentage of a stated denominator; an empty denominator is
None (rendered "–"), never 0, so "no data" cannot read as "always wrong".

Date-sensitive items are those where recite is NOT grounded_correct (card: "the
correct share on the items where recite is wrong"); recite-easy items are the
rest. Recite's own scored run decides when present, else the item's stamped
`recite_label`; an item where recite could not resolve the article is in neither.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from chpit_assets.pit.keys import article_key, sr_key
from chpit_assets.runs.runner import errored
from chpit_assets.runs.systems import LOOKUP_MODES, MODEL_MODES, parse_system_key

from .published import tools_report

CORRECT, WRONG, UNGROUNDED = "grounded_correct", "grounded_wrong_version", "ungrounded"
COVERAGES = ("gold_coverage", "distractor_coverage", "distractor_all_coverage", "shared_coverage")
KINDS = ("before", "after")
HEADLINE_LANGS = ("de", "fr", "it")
# Card, results table header, verbatim.
HEADLINE_COLUMNS = (
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


def pct(count: int, total: int) -> float | None:
    return None if total == 0 else round(100.0 * count / total, 2)


def system_order(key: str) -> tuple:
    """oracle, recite, then closed < current < pit < agentic, models alphabetical within a mode (the card's order)."""
    parsed = parse_system_key(key)
    if parsed.slug is None:
        return (LOOKUP_MODES.index(parsed.mode), "", key)
    return (len(LOOKUP_MODES) + MODEL_MODES.index(parsed.mode), parsed.slug, key)


def recite_easy_by_id(scored: Mapping[str, list[dict]]) -> dict[str, bool]:
    """item id -> True when reciting today's edition answers it (recite grounded_correct)."""
    easy: dict[str, bool] = {}
    for lines in scored.values():
        for line in lines:
            if line.get("recite_label") is not None:
                easy.setdefault(line["id"], line["recite_label"] == CORRECT)
    for line in scored.get("recite", []):
        if not errored(line):
            easy[line["id"]] = line["verdict"]["label"] == CORRECT
        else:
            easy.pop(line["id"], None)
    return easy


def _row(lines: list[dict], easy: Mapping[str, bool]) -> dict:
    labels = [line["verdict"]["label"] for line in lines]
    n = len(lines)
    row: dict = {"n": n}
    for name, label in (("correct", CORRECT), ("wrong_version", WRONG), ("ungrounded", UNGROUNDED)):
        row[name] = labels.count(label)
        row[f"{name}_pct"] = pct(row[name], n)
    for cov in COVERAGES:
        row[f"mean_{cov}"] = round(sum(line["verdict"][cov] for line in lines) / n, 4) if n else None
    row["errors"] = sum(map(errored, lines))
    for name, keep in (
        ("gold_current", lambda l: l["gold_is_current"] is True),
        ("gold_superseded", lambda l: l["gold_is_current"] is False),
        ("date_sensitive", lambda l: easy.get(l["id"]) is False),
        ("recite_easy", lambda l: easy.get(l["id"]) is True),
    ):
        subset = [line for line in lines if keep(line)]
        hits = sum(line["verdict"]["label"] == CORRECT for line in subset)
        row[f"n_{name}"] = len(subset)
        row[f"correct_{name}"] = hits
        row[f"correct_{name}_pct"] = pct(hits, len(subset))
    return row


def _tools_row(lines: list[dict]) -> dict:
    """Card "agentic": right date passed, right act and article asked for, answered without any tool."""
    right_date = right_article = no_tool = 0
    for line in lines:
        calls = line["tool_calls"]
        args = [c.get("arguments") or {} for c in calls]
        right_date += any(str(a.get("as_of", "")) == line["as_of"] for a in args)
        # Compared the way the tool itself reads its arguments: "SR 235.1" and "Art. 24" are right too.
        # `article` is the published argument name (PROTOCOL §5); logs from before it said `article_number`.
        right_article += any(
            c.get("name") == "ch_get_act_article"
            and sr_key(str(a.get("sr_number", ""))) == sr_key(line["sr_number"])
            and article_key(str(a.get("article", a.get("article_number", "")))) == article_key(line["article_number"])
            for c, a in zip(calls, args)
        )
        no_tool += not calls and not errored(line)
    n = len(lines)
    return {
        "n": n,
        "right_date": right_date,
        "right_date_pct": pct(right_date, n),
        "right_act_article": right_article,
        "right_act_article_pct": pct(right_article, n),
        "no_tool": no_tool,
        "no_tool_pct": pct(no_tool, n),
        "tool_calls": sum(len(line["tool_calls"]) for line in lines),
    }


def _abstention_rows(system: str, lines: list[dict], langs: list[str]) -> list[dict]:
    """Cite or abstain (issue 16), for the systems whose lines say whether they abstained: how often,
    and the wrong-version share among the answers that were given (abstaining is never wrong-version,
    so only this share says whether verification kept wrong editions out)."""
    if not any("abstained" in line for line in lines):
        return []
    rows = []
    for lang in [*langs, "all"]:
        subset = [l for l in lines if lang == "all" or l["lang"] == lang]
        if not subset:
            continue
        given = [l for l in subset if not l.get("abstained")]
        wrong = sum(l["verdict"]["label"] == WRONG for l in given)
        correct = sum(l["verdict"]["label"] == CORRECT for l in given)
        rows.append(
            {
                "system": system,
                "lang": lang,
                "n": len(subset),
                "abstained": len(subset) - len(given),
                "abstained_pct": pct(len(subset) - len(given), len(subset)),
                "answered": len(given),
                "wrong_version_answered_pct": pct(wrong, len(given)),
                "correct_answered_pct": pct(correct, len(given)),
            }
        )
    return rows


def build_report(scored: Mapping[str, Iterable[dict]]) -> dict:
    """All report tables from {system key: scored lines (any languages)}. Deterministic in its input."""
    lists: dict[str, list[dict]] = {key: list(lines) for key, lines in scored.items()}
    easy = recite_easy_by_id(lists)
    systems = sorted(lists, key=system_order)
    langs = sorted({line["lang"] for lines in lists.values() for line in lines})

    headline, rows, tools = [], [], []
    for system in systems:
        lines = lists[system]
        overall = _row(lines, easy)
        by_lang = {lang: _row([l for l in lines if l["lang"] == lang], easy) for lang in HEADLINE_LANGS}
        headline.append(
            {
                "system": system,
                **{k: overall[k] for k in ("n", "correct_pct", "wrong_version_pct", "ungrounded_pct", "errors")},
                "date_sensitive_correct_pct": overall["correct_date_sensitive_pct"],
                "date_sensitive_correct_pct_by_lang": {
                    lang: by_lang[lang]["correct_date_sensitive_pct"] for lang in HEADLINE_LANGS
                },
                "recite_easy_correct_pct": overall["correct_recite_easy_pct"],
            }
        )
        for lang in langs:
            lang_lines = [l for l in lines if l["lang"] == lang]
            if not lang_lines:
                continue
            for kind in (*KINDS, "all"):
                subset = lang_lines if kind == "all" else [l for l in lang_lines if l["kind"] == kind]
                rows.append({"lang": lang, "system": system, "kind": kind, **_row(subset, easy)})
            if parse_system_key(system).base_mode == "agentic":
                tools.append({"system": system, "lang": lang, **_tools_row(lang_lines)})
        if parse_system_key(system).base_mode == "agentic":
            tools.append({"system": system, "lang": "all", **_tools_row(lines)})

    abstention = [row for system in systems for row in _abstention_rows(system, lists[system], langs)]
    item_ids = {lang: {l["id"] for lines in lists.values() for l in lines if l["lang"] == lang} for lang in langs}
    date_sensitive = {}
    for lang in langs:
        known = [i for i in sorted(item_ids[lang]) if i in easy]
        sensitive = sum(not easy[i] for i in known)
        date_sensitive[lang] = {
            "items": len(item_ids[lang]),
            "known": len(known),
            "date_sensitive": sensitive,
            "date_sensitive_pct": pct(sensitive, len(known)),
        }
    return {
        "columns": list(HEADLINE_COLUMNS),
        "systems": systems,
        "langs": langs,
        "headline": headline,
        "rows": rows,
        "date_sensitive": date_sensitive,
        "tools": tools,
        "abstention": abstention,
        # §5's tools report with the published keys, beside ours (same lines, the published definitions).
        "tools_published": tools_report(lists),
    }
