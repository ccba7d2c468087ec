"""Our report's sections (R4), each declared once (issue 25 item 6): title, columns, note. `render`
draws markdown and HTML from these; `build_report` puts each section's headers into the JSON."""

from __future__ import annotations

from .columns import Column, Table, fmt, fmt_ci, key_column, share_column, share_n_column
from .published import TOOLS_COLUMNS, tools_rows

HEADLINE_LANGS = ("de", "fr", "it")


def _by_lang(h: dict) -> str:
    pcts, cis = h["date_sensitive_correct_pct_by_lang"], h["ci"]["date_sensitive_correct_by_lang"]
    return " / ".join(fmt_ci(pcts[lang], cis[lang]) for lang in HEADLINE_LANGS)


def _cov(key: str) -> Column:
    header = "mean " + key.removesuffix("_coverage").replace("_", "-") + " cov."
    return Column(header, lambda r: "–" if r[f"mean_{key}"] is None else f"{r[f'mean_{key}']:.3f}")


def _mean_sd(prefix: str, header: str) -> Column:
    def cell(r: dict) -> str:
        mean, sd = r[f"{prefix}_mean"], r[f"{prefix}_sd"]
        return fmt(mean) if sd is None else f"{fmt(mean)} ± {sd:.1f}"

    return Column(header, cell)


def _p(r: dict) -> str:
    return "–" if r["p_value"] is None else f"{r['p_value']:.3g}"


def _diff(r: dict) -> str:
    if r["diff_pct"] is None:
        return "–"
    return f"{r['diff_pct']:+.1f} [{r['low']:+.1f}, {r['high']:+.1f}]"


INTERVALS_NOTE = (
    "Every share carries its 95% interval in brackets (bounds in `report.json` to 4 decimals). A share over items from distinct changes uses the "
    "Wilson score interval; where one change gives two or more items (rows pooled over kinds or languages) "
    "a cluster bootstrap by change (seeded), never narrower than Wilson. `report.json` names the method of "
    "each interval (`ci`) and describes both (`methods`)."
)

