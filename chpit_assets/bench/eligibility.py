"""Which modified changes can become items: the per-change rules of PROTOCOL §1, every exclusion counted.

The published builder (PROTOCOL §1.1-§1.4) works in two stages, and so does this module:

 * Filtered, not considered: the change is `modified` (B3) on an act in force (B6), federal (B1),
   both editions from the selected sources (B2) and parsed (B10), and the article row exists in
   both editions (same e_id and occurrence). The published SQL drops the rest without a count; we
   count them in our own stats (`filtered`: `not_federal`, `other_source`, `not_parsed`) so nothing
   is silent, but they are outside `changes_considered`, as published.
 * Counted by the same joins: B8 `no_article_number` (a number NULL in either edition), then B9
   `ambiguous_article` (e_id nested, e_id repeated in either edition, the number carried by another
   article row of either edition, or the number differs between the editions).
 * Per remaining row, in (act_id, change key) order: B7 `no_abbreviation`, then B4/B5
   `identical_or_short`, else `eligible`. `changes_considered` = rows + the two counts (PROTOCOL §1.3,
   which wins over the card's wider population).

B11 (`overlapping_editions`) and B12 (`no_discriminating_unit`) are decided in the item loop
(`items.select`), after the shuffle and the per-act cap, as published: an overlapping change or one
without a discriminating half is still `selected`. This module only precomputes B12 per half
(`before_ok`, `after_ok`), a function of the two texts.

Change key: the published ORDER BY `(act_id, change_id)` is, for us, (act_id, e_id, occurrence,
change_date, new_version_id) of ch_act_change. An eligible change never has a repeated e_id (B9), so
its occurrence is always 1 and bench_eligible is ordered by (act_id, e_id, change_date,
new_version_id).

Skip keys keep their first appearance in that order (per act in the kept outcome, merged in act_id
order), with a key only for a reason that occurred, as the published report shows them.

Incremental: every rule looks at one act's rows only (its ch_act_change rows, its act row
and chosen abbreviation, its editions' metadata and article texts), so the outcome is kept per
act in `bench_act_eligibility` with a fingerprint of all of that (`_ACT_FINGERPRINTS_SQL`),
together with the rules' own code and the selected sources. A rebuild evaluates only the acts
whose fingerprint changed, or cannot be formed (an edition without the content digest that
vouches for its articles), and keeps the rest's eligible rows and counts: after one
new edition that is one act of a thousand, where evaluating them all (reading and normalising
every modified article's two texts) was most of a rebuild's eligibility step.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

import chpit_scorer.text
from chpit_assets.corpus.schema import ALIAS_PREFERENCE
from chpit_assets.corpus.store import Store, article_texts, registered, replace_rows, sync_rows
from chpit_scorer import normalise, units

from .tables import require_tables

MIN_TEXT_LEN = 200  # B4, on the normalised text

# Counted inside `changes_considered`, in the order they are tested (PROTOCOL §1.1-§1.4).
SKIP_REASONS: tuple[str, ...] = ("no_article_number", "ambiguous_article", "no_abbreviation", "identical_or_short")
# Dropped before the published count (its SQL filters); ours, so that no exclusion is silent.
FILTERED_REASONS: tuple[str, ...] = ("not_federal", "other_source", "not_parsed")

DEFAULT_SOURCES: tuple[str, ...] = ("fedlex",)

_ALIAS_SQL = f"""
    SELECT act_id, arg_min(abbr, ({ALIAS_PREFERENCE})) AS abbr
    FROM ch_act_alias WHERE lang = $lang GROUP BY act_id
