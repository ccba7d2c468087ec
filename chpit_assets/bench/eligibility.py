"""Which modified changes can become items: rules B1-B12, every exclusion counted.

The population (`changes_considered`, as the card defines it) is every `modified`
change (B3) in the language on an act in force (B6). Each considered change lands
in exactly one bucket, so the buckets add up to `changes_considered`. The rules
are tested in this order, the first failing one naming the bucket:

 1. B8  `no_article_number`   the article number did not parse (tested first: NULL
                              would slip through the B9 duplicate-number test)
 2. B1  `not_federal`         `jurisdiction <> 'CH'`
 3. B2  `other_source`        an edition's `source` is not in the selected sources
 4. B10 `not_parsed`          an edition is not `stage = 'parsed'`
 5. B7  `no_abbreviation`     no abbreviation in the language
 6. B9  `ambiguous_article`   nested e_id, another e_id with the same number in
                              either edition, or the number differs between editions
 7. B11 `overlapping_editions` old end date not strictly before the new start
 8. B4/B5 `identical_or_short` a normalised text under 200 chars, or both equal
 9. B12 `no_discriminating_unit` neither half has a discriminating unit; a change
                              with one good half stays eligible with that half only
                              (counted in `halves_dropped_no_discriminating_unit`)

`not_federal`, `other_source` and `not_parsed` are enforced in SQL by the card's
builder and have no name there; they are zero on a federal, Fedlex-XML-only store
and are named here so that no exclusion is silent. B14's `capped` is counted by
`items.select_changes`.

Incremental: rules 1-7 are cheap and re-run on every change each build (they read the
act, its abbreviation and the editions' metadata, any of which can change without an
edition changing). Rules 8-9 normalise and split both texts and depend on nothing else,
so their outcome is kept per (md5 of the old text, md5 of the new text) in
`bench_text_check` and only pairs not seen in the previous build are computed. md5, not
sha256: the digest only tells unchanged texts apart (no adversary picks Fedlex's wording), and
hashing every considered change's two texts with sha256 was a third of the candidate query.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

import chpit_scorer.text
from chpit_assets.corpus.schema import ALIAS_PREFERENCE
from chpit_assets.corpus.store import Store, replace_rows, sync_rows
from chpit_scorer import normalise, units

from .tables import require_tables

MIN_TEXT_LEN = 200  # B4, on the normalised text

SKIP_REASONS: tuple[str, ...] = (
    "no_article_number",
    "not_federal",
    "other_source",
    "not_parsed",
    "no_abbreviation",
    "ambiguous_article",
    "overlapping_editions",
    "identical_or_short",
    "no_discriminating_unit",
)

DEFAULT_SOURCES: tuple[str, ...] = ("fedlex",)

# One row per considered change with everything B1-B12 look at. The abbreviation
# is resolved by act_id, never by SR number alone (two acts can share one). B4/B5/B12
# depend on the two article texts alone, so their outcome is looked up in
# bench_text_check by the texts' md5 (under the current TEXT_RULES), and the texts
# themselves are only fetched where it is not known yet.
_CANDIDATES_SQL = f"""
WITH c AS (
    SELECT ch.act_id, ch.e_id, ch.old_version_id, ch.new_version_id, ch.date_applicability AS change_date
    FROM ch_act_change ch JOIN ch_act a USING (act_id)
    WHERE ch.lang = $lang AND ch.change_type = 'modified' AND a.enforcement_status = 0
),
nums AS (
    SELECT version_id, article_number, count(*) AS n FROM ch_act_article
    WHERE article_number IS NOT NULL
      AND version_id IN (SELECT old_version_id FROM c UNION SELECT new_version_id FROM c)
    GROUP BY version_id, article_number
),
alias AS (
    SELECT act_id, arg_min(abbr, ({ALIAS_PREFERENCE})) AS abbr
    FROM ch_act_alias WHERE lang = $lang GROUP BY act_id
),
texts AS (
    SELECT c.*, oa.article_number AS old_number, na.article_number AS new_number,
           oa.text AS old_text, na.text AS new_text, md5(oa.text) AS old_sha, md5(na.text) AS new_sha
    FROM c
    JOIN ch_act_article oa ON oa.version_id = c.old_version_id AND oa.e_id = c.e_id
    JOIN ch_act_article na ON na.version_id = c.new_version_id AND na.e_id = c.e_id
)
SELECT
    t.act_id, t.e_id, t.old_version_id, t.new_version_id, t.change_date, a.sr_number, a.jurisdiction,
    CASE WHEN $lang = 'de' THEN nullif(trim(a.abbreviation), '') ELSE alias.abbr END AS abbreviation,
    ov.source AS old_source, nv.source AS new_source, ov.stage AS old_stage, nv.stage AS new_stage,
    ov.date_end_applicability AS old_end, t.old_number, t.new_number, t.old_sha, t.new_sha,
    k.identical_or_short AS known_identical_or_short, k.before_ok AS known_before_ok, k.after_ok AS known_after_ok,
    CASE WHEN k.lang IS NULL THEN t.old_text END AS old_text,
    CASE WHEN k.lang IS NULL THEN t.new_text END AS new_text,
    -- Another e_id with the same number in either edition (own row counts once in each; a number
    -- that differs between the editions is ambiguous anyway, see _reason).
    coalesce(onum.n, 0) > 1 OR coalesce(nnum.n, 0) > 1 AS number_shared