HEADLINE = Table(
    "headline",
    "Results",
    (
        key_column("system"),
        key_column("n"),
        share_column("correct %", "correct"),
        share_column("wrong version %", "wrong_version"),
        share_column("ungrounded %", "ungrounded"),
        share_column("date-sensitive: correct %", "date_sensitive_correct"),
        Column("de / fr / it", _by_lang),
        share_column("recite-easy: correct %", "recite_easy_correct"),
        key_column("errors"),
    ),
    note="Read the date-sensitive column, not the headline: it is the correct share on the items where reciting "
    "today's edition is wrong (recite not grounded_correct); de / fr / it split it by language. " + INTERVALS_NOTE,
)
DATE_SENSITIVE = Table(
    "date_sensitive",
    "Date-sensitive share of the items",
    (
        key_column("lang"),
        key_column("items"),
        key_column("recite known", "known"),
        key_column("date-sensitive", "date_sensitive"),
        share_column("date-sensitive %", "date_sensitive"),
    ),
    rows=lambda report: list(report["date_sensitive"].values()),
)
ROWS = Table(
    "rows",
    "By language, system and kind",
    (
        key_column("lang"),
        key_column("system"),
        key_column("kind"),
        key_column("n"),
        share_column("correct %", "correct"),
        share_column("wrong version %", "wrong_version"),
        share_column("ungrounded %", "ungrounded"),
        _cov("gold_coverage"),
        _cov("distractor_coverage"),
        _cov("distractor_all_coverage"),
        _cov("shared_coverage"),
        share_n_column("correct % (gold current)", "correct_gold_current", "n_gold_current"),
        share_n_column("correct % (gold superseded)", "correct_gold_superseded", "n_gold_superseded"),
        share_n_column("date-sensitive: correct %", "correct_date_sensitive", "n_date_sensitive"),
        key_column("errors"),
    ),
)
TOOLS = Table(
    "tools",
    "Tools (agentic)",
    (
        key_column("system"),
        key_column("lang"),
        key_column("n"),
        share_column("right date %", "right_date"),
        share_column("right act and article %", "right_act_article"),
        share_column("answered without a tool %", "no_tool"),
        key_column("tool calls", "tool_calls"),
    ),
)
ABSTENTION = Table(
    "abstention",
    "Cite or abstain (verified systems)",
    (
        key_column("system"),
        key_column("lang"),
        key_column("n"),
        share_column("abstained %", "abstained"),
        key_column("answered"),
        share_column("wrong version % of answered", "wrong_version_answered"),
        share_column("correct % of answered", "correct_answered"),
    ),
)
TOOLS_PUBLISHED = Table(
    "tools_published",
    "Tools, published shape (PROTOCOL §5)",
    TOOLS_COLUMNS,
    rows=lambda report: tools_rows(report["tools_published"]),
)
COMPARISONS = Table(
    "comparisons",
    "Paired comparisons",
    (
        key_column("A", "a"),
        key_column("B", "b"),
        key_column("items"),
        key_column("n"),
        key_column("A correct", "a_correct"),
        key_column("B correct", "b_correct"),
        Column("A - B, points [95% paired interval]", _diff),
        key_column("only A right", "a_only"),
        key_column("only B right", "b_only"),
        Column("exact McNemar p", _p),
        key_column("verdict"),
    ),
    note="Each system against recite on the date-sensitive items, and each pair of modes of one model on the items "
    "both answered, matched item by item. The interval is a cluster bootstrap by change of the difference, "
    "never narrower than Newcombe's square-and-add interval; the p-value McNemar's exact test on the items only "
    "one of the two got right. With fewer discordant items than an exact test needs, the verdict says so.",
    empty="Nothing to compare: no system beside recite, and no model run in two modes.",
)
BREAKDOWNS = Table(
    "breakdowns",
    "Breakdowns: kind, as_of year, article length",
    (
        key_column("by"),
        key_column("bin"),
        key_column("system"),
        key_column("n"),
        share_column("correct %", "correct"),
        share_n_column("date-sensitive: correct %", "correct_date_sensitive", "n_date_sensitive"),
    ),
    note="Pooled over languages. Article length is the gold text's; an article that is one paragraph of 1,000 "
    "characters or more is its own bin: the answer must reproduce it exactly, so it measures verbatim recall as "
    "much as date grounding (card, Known limits).",
)
CUTOFF = Table(
    "cutoff",
    "Training cutoff: date-sensitive items before and after it",
    (
        key_column("system"),
        key_column("cutoff"),
        key_column("split"),
        key_column("side"),
        key_column("n"),
        share_column("correct %", "correct"),
        share_column("wrong version %", "wrong_version"),
    ),
    note="Per model with a cutoff (`--cutoff`, in each line's receipt). Wrong version after the cutoff is staleness "
    "(the model recites the wording it was trained on); wrong version on or before it is recency bias (it recites "
    "a newer wording for an earlier date).",
    empty="No model system with a training cutoff (`run --cutoff YYYY-MM-DD`).",
)
REPEATS = Table(
    "repeats",
    "Repeats",
    (
        key_column("system"),
        key_column("repeats"),
        key_column("n"),
        _mean_sd("correct", "correct % (mean ± sd)"),
        _mean_sd("date_sensitive_correct", "date-sensitive: correct % (mean ± sd)"),
        Column("per repeat", lambda r: " / ".join(fmt(v) for v in r["correct_pct_by_repeat"])),
        share_column("agreement %", "agreement"),
    ),
    note="Every item asked `--repeats` times; agreement is the share of items given the same label in every "
    "repeat. Every other table, and the published files, read repeat 0 only.",
)
SECTIONS = (
    HEADLINE,
    DATE_SENSITIVE,
    ROWS,
    TOOLS,
    ABSTENTION,
    TOOLS_PUBLISHED,
    COMPARISONS,
    BREAKDOWNS,
    CUTOFF,
    REPEATS,
)
