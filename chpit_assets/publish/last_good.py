"""Editions still served from their last good file (issue 15 point 3, the gate's side).

The gate does not block on them -- keeping the last good parse is the point -- but it says how
many there are and which, so a publication built partly from yesterday's files is visibly so.
"""

from __future__ import annotations

from chpit_assets.corpus.store import Store

# Assumption until the ingest records a failure beside a kept parse: an edition whose latest attempt
# failed has a stage other than 'parsed' (B10); if it still has articles, those are its last good parse.
_QUERY = """
SELECT v.lang, v.eli, v.stage, count(*) AS articles
FROM ch_act_version v JOIN ch_act_article a USING (version_id)
WHERE v.stage <> 'parsed'
GROUP BY v.lang, v.eli, v.stage
ORDER BY v.lang, v.eli
"""


def editions_on_last_good_file(store: Store) -> list[str]:
    """'<lang>: <edition ELI>: <failed stage>, <n> articles kept' per such edition (empty = none)."""
    if not store.path.exists():
        return []
    with store.connect(read_only=True) as con:
        rows = con.execute(_QUERY).fetchall()
    return [f"{lang}: {eli}: new file failed at {stage}, {n} articles of the last good file kept"
            for lang, eli, stage, n in rows]