FROM texts t
JOIN ch_act a USING (act_id)
JOIN ch_act_version ov ON ov.version_id = t.old_version_id
JOIN ch_act_version nv ON nv.version_id = t.new_version_id
LEFT JOIN nums onum ON onum.version_id = t.old_version_id AND onum.article_number = t.new_number
LEFT JOIN nums nnum ON nnum.version_id = t.new_version_id AND nnum.article_number = t.new_number
LEFT JOIN alias ON alias.act_id = t.act_id
LEFT JOIN bench_text_check k
       ON k.lang = $lang AND k.rules = $rules AND k.old_sha = t.old_sha AND k.new_sha = t.new_sha
ORDER BY t.act_id, t.e_id, t.change_date, t.new_version_id
"""

ELIGIBLE_SCHEMA = {
    "lang": pl.String, "act_id": pl.Int64, "e_id": pl.String, "old_version_id": pl.Int64,
    "new_version_id": pl.Int64, "change_date": pl.Date, "sr_number": pl.String,
    "abbreviation": pl.String, "article_number": pl.String, "before_ok": pl.Boolean,
    "after_ok": pl.Boolean,
}

TEXT_CHECK_SCHEMA = {
    "lang": pl.String, "old_sha": pl.String, "new_sha": pl.String, "rules": pl.String,
    "identical_or_short": pl.Boolean, "before_ok": pl.Boolean, "after_ok": pl.Boolean,
}


@dataclass
class Eligibility:
    lang: str
    sources: tuple[str, ...]
    changes_considered: int
    skips: dict[str, int]
    halves_dropped_no_discriminating_unit: int
    eligible: pl.DataFrame = field(repr=False)
    # The B4/B5/B12 outcome of every distinct text pair this evaluation looked at (the next
    # build's cache), and how many of them were not in the previous build's and were computed.
    # Not in stats(): the counts a build reports must not depend on what was cached.
    text_checks: pl.DataFrame = field(repr=False)
    text_checks_computed: int = 0

    def stats(self) -> dict:
        return {
            "sources": list(self.sources),
            "changes_considered": self.changes_considered,
            "eligible": self.eligible.height,
            "skips": dict(self.skips),
            "halves_dropped_no_discriminating_unit": self.halves_dropped_no_discriminating_unit,
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
    before_ok: bool   # the old text discriminates (gold of the `before` half)
    after_ok: bool


def _text_outcome(old: str, new: str, texts: TextMemo) -> TextOutcome:
    old_norm, new_norm = texts.norm(old), texts.norm(new)
    if len(old_norm) < MIN_TEXT_LEN or len(new_norm) < MIN_TEXT_LEN or old_norm == new_norm:
        return TextOutcome(True, False, False)
    # before: gold = old edition, distractor = new; after: the mirror (B13).
    return TextOutcome(False, texts.discriminates(old, new), texts.discriminates(new, old))


# What a cached TextOutcome was computed with: the floor, the scorer's normalise/units (its
# text module) and the code above. Any change to them invalidates every bench_text_check row.
TEXT_RULES = hashlib.sha256(
    str(MIN_TEXT_LEN).encode()
    + Path(chpit_scorer.text.__file__).read_bytes()
    + inspect.getsource(TextMemo).encode()
    + inspect.getsource(_text_outcome).encode()
).hexdigest()[:16]


def _reason(row: dict, sources: tuple[str, ...]) -> str | None:
    """The first rule before B4 (module docstring order) the change fails, or None."""
    if row["old_number"] is None or row["new_number"] is None:
        return "no_article_number"
    if row["jurisdiction"] != "CH":
        return "not_federal"
    if row["old_source"] not in sources or row["new_source"] not in sources:
        return "other_source"
    if row["old_stage"] != "parsed" or row["new_stage"] != "parsed":
        return "not_parsed"
    if row["abbreviation"] is None:
        return "no_abbreviation"
    if "/" in row["e_id"] or row["number_shared"] or row["old_number"] != row["new_number"]:
        return "ambiguous_article"
    # date_end_applicability is inclusive: equal to the new start is already an overlap.
    if row["old_end"] is not None and row["old_end"] >= row["change_date"]:
        return "overlapping_editions"
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
    """Replace the language's eligible set, its counts and its text-check cache atomically."""
    with store.transaction() as con:
        _write(con, result)


