"""The report as markdown, JSON and one standalone HTML page with inline SVG charts.

Pure functions of `build_report`'s output: no clock, no randomness, no external
assets, so the same results always give byte-identical files.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from chpit_assets.files import write_atomic
from chpit_assets.markdown import table_lines

from .published import tools_table
from .tables import HEADLINE_COLUMNS, HEADLINE_LANGS


def fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def headline_cells(h: dict) -> list[str]:
    by_lang = " / ".join(fmt(h["date_sensitive_correct_pct_by_lang"][lang]) for lang in HEADLINE_LANGS)
    return [
        h["system"],
        str(h["n"]),
        fmt(h["correct_pct"]),
        fmt(h["wrong_version_pct"]),
        fmt(h["ungrounded_pct"]),
        fmt(h["date_sensitive_correct_pct"]),
        by_lang,
        fmt(h["recite_easy_correct_pct"]),
        str(h["errors"]),
    ]


_ROW_HEADER = [
    "lang",
    "system",
    "kind",
    "n",
    "correct %",
    "wrong version %",
    "ungrounded %",
    "mean gold cov.",
    "mean distractor cov.",
    "mean distractor-all cov.",
    "mean shared cov.",
    "correct % (gold current)",
    "correct % (gold superseded)",
    "date-sensitive: correct %",
    "errors",
]


def _row_cells(r: dict) -> list[str]:
    cov = lambda v: "–" if v is None else f"{v:.3f}"  # noqa: E731
    return [
        r["lang"],
        r["system"],
        r["kind"],
        str(r["n"]),
        fmt(r["correct_pct"]),
        fmt(r["wrong_version_pct"]),
        fmt(r["ungrounded_pct"]),
        cov(r["mean_gold_coverage"]),
        cov(r["mean_distractor_coverage"]),
        cov(r["mean_distractor_all_coverage"]),
        cov(r["mean_shared_coverage"]),
        f"{fmt(r['correct_gold_current_pct'])} (n={r['n_gold_current']})",
        f"{fmt(r['correct_gold_superseded_pct'])} (n={r['n_gold_superseded']})",
        f"{fmt(r['correct_date_sensitive_pct'])} (n={r['n_date_sensitive']})",
        str(r["errors"]),
    ]


_TOOLS_HEADER = [
    "system",
    "lang",
    "n",
    "right date %",
    "right act and article %",
    "answered without a tool %",
    "tool calls",
]


def _tools_cells(t: dict) -> list[str]:
    return [
        t["system"],
        t["lang"],
        str(t["n"]),
        fmt(t["right_date_pct"]),
        fmt(t["right_act_article_pct"]),
        fmt(t["no_tool_pct"]),
        str(t["tool_calls"]),
    ]


def to_markdown(report: dict) -> str:
    out = ["# CH-PiT report", "", "## Results", ""]
    out += table_lines(list(HEADLINE_COLUMNS), [headline_cells(h) for h in report["headline"]])
    out += [
        "",
        "Read the date-sensitive column, not the headline: it is the correct share on the items where "
        "reciting today's edition is wrong (recite not grounded_correct); de / fr / it split it by language.",
        "",
        "## Date-sensitive share of the items",
        "",
    ]
    out += table_lines(
        ["lang", "items", "recite known", "date-sensitive", "date-sensitive %"],
        [
            [lang, str(d["items"]), str(d["known"]), str(d["date_sensitive"]), fmt(d["date_sensitive_pct"])]
            for lang, d in report["date_sensitive"].items()
        ],
    )
    out += ["", "## By language, system and kind", ""]
    out += table_lines(_ROW_HEADER, [_row_cells(r) for r in report["rows"]])
    if report["tools"]:
        out += ["", "## Tools (agentic)", ""]
        out += table_lines(_TOOLS_HEADER, [_tools_cells(t) for t in report["tools"]])
    if report.get("abstention"):
        out += ["", "## Cite or abstain (verified systems)", ""]
        out += table_lines(
            ["system", "lang", "n", "abstained %", "answered", "wrong version % of answered", "correct % of answered"],
            [
                [
                    a["system"],
                    a["lang"],
                    str(a["n"]),
                    fmt(a["abstained_pct"]),
                    str(a["answered"]),
                    fmt(a["wrong_version_answered_pct"]),
                    fmt(a["correct_answered_pct"]),
                ]
                for a in report["abstention"]
            ],
        )
    if report["tools_published"]:
        out += ["", "## Tools, published shape (PROTOCOL §5)", "", tools_table(report["tools_published"]).rstrip("\n")]
    return "\n".join(out) + "\n"


def to_json(report: dict) -> str:
    return json.dumps(report, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


_COLOURS = {"correct": "#2e7d32", "wrong_version": "#c62828", "ungrounded": "#9e9e9e"}


def _label_chart(headline: list[dict]) -> str:
    """One stacked bar per system: correct / wrong version / ungrounded shares."""
    bar_h, gap, left, width = 18, 8, 230, 520
    height = len(headline) * (bar_h + gap) + 40
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{left + width + 20}" height="{height}" '
        f'aria-label="Label shares per system">'
    ]
    for i, h in enumerate(headline):
        y = 10 + i * (bar_h + gap)
        parts.append(
            f'<text x="{left - 8}" y="{y + 13}" text-anchor="end" font-size="12">{html.escape(h["system"])}</text>'
        )
        x = float(left)
        for key in ("correct", "wrong_version", "ungrounded"):
            share = h[f"{key}_pct"] or 0.0
            w = width * share / 100.0
            parts.append(
                f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{bar_h}" fill="{_COLOURS[key]}">'
                f"<title>{html.escape(h['system'])} {key}: {fmt(h[f'{key}_pct'])}%</title></rect>"
            )
            x += w
    y = height - 14
    for i, key in enumerate(("correct", "wrong_version", "ungrounded")):
        parts.append(
            f'<rect x="{left + i * 150}" y="{y - 10}" width="12" height="12" fill="{_COLOURS[key]}"/>'
            f'<text x="{left + i * 150 + 16}" y="{y}" font-size="12">{key.replace("_", " ")}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _date_sensitive_chart(headline: list[dict]) -> str:
    """Date-sensitive correct % per system, one bar per language."""
    bar_h, group_gap, left, width = 10, 10, 230, 520
    lang_colours = {"de": "#1565c0", "fr": "#6a1b9a", "it": "#ef6c00"}
    group_h = len(HEADLINE_LANGS) * bar_h + group_gap
    height = len(headline) * group_h + 40
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{left + width + 60}" height="{height}" '
        f'aria-label="Date-sensitive correct share per system and language">'
    ]
    for i, h in enumerate(headline):
        y0 = 10 + i * group_h
        parts.append(
            f'<text x="{left - 8}" y="{y0 + 18}" text-anchor="end" font-size="12">{html.escape(h["system"])}</text>'
        )
        for j, lang in enumerate(HEADLINE_LANGS):
            value = h["date_sensitive_correct_pct_by_lang"][lang]
            w = width * (value or 0.0) / 100.0
            y = y0 + j * bar_h
            parts.append(
                f'<rect x="{left}" y="{y}" width="{w:.2f}" height="{bar_h - 2}" fill="{lang_colours[lang]}">'
                f"<title>{html.escape(h['system'])} {lang}: {fmt(value)}%</title></rect>"
            )
    y = height - 14
    for j, lang in enumerate(HEADLINE_LANGS):
        parts.append(
            f'<rect x="{left + j * 80}" y="{y - 10}" width="12" height="12" fill="{lang_colours[lang]}"/>'
            f'<text x="{left + j * 80 + 16}" y="{y}" font-size="12">{lang}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _html_table(header: list[str], body: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in header)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>" for cells in body)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def to_html(report: dict) -> str:
    sections = [
        "<h2>Results</h2>",
        _html_table(list(HEADLINE_COLUMNS), [headline_cells(h) for h in report["headline"]]),
        "<h3>Label shares</h3>",
        _label_chart(report["headline"]),
        "<h3>Date-sensitive items: correct % by language</h3>",
        _date_sensitive_chart(report["headline"]),
        "<h2>By language, system and kind</h2>",
        _html_table(_ROW_HEADER, [_row_cells(r) for r in report["rows"]]),
    ]
    if report["tools"]:
        sections += ["<h2>Tools (agentic)</h2>", _html_table(_TOOLS_HEADER, [_tools_cells(t) for t in report["tools"]])]
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
        "table{border-collapse:collapse;margin:1em 0;font-size:13px}"
        "th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}"
        "td:first-child,th:first-child{text-align:left}"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>CH-PiT report</title>'
        f"<style>{style}</style></head><body><h1>CH-PiT report</h1>{''.join(sections)}</body></html>\n"
    )


def write_report(report: dict, report_dir: Path | str) -> dict[str, Path]:
    """`report.md`, `report.json`, `report.html` in `report_dir`, each written atomically."""
    report_dir = Path(report_dir)
    report_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for suffix, text in (("md", to_markdown(report)), ("json", to_json(report)), ("html", to_html(report))):
        paths[suffix] = report_dir / f"report.{suffix}"
        write_atomic(paths[suffix], text.encode("utf-8"))
    return paths