"""

# One row per considered change of the acts in `_acts` with everything B1-B11 look at. The
# abbreviation is resolved by act_id, never by SR number alone (two acts can share one). Texts
# (B4, B5, B12) are fetched afterwards for the changes that pass: `arts` narrows the article
# table to the acts' editions first, and leaving the texts out of the join keeps DuckDB from
# hashing every article's text to evaluate one act.
_CANDIDATES_SQL = f"""
WITH c AS (
    SELECT ch.act_id, ch.e_id, ch.occurrence, ch.old_version_id, ch.new_version_id, ch.date_applicability AS change_date
    FROM ch_act_change ch JOIN ch_act a USING (act_id)
    WHERE ch.lang = $lang AND ch.change_type = 'modified' AND a.enforcement_status = 0
      AND ch.act_id IN (SELECT act_id FROM _acts)
),
arts AS (
    SELECT version_id, e_id, occurrence, article_number FROM ch_act_article
    WHERE version_id IN (SELECT version_id FROM ch_act_version
                         WHERE lang = $lang AND act_id IN (SELECT act_id FROM _acts))
),
nums AS (
    SELECT version_id, article_number, count(*) AS n FROM arts
    WHERE article_number IS NOT NULL
    GROUP BY version_id, article_number
),
-- B9 (issue 13): Fedlex repeats an e_id inside one edition (the Civil Code's final title); such an
-- article cannot be named by its number, whichever occurrence it is.
eids AS (SELECT version_id, e_id, count(*) AS n FROM arts GROUP BY version_id, e_id),
alias AS ({_ALIAS_SQL})
SELECT
    c.act_id, c.e_id, c.old_version_id, c.new_version_id, c.change_date, a.sr_number, a.jurisdiction,
    CASE WHEN $lang = 'de' THEN nullif(trim(a.abbreviation), '') ELSE alias.abbr END AS abbreviation,
    ov.source AS old_source, nv.source AS new_source, ov.stage AS old_stage, nv.stage AS new_stage,
    oa.article_number AS old_number, na.article_number AS new_number,
    -- B9: another article row (any e_id or occurrence) with the same number in either edition (own
    -- row counts once in each; a number that differs between the editions is ambiguous anyway, see
    -- _reason), or the e_id itself repeated in either edition.
    coalesce(onum.n, 0) > 1 OR coalesce(nnum.n, 0) > 1 OR oe.n > 1 OR ne.n > 1 AS number_shared
FROM c
JOIN arts oa ON oa.version_id = c.old_version_id AND oa.e_id = c.e_id AND oa.occurrence = c.occurrence
JOIN arts na ON na.version_id = c.new_version_id AND na.e_id = c.e_id AND na.occurrence = c.occurrence
JOIN eids oe ON oe.version_id = c.old_version_id AND oe.e_id = c.e_id
JOIN eids ne ON ne.version_id = c.new_version_id AND ne.e_id = c.e_id
JOIN ch_act a USING (act_id)
JOIN ch_act_version ov ON ov.version_id = c.old_version_id
JOIN ch_act_version nv ON nv.version_id = c.new_version_id
LEFT JOIN nums onum ON onum.version_id = c.old_version_id AND onum.article_number = na.article_number
LEFT JOIN nums nnum ON nnum.version_id = c.new_version_id AND nnum.article_number = na.article_number
LEFT JOIN alias ON alias.act_id = c.act_id
ORDER BY c.act_id, c.e_id, c.occurrence, c.change_date, c.new_version_id
"""

# One fingerprint per act with a modified change in the language: everything `_CANDIDATES_SQL`
# reads about it. The parsed editions' content_sha256 stands for their articles (ingest's digest of
# exactly what it stored from the file, so a re-issued file with the same wording changes nothing
# here, issue 13; an edition that is not parsed has none, and its stage is in the list);
# bench_act_fingerprint stands
# for the act's ch_act_change rows (act_changes writes both together). NULL, and so evaluated
# every build, where an edition cannot vouch for its articles or the act's changes have no
# fingerprint. to_json keeps NULL apart from any string.
_ACT_FINGERPRINTS_SQL = f"""
WITH acts AS (
    SELECT DISTINCT act_id FROM ch_act_change WHERE lang = $lang AND change_type = 'modified'
),
editions AS (
    SELECT act_id, bool_and(stage <> 'parsed' OR content_sha256 IS NOT NULL) AS vouched,
           to_json(list([version_id::VARCHAR, date_applicability::VARCHAR, date_end_applicability::VARCHAR,
                         source, stage, content_sha256] ORDER BY version_id)) AS editions
    FROM ch_act_version WHERE lang = $lang AND act_id IN (SELECT act_id FROM acts)
    GROUP BY act_id
),
alias AS ({_ALIAS_SQL})
SELECT acts.act_id,
       CASE WHEN e.vouched AND f.fingerprint IS NOT NULL THEN
           md5(to_json([$rules::VARCHAR, a.sr_number, a.jurisdiction, a.enforcement_status::VARCHAR, a.abbreviation,
                        alias.abbr, f.fingerprint, e.editions::VARCHAR]))
       END AS fingerprint
FROM acts
JOIN ch_act a USING (act_id)
JOIN editions e USING (act_id)
LEFT JOIN alias USING (act_id)
LEFT JOIN bench_act_fingerprint f ON f.lang = $lang AND f.act_id = acts.act_id
ORDER BY acts.act_id
"""

ELIGIBLE_SCHEMA = {
    "lang": pl.String,
    "act_id": pl.Int64,
    "e_id": pl.String,
    "old_version_id": pl.Int64,
    "new_version_id": pl.Int64,
    "change_date": pl.Date,
    "sr_number": pl.String,
    "abbreviation": pl.String,
    "article_number": pl.String,
    "before_ok": pl.Boolean,
    "after_ok": pl.Boolean,
}

ACT_OUTCOME_SCHEMA = {
    "lang": pl.String,
    "act_id": pl.Int64,
    "fingerprint": pl.String,
    "considered": pl.Int64,
    "halves_dropped": pl.Int64,
    "skips": pl.String,
}


@dataclass
class Eligibility:
    lang: str
    sources: tuple[str, ...]
    changes_considered: int
    skips: dict[str, int]  # SKIP_REASONS that occurred, in first-appearance order
    filtered: dict[str, int]  # FILTERED_REASONS, all keys: outside changes_considered
    # Halves of eligible changes whose gold has no discriminating unit (B12); the item loop counts
    # the ones it meets as `no_discriminating_unit`.
    halves_without_discriminating_unit: int
    eligible: pl.DataFrame = field(repr=False)
    # Per act with a modified change: its fingerprint and counts (skips as JSON), the next build's
    # starting point, and how many acts this evaluation computed rather than kept. Not in stats():
    # the counts a build reports must not depend on what was kept.
    act_outcomes: pl.DataFrame = field(repr=False)
    acts_recomputed: int = 0

    def stats(self) -> dict:
        return {
            "sources": list(self.sources),
            "changes_considered": self.changes_considered,
            "eligible": self.eligible.height,
            "skips": dict(self.skips),
            "filtered": dict(self.filtered),
            "halves_without_discriminating_unit": self.halves_without_discriminating_unit,
        }


class TextMemo:
    """normalise and units (S1, S2) per distinct text, memoised for one evaluation or one check:
    every middle edition's article text is the new side of one change and the old side of the next,
    and B4, B5 and both halves of B12 (the two items of a change) look at the same two texts."""

    def __init__(self) -> None:
        self._norm: dict[str, str] = {}
        self._units: dict[str, list[str]] = {}

    def norm(self, text: str) -> str:
        if text not in self._norm:
            self._norm[text] = normalise(text)
        return self._norm[text]

    def units(self, text: str) -> list[str]:
        if text not in self._units:
            self._units[text] = units(text)
        return self._units[text]

    def discriminates(self, gold: str, other: str) -> bool:
        """B12: `gold` has a unit (S2, 25-char floor) not contained in the other's normalised text."""
        other_norm = self.norm(other)
        return any(u not in other_norm for u in self.units(gold))


@dataclass(frozen=True)
class TextOutcome:
    """B4/B5 and B12 of one (old text, new text) pair: all a change's eligibility needs from its texts."""

    identical_or_short: bool
    before_ok: bool  # the old text discriminates (gold of the `before` half)
    after_ok: bool


def _text_outcome(old: str, new: str, texts: TextMemo) -> TextOutcome:
    old_norm, new_norm = texts.norm(old), texts.norm(new)
    if len(old_norm) < MIN_TEXT_LEN or len(new_norm) < MIN_TEXT_LEN or old_norm == new_norm:
        return TextOutcome(True, False, False)
    # before: gold = old edition, distractor = new; after: the mirror (B13).
    return TextOutcome(False, texts.discriminates(old, new), texts.discriminates(new, old))


# What a kept outcome was computed with: the floor, the scorer's normalise/units (its text module),
# the queries and the code of this module. Any change to them re-evaluates every act.
RULES = hashlib.sha256(
    str(MIN_TEXT_LEN).encode() + Path(chpit_scorer.text.__file__).read_bytes() + Path(__file__).read_bytes()
).hexdigest()[:16]


def _reason(row: dict, sources: tuple[str, ...]) -> str | None:
    """The first rule before B4/B5 (module docstring order) the change fails, or None."""
    if row["jurisdiction"] != "CH":
        return "not_federal"
    if row["old_source"] not in sources or row["new_source"] not in sources:
        return "other_source"
    if row["old_stage"] != "parsed" or row["new_stage"] != "parsed":
        return "not_parsed"
    if row["old_number"] is None or row["new_number"] is None:
        return "no_article_number"
    if "/" in row["e_id"] or row["number_shared"] or row["old_number"] != row["new_number"]:
        return "ambiguous_article"
    # B7: de reads ch_act.abbreviation only, fr/it the first alias; an empty one is missing.
    if row["abbreviation"] is None:
        return "no_abbreviation"
    return None


def update_eligible(store: Store, lang: str, sources: tuple[str, ...] = DEFAULT_SOURCES) -> Eligibility:
    """The eligible_changes asset: evaluate and write in one transaction (it holds the writer pool)."""
    with store.transaction() as con:
        result = _evaluate(con, lang, sources)
        _write(con, result)
    return result


def evaluate(store: Store, lang: str, sources: tuple[str, ...] = DEFAULT_SOURCES) -> Eligibility:
    """Apply B1-B12 to the language's changes in `ch_act_change` (read-only)."""
    with store.connect(read_only=True) as con:
        return _evaluate(con, lang, sources)


def write_eligible(store: Store, result: Eligibility) -> None:
    """Replace the language's eligible set, its per-act outcomes and its counts atomically."""
    with store.transaction() as con:
        _write(con, result)


def _evaluate(con: duckdb.DuckDBPyConnection, lang: str, sources: tuple[str, ...]) -> Eligibility:
    sources = tuple(sorted(set(sources)))
    require_tables(con, "eligible_changes")
    current = con.sql(_ACT_FINGERPRINTS_SQL, params={"lang": lang, "rules": f"{RULES}:{','.join(sources)}"}).pl()
    stored = con.sql(
        "SELECT * FROM bench_act_eligibility WHERE lang = ? AND fingerprint IS NOT NULL", params=[lang]
    ).pl()
    kept = stored.join(current, on=["act_id", "fingerprint"], how="semi")
    todo = current.join(kept, on="act_id", how="anti")
    with registered(con, "_acts", todo.select("act_id")), registered(con, "_kept", kept.select("act_id")):
        cursor = con.execute(_CANDIDATES_SQL, {"lang": lang})
        columns = [d[0] for d in cursor.description]
        candidates = [dict(zip(columns, row)) for row in cursor.fetchall()]
        for row in candidates:
            row["reason"] = _reason(row, sources)
        texts = article_texts(
            con,
            (
                (row[f"{side}_version_id"], row["e_id"])
                for row in candidates
                if row["reason"] is None
                for side in ("old", "new")
            ),
        )
        kept_rows = con.sql(
            f"SELECT {', '.join(ELIGIBLE_SCHEMA)} FROM bench_eligible "
            "WHERE lang = ? AND act_id IN (SELECT act_id FROM _kept)",
            params=[lang],
        ).pl()
    computed = _outcomes(candidates, texts, lang, dict(todo.iter_rows()))
    outcomes = pl.concat([kept, computed.acts], how="vertical_relaxed").sort("act_id")
    # Merged in act_id order, each act's counts in its rows' order: the global first appearance.
    # B8/B9 are counted by the published SQL before any row is looked at, so they lead.
    counted: dict[str, int] = {}
    filtered = dict.fromkeys(FILTERED_REASONS, 0)
    for act_skips in outcomes["skips"]:
        for reason, n in json.loads(act_skips).items():
            if reason in filtered:
                filtered[reason] += n
            else:
                counted[reason] = counted.get(reason, 0) + n
    skips = {r: counted.pop(r) for r in SKIP_REASONS[:2] if r in counted} | counted
    return Eligibility(
        lang=lang,
        sources=sources,
        changes_considered=int(outcomes["considered"].sum()),
        skips=skips,
        filtered=filtered,
        halves_without_discriminating_unit=int(outcomes["halves_dropped"].sum()),
        eligible=pl.concat([kept_rows.cast(ELIGIBLE_SCHEMA), computed.eligible]).sort(
            ["act_id", "e_id", "change_date", "new_version_id"]
        ),
        act_outcomes=outcomes,
        acts_recomputed=todo.height,
    )


@dataclass(frozen=True)
class _Computed:
    acts: pl.DataFrame  # ACT_OUTCOME_SCHEMA, one row per act evaluated
    eligible: pl.DataFrame  # ELIGIBLE_SCHEMA


def _outcomes(
    candidates: list[dict], texts: dict[tuple[int, str], str], lang: str, fingerprints: dict[int, str | None]
) -> _Computed:
    """B4-B12 over the candidates of the acts in `fingerprints`, whose rules before B4 (`reason`)
    are applied and whose texts are in `texts` where they passed (both article rows exist: the
    candidates are joined on them). An act without candidates (not in force) still gets its row
    of zeros. Skips are counted in the candidates' order (insertion-ordered per act)."""
    memo = TextMemo()
    counts: dict[int, tuple[Counter[str], list[int]]] = {
        act_id: (Counter(), [0, 0]) for act_id in fingerprints
    }  # skips; considered, halves without unit
    rows = []
    for row in candidates:
        act_skips, tally = counts[row["act_id"]]
        reason = row["reason"]
        tally[0] += reason not in FILTERED_REASONS
        if reason is None:
            outcome = _text_outcome(
                texts[(row["old_version_id"], row["e_id"])], texts[(row["new_version_id"], row["e_id"])], memo
            )
            if outcome.identical_or_short:
                reason = "identical_or_short"
            else:
                tally[1] += (not outcome.before_ok) + (not outcome.after_ok)
                rows.append(
                    (
                        lang,
                        row["act_id"],
                        row["e_id"],
                        row["old_version_id"],
                        row["new_version_id"],
                        row["change_date"],
                        row["sr_number"],
                        row["abbreviation"],
                        row["new_number"],
                        outcome.before_ok,
                        outcome.after_ok,
                    )
                )
                continue
        act_skips[reason] += 1
    acts = [
        (lang, act_id, fingerprints[act_id], tally[0], tally[1], json.dumps(dict(act_skips)))
        for act_id, (act_skips, tally) in counts.items()
    ]
    return _Computed(
        pl.DataFrame(acts, schema=ACT_OUTCOME_SCHEMA, orient="row"),
        pl.DataFrame(rows, schema=ELIGIBLE_SCHEMA, orient="row"),
    )


def _write(con: duckdb.DuckDBPyConnection, result: Eligibility) -> None:
    """The language's rows: eligible set, per-act outcomes and counts. Only rows that differ are
    touched (`sync_rows`): one new edition changes a few of a language's thousands."""
    lang = result.lang
    stats = pl.DataFrame({"lang": [lang], "step": ["eligible_changes"], "stats": [json.dumps(result.stats())]})
    sync_rows(con, "bench_eligible", ["lang", "act_id", "e_id", "new_version_id"], "lang = ?", [lang], result.eligible)
    sync_rows(con, "bench_act_eligibility", ["lang", "act_id"], "lang = ?", [lang], result.act_outcomes)
    replace_rows(con, [("bench_stats", "lang = ? AND step = 'eligible_changes'", [lang], stats)])
