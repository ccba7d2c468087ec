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

from .columns import Table, fmt
from .layout import CUTOFF, HEADLINE, HEADLINE_LANGS, SECTIONS


def _section_lines(table: Table, report: dict) -> list[str]:
    rows = table.rows_of(report)
    if not rows and not table.empty:
        return []
    out = ["", f"## {table.title}", ""]
    out += table_lines(table.headers, table.body(rows)) if rows else [table.empty]
    if table.note and rows:
        out += ["", table.note]
    return out


def to_markdown(report: dict) -> str:
    out = ["# CH-PiT report"]
    for table in SECTIONS:
        out += _section_lines(table, report)
    return "\n".join(out) + "\n"


def to_json(report: dict) -> str:
    return json.dumps(report, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


_COLOURS = {"correct": "#2e7d32", "wrong_version": "#c62828", "ungrounded": "#9e9e9e"}


def _legend(entries: list[tuple[str, str]], left: int, y: int, step: int) -> str:
    """A chart's legend, one colour swatch and label every `step` pixels, and the chart's end."""
    return (
        "".join(
            f'<rect x="{left + i * step}" y="{y - 10}" width="12" height="12" fill="{colour}"/>'
            f'<text x="{left + i * step + 16}" y="{y}" font-size="12">{html.escape(text)}</text>'
            for i, (colour, text) in enumerate(entries)
        )
        + "</svg>"
    )


def _svg(width: int, height: int, label: str) -> str:
    """The opening tag every chart of the report shares (an image with its accessible name)."""
    return f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" aria-label="{label}">'


def _label_chart(headline: list[dict]) -> str:
    """One stacked bar per system: correct / wrong version / ungrounded shares."""
    bar_h, gap, left, width = 18, 8, 230, 520
    height = len(headline) * (bar_h + gap) + 40
    parts = [_svg(left + width + 20, height, "Label shares per system")]
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
    legend = [(_COLOURS[key], key.replace("_", " ")) for key in ("correct", "wrong_version", "ungrounded")]
    return "".join(parts) + _legend(legend, left, height - 14, 150)


def _date_sensitive_chart(headline: list[dict]) -> str:
    """Date-sensitive correct % per system, one bar per language."""
    bar_h, group_gap, left, width = 10, 10, 230, 520
    lang_colours = {"de": "#1565c0", "fr": "#6a1b9a", "it": "#ef6c00"}
    group_h = len(HEADLINE_LANGS) * bar_h + group_gap
    height = len(headline) * group_h + 40
    parts = [_svg(left + width + 60, height, "Date-sensitive correct share per system and language")]
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
    return "".join(parts) + _legend([(lang_colours[lang], lang) for lang in HEADLINE_LANGS], left, height - 14, 80)


def _html_table(header: list[str], body: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in header)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>" for cells in body)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _html_section(table: Table, report: dict) -> list[str]:
    rows = table.rows_of(report)
    if not rows and not table.empty:
        return []
    out = [f"<h2>{html.escape(table.title)}</h2>"]
    out.append(_html_table(table.headers, table.body(rows)) if rows else f"<p>{html.escape(table.empty)}</p>")
    if table.note and rows:
        out.append(f"<p>{html.escape(table.note)}</p>")
    return out


def to_html(report: dict) -> str:
    """Every section of the markdown, in its order, with the charts after the tables they draw."""
    sections = []
    for table in SECTIONS:
        sections += _html_section(table, report)
        if table is HEADLINE:
            sections += [
                "<h3>Label shares</h3>",
                _label_chart(report["headline"]),
                "<h3>Date-sensitive items: correct % by language</h3>",
                _date_sensitive_chart(report["headline"]),
            ]
        if table is CUTOFF and report["cutoff"]:
            sections += ["<h3>Date-sensitive items: correct % before and after the cutoff</h3>", _cutoff_chart(report)]
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


def _cutoff_chart(report: dict) -> str:
    """Per model and split, the correct share on or before / after the cutoff, with its 95% interval as a whisker."""
    rows = report["cutoff"]
    bar_h, gap, left, width = 12, 6, 330, 420
    colours = {"on or before": "#1565c0", "after": "#ef6c00"}
    height = len(rows) * (bar_h + gap) + 40
    parts = [
        _svg(left + width + 60, height, "Date-sensitive correct share before and after each model's training cutoff")
    ]
    for i, r in enumerate(rows):
        y = 10 + i * (bar_h + gap)
        label = f"{r['system']} · {r['split']} {r['side']} {r['cutoff']} (n={r['n']})"
        parts.append(f'<text x="{left - 8}" y="{y + 10}" text-anchor="end" font-size="11">{html.escape(label)}</text>')
        w = width * (r["correct_pct"] or 0.0) / 100.0
        parts.append(
            f'<rect x="{left}" y="{y}" width="{w:.2f}" height="{bar_h}" fill="{colours[r["side"]]}">'
            f"<title>{html.escape(label)}: {fmt(r['correct_pct'])}%</title></rect>"
        )
        ci = r["ci"]["correct"]
        if ci["low"] is not None:
            x0, x1, mid = left + width * ci["low"] / 100.0, left + width * ci["high"] / 100.0, y + bar_h / 2
            parts.append(f'<line x1="{x0:.2f}" y1="{mid}" x2="{x1:.2f}" y2="{mid}" stroke="#222" stroke-width="1.5"/>')
    legend = [(colour, f"{side} the cutoff") for side, colour in colours.items()]
    return "".join(parts) + _legend(legend, left, height - 14, 140)


def write_report(report: dict, report_dir: Path | str) -> dict[str, Path]:
    """`report.md`, `report.json`, `report.html` in `report_dir`, each written atomically."""
    report_dir = Path(report_dir)
    report_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for suffix, text in (("md", to_markdown(report)), ("json", to_json(report)), ("html", to_html(report))):
        paths[suffix] = report_dir / f"report.{suffix}"
        write_atomic(paths[suffix], text.encode("utf-8"))
    return paths
