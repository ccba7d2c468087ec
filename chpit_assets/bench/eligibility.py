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
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import polars as pl

from chpit_assets.corpus.store import Store
from chpit_scorer import normalise, units

from .tables import ensure_tables

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
# is resolved by act_id, never by SR number alone (two acts can share one).
_CANDIDATES_SQL = """
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
    SELECT act_id, arg_min(abbr, (CASE source WHEN 'curated' THEN 0 ELSE 1 END, abbr)) AS abbr
    FROM ch_act_alias WHERE lang = $lang AND trim(abbr) <> '' GROUP BY act_id
)
SELECT
    c.*, a.sr_number, a.jurisdiction,
    CASE WHEN $lang = 'de' THEN nullif(trim(a.abbreviation), '') ELSE alias.abbr END AS abbreviation,
    ov.source AS old_source, nv.source AS new_source, ov.stage AS old_stage, nv.stage AS new_stage,
    ov.date_end_applicability AS old_end,
    oa.article_number AS old_number, na.article_number AS new_number,
    oa.text AS old_text, na.text AS new_text,
    -- Another e_id with the same number in either edition (own row counts once in each; a number
    -- that differs between the editions is ambiguous anyway, see _reason).
    coalesce(onum.n, 0) > 1 OR coalesce(nnum.n, 0) > 1 AS number_shared
FROM c
JOIN ch_act a USING (act_id)
JOIN ch_act_version ov ON ov.version_id = c.old_version_id
JOIN ch_act_version nv ON nv.version_id = c.new_version_id
JOIN ch_act_article oa ON oa.version_id = c.old_version_id AND oa.e_id = c.e_id
JOIN ch_act_article na ON na.version_id = c.new_version_id AND na.e_id = c.e_id
LEFT JOIN nums onum ON onum.version_id = c.old_version_id AND onum.article_number = na.article_number
LEFT JOIN nums nnum ON nnum.version_id = c.new_version_id AND nnum.article_number = na.article_number
LEFT JOIN alias ON alias.act_id = c.act_id
ORDER BY c.act_id, c.e_id, c.change_date, c.new_version_id
"""

ELIGIBLE_SCHEMA = {
    "lang": pl.String, "act_id": pl.Int64, "e_id": pl.String, "old_version_id": pl.Int64,
    "new_version_id": pl.Int64, "change_date": pl.Date, "sr_number": pl.String,
    "abbreviation": pl.String, "article_number": pl.String, "before_ok": pl.Boolean,
    "after_ok": pl.Boolean,
}


@dataclass
class Eligibility:
    lang: str
    sources: tuple[str, ...]
    changes_considered: int
    skips: dict[str, int]
    halves_dropped_no_discriminating_unit: int
    eligible: pl.DataFrame = field(repr=False)

    def stats(self) -> dict:
        return {
            "sources": list(self.sources),
            "changes_considered": self.changes_considered,
            "eligible": self.eligible.height,
            "skips": dict(self.skips),
            "halves_dropped_no_discriminating_unit": self.halves_dropped_no_discriminating_unit,
        }


def has_discriminating_unit(gold: str, other: str) -> bool:
    """B12: `gold` has a unit (S2, 25-char floor) not contained in the other's normalised text."""
    other_norm = normalise(other)
    return any(u not in other_norm for u in units(gold))


def _reason(row: dict, sources: tuple[str, ...]) -> str | None:
    """The first rule (module docstring order) the change fails, or None (B12 is per half, below)."""
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
    old_norm, new_norm = normalise(row["old_text"]), normalise(row["new_text"])
    if len(old_norm) < MIN_TEXT_LEN or len(new_norm) < MIN_TEXT_LEN or old_norm == new_norm:
        return "identical_or_short"
    return None


def evaluate(store: Store, lang: str, sources: tuple[str, ...] = DEFAULT_SOURCES) -> Eligibility:
    """Apply B1-B12 to the language's changes in `ch_act_change`."""
    sources = tuple(sorted(set(sources)))
    candidates = store.frame(_CANDIDATES_SQL, {"lang": lang})
    skips = dict.fromkeys(SKIP_REASONS, 0)
    halves_dropped = 0
    rows = []
    for row in candidates.iter_rows(named=True):
        reason = _reason(row, sources)
        if reason is None:
            # before: gold = old edition, distractor = new; after: the mirror (B13).
            before_ok = has_discriminating_unit(row["old_text"], row["new_text"])
            after_ok = has_discriminating_unit(row["new_text"], row["old_text"])
            if not (before_ok or after_ok):
                reason = "no_discriminating_unit"
            else:
                halves_dropped += (not before_ok) + (not after_ok)
                rows.append({
                    "lang": lang, "act_id": row["act_id"], "e_id": row["e_id"],
                    "old_version_id": row["old_version_id"], "new_version_id": row["new_version_id"],
                    "change_date": row["change_date"], "sr_number": row["sr_number"],
                    "abbreviation": row["abbreviation"], "article_number": row["new_number"],
                    "before_ok": before_ok, "after_ok": after_ok,
                })
                continue
        skips[reason] += 1
    return Eligibility(
        lang=lang,
        sources=sources,
        changes_considered=candidates.height,
        skips=skips,
        halves_dropped_no_discriminating_unit=halves_dropped,
        eligible=pl.DataFrame(rows, schema=ELIGIBLE_SCHEMA),
    )


def write_eligible(store: Store, result: Eligibility) -> None:
    """Replace the language's eligible set and its counts atomically."""
    ensure_tables(store)
    stats = pl.DataFrame(
        {"lang": [result.lang], "step": ["eligible_changes"], "stats": [json.dumps(result.stats(), sort_keys=True)]}
    )
    store.replace([
        ("bench_eligible", "lang = ?", [result.lang], result.eligible),
        ("bench_stats", "lang = ? AND step = 'eligible_changes'", [result.lang], stats),
    ])
