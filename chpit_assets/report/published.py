"""The published report files (PROTOCOL §5 tools report, §8): `report-all.json`, `results-tables.md`,
`summary.md` and the published tools table, as pure functions of the scored lines.

These sit next to our richer report (tables.py/render.py) and differ from it on purpose: shares
are fractions (raw floats, 0.0 on an empty denominator, where ours says "no data"), system names
are the published ones, and every key, column and row order is the published one, so a number
computed here can be put next to the published results table.

Readings where the protocol is silent (documented, tested):
- System names: `recite` -> `recite/recite` (§7); `<slug>/<mode>` stays (our slug is already the
  published `model_short`). The oracle is named `oracle/oracle` by the same `{name}/{mode}` rule
  as the other model-free system, so the two lookups sort together and read alike.
- `score` (§8) is the card's headline number, "must score 1.000": the grounded_correct share,
  i.e. equal to `share_correct`; results-tables prints it .3f next to the % columns.
- The hard-from keys (§8 `--hard-from`) are added whenever a recite run is among the inputs.
- Tools report: "lines with tool_calls" are the agentic systems' lines (only agentic lines carry
  tool calls in the published log; our scored view gives every line a list, empty when no tool
  ran). `share_correct_when_as_of` / `_no_as_of` split on `as_of_passed` (the item's own date
  passed), as the published tools report does; a date passed at all is `share_as_of_any`.
- summary.md leaves the oracle out (the published rows start at recite/recite); a language a
  system has no lines in shows "–" in de / fr / it, and without a recite run the two
  date-sensitive columns are "–" (there is no split to pool).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from chpit_assets.files import write_atomic
from chpit_assets.markdown import table_lines
from chpit_assets.runs.runner import errored
from chpit_assets.runs.systems import our_key, parse_system_key, published_name

from .columns import Column, headers, key_column

CORRECT, WRONG, UNGROUNDED = "grounded_correct", "grounded_wrong_version", "ungrounded"
PARTS = ("all", "after", "before")  # §8: `all` first, then the kinds sorted
ARTICLE_TOOL = "ch_get_act_article"
# §8 summary.md row order within a mode; any other model follows, alphabetically.
PUBLISHED_MODELS = ("claude-haiku-4.5", "claude-sonnet-5", "gpt-5.6-terra", "deepseek-v4-pro")
SUMMARY_LANGS = ("de", "fr", "it")


def _pct(share: float) -> str:
    return f"{100.0 * share:.1f}"


def _pct_of(key: str) -> Callable[[dict], str]:
    return lambda row: _pct(row[key])


def _fixed(key: str, digits: int) -> Callable[[dict], str]:
    return lambda row: f"{row[key]:.{digits}f}"


# §8 results-tables.md: a row is a report-all.json stats object with its lang, system and kind.
RESULTS_COLUMNS = (
    key_column("lang"),
    key_column("system"),
    key_column("kind"),
    key_column("n"),
    key_column("errors"),
    Column("correct %", _pct_of("share_correct")),
    Column("wrong version %", _pct_of("share_wrong")),
    Column("ungrounded %", _pct_of("share_ungrounded")),
    Column("correct % (gold current)", _pct_of("share_correct_gold_current")),
    Column("correct % (gold superseded)", _pct_of("share_correct_gold_superseded")),
    Column("mean gold cov", _fixed("mean_gold_coverage", 3)),
    Column("mean distractor cov", _fixed("mean_distractor_coverage", 3)),
    Column("score", _fixed("score", 3)),
)
RESULTS_HARD_COLUMNS = (
    Column("correct % (recite-hard)", _pct_of("share_correct_recite_hard")),
    key_column("n recite-hard", "n_recite_hard"),
)
# §8 summary.md: a row is one system's counts pooled over languages (`summary`), already formatted.
SUMMARY_COLUMNS = (
    key_column("system"),
    key_column("n"),
    key_column("correct %"),
    key_column("wrong version %"),
    key_column("ungrounded %"),
    key_column("**date-sensitive: correct %**"),
    key_column("de / fr / it"),
    key_column("recite-easy: correct %"),
    key_column("errors"),
)
# §5 tools table: a row is one system's tools report with its name.
TOOLS_COLUMNS = (
    key_column("system"),
    key_column("n"),
    Column("any tool call %", _pct_of("share_any_tool_call")),
    Column("as_of passed %", _pct_of("share_as_of_any")),
    Column("correct as_of %", _pct_of("share_as_of_correct")),
    Column("right act+article %", _pct_of("share_sr_article_correct")),
    Column("mean calls", _fixed("mean_tool_calls", 2)),
    Column("correct % (as_of)", _pct_of("share_correct_when_as_of")),
    Column("correct % (no as_of)", _pct_of("share_correct_when_no_as_of")),
)
RESULTS_HEADER = headers(RESULTS_COLUMNS)
RESULTS_HARD_HEADER = headers(RESULTS_HARD_COLUMNS)
SUMMARY_HEADER = headers(SUMMARY_COLUMNS)
TOOLS_HEADER = headers(TOOLS_COLUMNS)


def published_system(key: str) -> str:
    """Our system key -> the published system name (§7)."""
    return key if parse_system_key(key).asks_model else published_name(key)


def _errored(line: dict) -> bool:
    """§8: an error is an `error` or an `oracle_error` on the line (the latter only in published lines)."""
    return errored(line) or "oracle_error" in line


def winners(lines: Iterable[dict]) -> dict[str, dict]:
    """id -> its winning line (§7): the last error-free line, else the last errored one."""
    out: dict[str, dict] = {}
    for line in lines:
        held = out.get(line["id"])
        if held is None or not _errored(line) or _errored(held):
            out[line["id"]] = line
    return out


def _share(count: int, total: int) -> float:
    return count / total if total else 0.0


def _mean(values: list[float]) -> float:
    # Summed in line order, as the published report sums: the same order gives the same bits, so
    # a published log kept in its file order reproduces the published means exactly.
    return sum(values) / len(values) if values else 0.0


def _split(out: dict, name: str, subset: list[dict]) -> None:
    """n_/correct_/share_correct_{name}: the correct share on one subset of the lines."""
    hits = sum(line["verdict"]["label"] == CORRECT for line in subset)
    out[f"n_{name}"], out[f"correct_{name}"], out[f"share_correct_{name}"] = (
        len(subset),
        hits,
        _share(hits, len(subset)),
    )


def _stats(lines: list[dict], hard: Mapping[tuple[str, str], bool] | None) -> dict:
    n = len(lines)
    labels = [line["verdict"]["label"] for line in lines]
    correct, wrong, ungrounded = labels.count(CORRECT), labels.count(WRONG), labels.count(UNGROUNDED)
    out = {
        "n": n,
        "errors": sum(map(_errored, lines)),
        "grounded_correct": correct,
        "grounded_wrong_version": wrong,
        "ungrounded": ungrounded,
        "share_correct": _share(correct, n),
        "share_wrong": _share(wrong, n),
        "share_ungrounded": _share(ungrounded, n),
        "mean_gold_coverage": _mean([line["verdict"]["gold_coverage"] for line in lines]),
        "mean_distractor_coverage": _mean([line["verdict"]["distractor_coverage"] for line in lines]),
    }
    _split(out, "gold_current", [l for l in lines if l["gold_is_current"] is True])
    _split(out, "gold_superseded", [l for l in lines if l["gold_is_current"] is False])
    out["score"] = out["share_correct"]
    if hard is not None:
        _split(out, "recite_hard", [l for l in lines if hard.get((l["lang"], l["id"])) is True])
        _split(out, "recite_easy", [l for l in lines if hard.get((l["lang"], l["id"])) is False])
    return out


def _hard_by_item(scored: Mapping[str, list[dict]]) -> dict[tuple[str, str], bool] | None:
    """(lang, id) -> True when recite's winner is not grounded_correct (date-sensitive, §8
    "recite-hard"); errored recite winners are in neither set. None without a recite run."""
    if "recite" not in scored:
        return None
    return {
        (line["lang"], item_id): line["verdict"]["label"] != CORRECT
        for item_id, line in winners(scored["recite"]).items()
        if not _errored(line)
    }


def _arguments(call: dict) -> dict:
    """A call's arguments as a dict; a model may send them as a JSON string, or not as an object."""
    args = call.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return {}
    return args if isinstance(args, dict) else {}


