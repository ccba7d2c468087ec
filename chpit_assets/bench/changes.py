"""`ch_act_change`: what changed, article by article, between consecutive parsed editions.

Per act and language, the PARSED editions (B10) are ordered by `date_applicability`
and each edition is compared with the one before it on the article key (e_id,
occurrence; Fedlex repeats eIds within an edition, see akn/parser.py): a key only in the
new edition is `added`, only in the old one `removed`, in both with a different
text (compared verbatim; B5's normalised comparison is the builder's business)
`modified`. Editions that never reached `parsed` are skipped over, so a pair can
span a missing edition (SR 170.512: 2018-11-26 -> 2023-09-01 over 2022-07-01).

Incremental: an act's rows depend only on its own parsed editions in the language
(which ones, their order, their articles). Ingest records in `content_sha256` a digest
of exactly what it stored from an edition's file, so (version_id, date_applicability,
content_sha256) of every parsed edition, plus the text of the query below, fingerprint
the act's rows: a re-issued file with the same wording (new sha256, same content)
recomputes nothing. A rebuild recomputes only the acts whose fingerprint changed (or
cannot be formed: an edition without content_sha256, as in stores written directly or
before the column), drops the rows of acts with no parsed edition left, and keeps the
rest. Rows and fingerprints are written in one transaction, and nothing else writes
ch_act_change, so the two never disagree.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import polars as pl

from chpit_assets.corpus.store import Store, registered, replace_rows, sync_rows

from .tables import ensure_tables

# Ties on date_applicability (two editions of one act and language on the same day) are
# broken by version_id so the pairing is still a pure function of the store. `_acts` holds
# the act_ids to compute (the acts whose fingerprint changed).
_CHANGES_SQL = """
WITH v AS (
    SELECT act_id, version_id, date_applicability,
           lag(version_id) OVER (PARTITION BY act_id ORDER BY date_applicability, version_id) AS prev_id
    FROM ch_act_version
    WHERE lang = $lang AND stage = 'parsed' AND act_id IN (SELECT act_id FROM _acts)
),
pairs AS (
    SELECT act_id, prev_id AS old_version_id, version_id AS new_version_id, date_applicability
    FROM v WHERE prev_id IS NOT NULL
),
o AS (SELECT p.*, a.e_id, a.occurrence, a.text FROM pairs p JOIN ch_act_article a ON a.version_id = p.old_version_id),
n AS (SELECT p.*, a.e_id, a.occurrence, a.text FROM pairs p JOIN ch_act_article a ON a.version_id = p.new_version_id)
SELECT
    coalesce(o.act_id, n.act_id)                         AS act_id,
    coalesce(o.e_id, n.e_id)                             AS e_id,
    coalesce(o.occurrence, n.occurrence)                 AS occurrence,
    $lang                                                AS lang,
    CASE WHEN o.e_id IS NULL THEN 'added'
         WHEN n.e_id IS NULL THEN 'removed'
         ELSE 'modified' END                             AS change_type,
    coalesce(o.old_version_id, n.old_version_id)         AS old_version_id,
    coalesce(o.new_version_id, n.new_version_id)         AS new_version_id,
    coalesce(o.date_applicability, n.date_applicability) AS date_applicability
FROM o FULL OUTER JOIN n
    ON o.new_version_id = n.new_version_id AND o.e_id = n.e_id AND o.occurrence = n.occurrence
WHERE o.e_id IS NULL OR n.e_id IS NULL OR o.text <> n.text
"""

# A change to the comparison itself must invalidate every stored fingerprint.
_RULES = hashlib.sha256(_CHANGES_SQL.encode()).hexdigest()[:16]

# One fingerprint per act with a parsed edition in the language; NULL when an edition lacks
# the content digest that would vouch for its articles being unchanged.
_FINGERPRINTS_SQL = """
SELECT act_id,
       CASE WHEN bool_and(content_sha256 IS NOT NULL) THEN
           sha256($rules || ':' || string_agg(
               concat_ws('|', version_id, date_applicability, content_sha256), ',' ORDER BY version_id))
       END AS fingerprint
FROM ch_act_version
WHERE lang = $lang AND stage = 'parsed'
GROUP BY act_id
"""

_ROWS_SQL = """
SELECT act_id, e_id, occurrence, lang, change_type, old_version_id, new_version_id, date_applicability
FROM ch_act_change WHERE lang = ?
ORDER BY act_id, date_applicability, new_version_id, e_id, occurrence
"""


@dataclass(frozen=True)
class ChangeBuild:
    changes: pl.DataFrame  # every ch_act_change row of the language, in a stable order
    acts: int  # acts with a parsed edition in the language
    acts_recomputed: int  # of those, the ones whose rows were computed in this build


def update_changes(store: Store, lang: str) -> ChangeBuild:
    """Bring the language's `ch_act_change` rows up to date, recomputing only changed acts."""
    with store.transaction() as con:
        ensure_tables(con)
        current = con.sql(_FINGERPRINTS_SQL, params={"lang": lang, "rules": _RULES}).pl()
        stored = con.sql(
            "SELECT act_id, fingerprint FROM bench_act_fingerprint WHERE lang = ? AND fingerprint IS NOT NULL",
            params=[lang],
        ).pl()
        kept = current.join(stored, on=["act_id", "fingerprint"], how="semi").select("act_id")
        todo = current.join(kept, on="act_id", how="anti").select("act_id")
        with registered(con, "_acts", todo):
            computed = con.sql(_CHANGES_SQL, params={"lang": lang}).pl()
        # Rows of every act not kept go: recomputed acts get theirs back, acts without a parsed
        # edition any more simply disappear.
        replace_rows(
            con,
            [
                (
                    "ch_act_change",
                    "lang = ? AND NOT list_contains(?, act_id)",
                    [lang, kept["act_id"].to_list()],
                    computed,
                ),
            ],
        )
        sync_rows(
            con,
            "bench_act_fingerprint",
            ["lang", "act_id"],
            "lang = ?",
            [lang],
            current.select(pl.lit(lang).alias("lang"), "act_id", "fingerprint"),
        )
        changes = con.sql(_ROWS_SQL, params=[lang]).pl()
    return ChangeBuild(changes, current.height, todo.height)


def build_changes(store: Store, lang: str) -> pl.DataFrame:
    """`update_changes` for callers that only want the language's rows."""
    return update_changes(store, lang).changes