def _evaluate(con: duckdb.DuckDBPyConnection, lang: str, sources: tuple[str, ...]) -> Eligibility:
    sources = tuple(sorted(set(sources)))
    require_tables(con, "eligible_changes")
    cursor = con.execute(_CANDIDATES_SQL, {"lang": lang, "rules": TEXT_RULES})
    columns = [d[0] for d in cursor.description]
    candidates = [dict(zip(columns, row)) for row in cursor.fetchall()]
    texts = TextMemo()
    skips = dict.fromkeys(SKIP_REASONS, 0)
    halves_dropped = computed = 0
    rows = []
    checks: dict[tuple[str, str], TextOutcome] = {}
    for row in candidates:
        reason = _reason(row, sources)
        if reason is None:
            key = (row["old_sha"], row["new_sha"])
            if key not in checks:
                if row["known_identical_or_short"] is None:
                    checks[key] = _text_outcome(row["old_text"], row["new_text"], texts)
                    computed += 1
                else:
                    checks[key] = TextOutcome(
                        row["known_identical_or_short"], row["known_before_ok"], row["known_after_ok"])
            outcome = checks[key]
            if outcome.identical_or_short:
                reason = "identical_or_short"
            elif not (outcome.before_ok or outcome.after_ok):
                reason = "no_discriminating_unit"
            else:
                halves_dropped += (not outcome.before_ok) + (not outcome.after_ok)
                rows.append({
                    "lang": lang, "act_id": row["act_id"], "e_id": row["e_id"],
                    "old_version_id": row["old_version_id"], "new_version_id": row["new_version_id"],
                    "change_date": row["change_date"], "sr_number": row["sr_number"],
                    "abbreviation": row["abbreviation"], "article_number": row["new_number"],
                    "before_ok": outcome.before_ok, "after_ok": outcome.after_ok,
                })
                continue
        skips[reason] += 1
    return Eligibility(
        lang=lang,
        sources=sources,
        changes_considered=len(candidates),
        skips=skips,
        halves_dropped_no_discriminating_unit=halves_dropped,
        eligible=pl.DataFrame(rows, schema=ELIGIBLE_SCHEMA),
        text_checks=pl.DataFrame(
            # Tuples in TEXT_CHECK_SCHEMA's order, not asdict(): the recursive copy cost more than the rest.
            [(lang, o, n, TEXT_RULES, c.identical_or_short, c.before_ok, c.after_ok) for (o, n), c in checks.items()],
            schema=TEXT_CHECK_SCHEMA, orient="row",
        ),
        text_checks_computed=computed,
    )


def _write(con: duckdb.DuckDBPyConnection, result: Eligibility) -> None:
    """The language's rows: eligible set, counts, and the text-check cache, which keeps exactly
    this build's pairs so that it never outgrows the change table. Only rows that differ are
    touched (`sync_rows`): one new edition changes a few of a language's thousands."""
    lang = result.lang
    stats = pl.DataFrame(
        {"lang": [lang], "step": ["eligible_changes"], "stats": [json.dumps(result.stats(), sort_keys=True)]}
    )
    sync_rows(con, "bench_eligible", ["lang", "act_id", "e_id", "new_version_id"], "lang = ?", [lang], result.eligible)
    sync_rows(con, "bench_text_check", ["lang", "old_sha", "new_sha"], "lang = ?", [lang], result.text_checks)
    replace_rows(con, [("bench_stats", "lang = ? AND step = 'eligible_changes'", [lang], stats)])
