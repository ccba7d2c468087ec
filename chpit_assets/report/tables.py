"""The report's numbers (R4, card "Reading the report" and "Baselines"), as plain data.

Input: each system's scored view (`runs.runner.scored_view` lines). Every number
is a count plus a percentage of a stated denominator; an empty denominator is
None (rendered "–"), never 0, so "no data" cannot read as "always wrong".

Date-sensitive items are those where recite is NOT grounded_correct (card: "the
correct share on the items where recite is wrong"); recite-easy items are the
rest. Recite's own scored run decides when present, else the item's stamped
`recite_label`; an item where recite could not resolve the article is in neither.

Every share carries its 95% interval under `ci` (stats: Wilson, or the cluster bootstrap by
change where a change gives two or more items); the sections of issue 25 (paired comparisons,
breakdowns, the training-cutoff split, repeats) come from their own modules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from chpit_assets.pit.keys import article_key, sr_key
from chpit_assets.runs.runner import errored
from chpit_assets.runs.systems import parse_system_key

from .breakdowns import breakdown_rows, cutoff_rows
from .compare import comparison_rows
from .layout import HEADLINE, HEADLINE_LANGS, SECTIONS
from .published import tools_report
from .repeats import repeat_rows
from .stats import METHODS, pct
from .stats import line_interval as interval
from .stats import line_intervals as intervals

CORRECT, WRONG, UNGROUNDED = "grounded_correct", "grounded_wrong_version", "ungrounded"
COVERAGES = ("gold_coverage", "distractor_coverage", "distractor_all_coverage", "shared_coverage")
KINDS = ("before", "after")
# Card, results table header, verbatim (declared with its cells in layout.HEADLINE).
HEADLINE_COLUMNS = tuple(HEADLINE.headers)


def system_order(key: str) -> tuple:
    """oracle, recite, then closed < current < pit < agentic, models alphabetical within a mode (the card's order)."""
    parsed = parse_system_key(key)
    return (parsed.order, parsed.slug or "", key)


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


def _labelled(label: str) -> Callable[[dict], bool]:
    return lambda line: line["verdict"]["label"] == label


def _row(lines: list[dict], easy: Mapping[str, bool]) -> dict:
    labels = [line["verdict"]["label"] for line in lines]
    n = len(lines)
    row: dict = {"n": n}
    named = (("correct", CORRECT), ("wrong_version", WRONG), ("ungrounded", UNGROUNDED))
    ci: dict = intervals(lines, {name: _labelled(label) for name, label in named})
    for name, label in named:
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
        ci[f"correct_{name}"] = interval(subset, lambda l: l["verdict"]["label"] == CORRECT)
    row["ci"] = ci
    return row


def _tools_row(lines: list[dict]) -> dict:
    """Card "agentic": right date passed, right act and article asked for, answered without any tool."""

    def right_date(line: dict) -> bool:
        return any(str((c.get("arguments") or {}).get("as_of", "")) == line["as_of"] for c in line["tool_calls"])

    def right_article(line: dict) -> bool:
        # Compared the way the tool itself reads its arguments: "SR 235.1" and "Art. 24" are right too.
        # `article` is the published argument name (PROTOCOL §5); logs from before it said `article_number`.
        return any(
            c.get("name") == "ch_get_act_article"
            and sr_key(str((a := c.get("arguments") or {}).get("sr_number", ""))) == sr_key(line["sr_number"])
            and article_key(str(a.get("article", a.get("article_number", "")))) == article_key(line["article_number"])
            for c in line["tool_calls"]
        )

    def no_tool(line: dict) -> bool:
        return not line["tool_calls"] and not errored(line)

    n = len(lines)
    tests = {"right_date": right_date, "right_act_article": right_article, "no_tool": no_tool}
    row: dict = {"n": n, "ci": intervals(lines, tests)}
    for name, test in tests.items():
        row[name] = sum(map(test, lines))
        row[f"{name}_pct"] = pct(row[name], n)
    row["tool_calls"] = sum(len(line["tool_calls"]) for line in lines)
    return row


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
                "ci": {
                    "abstained": interval(subset, lambda l: l.get("abstained")),
                    "wrong_version_answered": interval(given, lambda l: l["verdict"]["label"] == WRONG),
                    "correct_answered": interval(given, lambda l: l["verdict"]["label"] == CORRECT),
                },
            }
        )
    return rows