def tool_flags(line: dict) -> dict:
    """§5 line extras from the line's tool calls and item fields (old and new call shapes alike)."""
    calls = line.get("tool_calls") or []
    article_args = [_arguments(c) for c in calls if c.get("name") == ARTICLE_TOOL]
    return {
        "n_tool_calls": len(calls),
        "as_of_any": any("as_of" in a for a in article_args),
        "as_of_passed": any("as_of" in a and str(a["as_of"]) == str(line["as_of"]) for a in article_args),
        "sr_article_correct": any(
            str(a.get("sr_number")) == str(line["sr_number"]) and str(a.get("article")) == str(line["article_number"])
            for a in article_args
        ),
    }


def tools_report(scored: Mapping[str, Iterable[dict]]) -> dict[str, dict]:
    """§5: {system: {n, share_*, mean_tool_calls, ...}} over agentic lines, winner per (system, id)."""
    out = {}
    for key in sorted(scored, key=published_system):
        if not parse_system_key(key).tool_calls:
            continue
        lines = list(winners(scored[key]).values())
        if not lines:
            continue
        flags = [tool_flags(line) for line in lines]
        correct = [line["verdict"]["label"] == CORRECT for line in lines]
        with_date = [c for c, f in zip(correct, flags) if f["as_of_passed"]]
        without = [c for c, f in zip(correct, flags) if not f["as_of_passed"]]
        n = len(lines)
        out[published_system(key)] = {
            "n": n,
            "share_any_tool_call": round(_share(sum(f["n_tool_calls"] > 0 for f in flags), n), 4),
            "share_as_of_any": round(_share(sum(f["as_of_any"] for f in flags), n), 4),
            "share_as_of_correct": round(_share(sum(f["as_of_passed"] for f in flags), n), 4),
            "share_sr_article_correct": round(_share(sum(f["sr_article_correct"] for f in flags), n), 4),
            "mean_tool_calls": round(sum(f["n_tool_calls"] for f in flags) / n, 3),
            "share_correct_when_as_of": round(_share(sum(with_date), len(with_date)), 4),
            "share_correct_when_no_as_of": round(_share(sum(without), len(without)), 4),
        }
    return out


