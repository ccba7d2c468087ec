"""`ch_act_change`: what changed, article by article, between consecutive parsed editions.

Per act and language, the PARSED editions (B10) are ordered by `date_applicability`
and each edition is compared with the one before it on `e_id`: an e_id only in the
new edition is `added`, only in the old one `removed`, in both with a different
text (compared verbatim; B5's normalised comparison is the builder's business)
`modified`. Editions that never reached `parsed` are skipped over, so a pair can
span a missing edition (SR 170.512: 2018-11-26 -> 2023-09-01 over 2022-07-01).
"""

from __future__ import annotations

import polars as pl

from chpit_assets.corpus.store import Store

# Ties on date_applicability (two editions of one act and language on the same day) are
# broken by version_id so the pairing is still a pure function of the store.
_CHANGES_SQL = """
WITH v AS (
    SELECT act_id, version_id, date_applicability,
           lag(version_id) OVER (PARTITION BY act_id ORDER BY date_applicability, version_id) AS prev_id
    FROM ch_act_version
    WHERE lang = $lang AND stage = 'parsed'
),
pairs AS (
    SELECT act_id, prev_id AS old_version_id, version_id AS new_version_id, date_applicability
    FROM v WHERE prev_id IS NOT NULL
),
o AS (SELECT p.*, a.e_id, a.text FROM pairs p JOIN ch_act_article a ON a.version_id = p.old_version_id),
n AS (SELECT p.*, a.e_id, a.text FROM pairs p JOIN ch_act_article a ON a.version_id = p.new_version_id)
SELECT
    coalesce(o.act_id, n.act_id)                         AS act_id,
    coalesce(o.e_id, n.e_id)                             AS e_id,
    $lang                                                AS lang,
    CASE WHEN o.e_id IS NULL THEN 'added'
         WHEN n.e_id IS NULL THEN 'removed'
         ELSE 'modified' END                             AS change_type,
    coalesce(o.old_version_id, n.old_version_id)         AS old_version_id,
    coalesce(o.new_version_id, n.new_version_id)         AS new_version_id,
    coalesce(o.date_applicability, n.date_applicability) AS date_applicability
FROM o FULL OUTER JOIN n ON o.new_version_id = n.new_version_id AND o.e_id = n.e_id
WHERE o.e_id IS NULL OR n.e_id IS NULL OR o.text <> n.text
ORDER BY act_id, date_applicability, new_version_id, e_id
"""


def compute_changes(store: Store, lang: str) -> pl.DataFrame:
    """The `ch_act_change` rows of one language, in a stable order."""
    return store.frame(_CHANGES_SQL, {"lang": lang})


def write_changes(store: Store, lang: str, changes: pl.DataFrame) -> None:
    """Replace the language's change rows atomically (idempotent per partition)."""
    store.replace([("ch_act_change", "lang = ?", [lang], changes)])


def build_changes(store: Store, lang: str) -> pl.DataFrame:
    changes = compute_changes(store, lang)
    write_changes(store, lang, changes)
    return changes