def build_report(scored: Mapping[str, Iterable[dict]], repeats: Mapping[str, Iterable[dict]] | None = None) -> dict:
    """All report tables from {system key: scored lines (any languages)} and, for systems run with
    repeats, {system key: scored lines of every repeat}. Deterministic in its input (the bootstrap
    is seeded)."""
    lists: dict[str, list[dict]] = {key: list(lines) for key, lines in scored.items()}
    easy = recite_easy_by_id(lists)
    systems = sorted(lists, key=system_order)
    langs = sorted({line["lang"] for lines in lists.values() for line in lines})

    headline, rows, tools = [], [], []
    for system in systems:
        lines = lists[system]
        overall = _row(lines, easy)
        lang_all: dict[str, dict] = {}  # the (lang, system, all) rows, for the headline's de / fr / it
        for lang in langs:
            lang_lines = [l for l in lines if l["lang"] == lang]
            if not lang_lines:
                continue
            for kind in (*KINDS, "all"):
                subset = lang_lines if kind == "all" else [l for l in lang_lines if l["kind"] == kind]
                rows.append({"lang": lang, "system": system, "kind": kind, **_row(subset, easy)})
            lang_all[lang] = rows[-1]
            if parse_system_key(system).tool_calls:
                tools.append({"system": system, "lang": lang, **_tools_row(lang_lines)})
        if parse_system_key(system).tool_calls:
            tools.append({"system": system, "lang": "all", **_tools_row(lines)})
        no_data = {"low": None, "high": None, "method": None}
        headline.append(
            {
                "system": system,
                **{k: overall[k] for k in ("n", "correct_pct", "wrong_version_pct", "ungrounded_pct", "errors")},
                "date_sensitive_correct_pct": overall["correct_date_sensitive_pct"],
                "date_sensitive_correct_pct_by_lang": {
                    lang: lang_all[lang]["correct_date_sensitive_pct"] if lang in lang_all else None
                    for lang in HEADLINE_LANGS
                },
                "recite_easy_correct_pct": overall["correct_recite_easy_pct"],
                "ci": {
                    **{k: overall["ci"][k] for k in ("correct", "wrong_version", "ungrounded")},
                    "date_sensitive_correct": overall["ci"]["correct_date_sensitive"],
                    "date_sensitive_correct_by_lang": {
                        lang: lang_all[lang]["ci"]["correct_date_sensitive"] if lang in lang_all else no_data
                        for lang in HEADLINE_LANGS
                    },
                    "recite_easy_correct": overall["ci"]["correct_recite_easy"],
                },
            }
        )

    abstention = [row for system in systems for row in _abstention_rows(system, lists[system], langs)]
    item_lines = {(l["lang"], l["id"]): l for lines in lists.values() for l in lines}
    date_sensitive = {}
    for lang in langs:
        ids = sorted(i for lg, i in item_lines if lg == lang)
        known = [item_lines[(lang, i)] for i in ids if i in easy]
        sensitive = sum(not easy[line["id"]] for line in known)
        date_sensitive[lang] = {
            "lang": lang,
            "items": len(ids),
            "known": len(known),
            "date_sensitive": sensitive,
            "date_sensitive_pct": pct(sensitive, len(known)),
            "ci": {"date_sensitive": interval(known, lambda l: not easy[l["id"]])},
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
        "comparisons": comparison_rows(lists, systems, easy),
        "breakdowns": breakdown_rows(lists, systems, easy),
        "cutoff": cutoff_rows(lists, systems, easy),
        "repeats": repeat_rows({k: list(v) for k, v in (repeats or {}).items()}, system_order, easy),
        "methods": METHODS,
        "sections": [{"key": t.key, "title": t.title, "columns": t.headers} for t in SECTIONS],
        # §5's tools report with the published keys, beside ours (same lines, the published definitions).
        "tools_published": tools_report(lists),
    }