def report_all(scored: Mapping[str, Iterable[dict]], *, file_order: bool = False) -> dict:
    """§8 `report-all.json`: {lang: {system: {all|after|before: stats}}, tools}, langs and systems sorted.

    Each system's lines are taken in id order, so the same answers give the same bytes however they
    were logged; `file_order` keeps the order the lines first appear in instead, the published
    report's order, for re-computing a published report-all.json from its logs bit for bit."""
    lists: dict[str, list[dict]] = {key: list(lines) for key, lines in scored.items()}
    hard = _hard_by_item(lists)
    out: dict = {}
    for lang in sorted({line["lang"] for lines in lists.values() for line in lines}):
        systems = {}
        for key in sorted(lists, key=published_system):
            won = list(winners(l for l in lists[key] if l["lang"] == lang).values())
            lines = won if file_order else sorted(won, key=lambda l: l["id"])
            if lines:
                systems[published_system(key)] = {
                    part: _stats(lines if part == "all" else [l for l in lines if l["kind"] == part], hard)
                    for part in PARTS
                }
        out[lang] = systems
    out["tools"] = tools_report(lists)
    return out


def report_all_json(report: dict) -> str:
    """Non-ASCII kept, default separators, the published key order (not sorted)."""
    return json.dumps(report, ensure_ascii=False, indent=2) + "\n"


def _langs(report: dict) -> list[str]:
    return [k for k in report if k != "tools"]


def results_tables(report: dict) -> str:
    """§8 `results-tables.md`: one row per (lang, system, kind) in report-all order."""
    hard = any(
        "n_recite_hard" in s for lang in _langs(report) for parts in report[lang].values() for s in parts.values()
    )
    columns = RESULTS_COLUMNS + (RESULTS_HARD_COLUMNS if hard else ())
    rows = [
        {"lang": lang, "system": system, "kind": kind, **s}
        for lang in _langs(report)
        for system, parts in report[lang].items()
        for kind, s in parts.items()
    ]
    return "\n".join(table_lines(headers(columns), ([c.cell(r) for c in columns] for r in rows))) + "\n"


def summary_order(name: str) -> tuple:
    """recite/recite, then closed, current, pit, agentic; within a mode the published models'
    order, then any other model alphabetically (§8)."""
    parsed = parse_system_key(our_key(name))
    if parsed.slug is None:  # recite first; our model-free systems after it (issue 16)
        return (0, parsed.order, "")
    rank = PUBLISHED_MODELS.index(parsed.slug) if parsed.slug in PUBLISHED_MODELS else len(PUBLISHED_MODELS)
    return (1 + parsed.order, rank, parsed.slug)


def summary(report: dict) -> str:
    """§8 `summary.md`: the headline, counts pooled over languages; date-sensitive bold."""
    langs = _langs(report)
    names = {name for lang in langs for name in report[lang] if name != "oracle/oracle"}
    rows = []
    for name in sorted(names, key=summary_order):
        stats = [report[lang][name]["all"] for lang in langs if name in report[lang]]
        total = lambda key: sum(s[key] for s in stats)  # noqa: E731, B023 (called within this iteration)
        n = total("n")
        if "n_recite_hard" in stats[0]:
            date_sensitive = f"**{_pct(_share(total('correct_recite_hard'), total('n_recite_hard')))}**"
            by_lang = " / ".join(
                _pct(report[lang][name]["all"]["share_correct_recite_hard"]) if name in report.get(lang, {}) else "–"
                for lang in SUMMARY_LANGS
            )
            easy = _pct(_share(total("correct_recite_easy"), total("n_recite_easy")))
        else:
            date_sensitive = by_lang = easy = "–"
        values = (
            name,
            n,
            _pct(_share(total("grounded_correct"), n)),
            _pct(_share(total("grounded_wrong_version"), n)),
            _pct(_share(total("ungrounded"), n)),
            date_sensitive,
            by_lang,
            easy,
            total("errors"),
        )
        rows.append(dict(zip(SUMMARY_HEADER, values, strict=True)))
    return "\n".join(table_lines(SUMMARY_HEADER, ([c.cell(r) for c in SUMMARY_COLUMNS] for r in rows))) + "\n"


def tools_table(tools: Mapping[str, dict]) -> str:
    """§5's tools table: the published header, shares as % .1f, mean calls .2f."""
    rows = tools_rows(tools)
    return "\n".join(table_lines(TOOLS_HEADER, ([c.cell(r) for c in TOOLS_COLUMNS] for r in rows))) + "\n"


def tools_rows(tools: Mapping[str, dict]) -> list[dict]:
    """The tools report as rows of TOOLS_COLUMNS (our report renders them too)."""
    return [{"system": system, **t} for system, t in tools.items()]


def write_published(scored: Mapping[str, Iterable[dict]], report_dir: Path | str) -> dict[str, Path]:
    """`report-all.json`, `results-tables.md`, `summary.md` in `report_dir`, each written atomically;
    no clock in any of them, so the same lines give the same bytes."""
    report = report_all(scored)
    files = {
        "report-all.json": report_all_json(report),
        "results-tables.md": results_tables(report),
        "summary.md": summary(report),
    }
    paths = {}
    for name, text in files.items():
        paths[name] = Path(report_dir) / name
        write_atomic(paths[name], text.encode("utf-8"))
    return paths
