"""The builder's own tables in the store (kept here, not in corpus/schema.py, because only the
builder writes them). Created on first use by `ensure_tables`; every write goes through
`Store.replace`, so a language's rows are replaced atomically and a re-run is idempotent."""

from __future__ import annotations

from chpit_assets.corpus.store import Store

BENCH_DDL = """
CREATE TABLE IF NOT EXISTS bench_eligible (   -- changes that passed B1-B12, before the caps
    lang               VARCHAR NOT NULL,
    act_id             BIGINT NOT NULL,
    e_id               VARCHAR NOT NULL,
    old_version_id     BIGINT NOT NULL,
    new_version_id     BIGINT NOT NULL,
    change_date        DATE NOT NULL,
    sr_number          VARCHAR NOT NULL,
    abbreviation       VARCHAR NOT NULL,
    article_number     VARCHAR NOT NULL,
    before_ok          BOOLEAN NOT NULL,       -- B12 per half
    after_ok           BOOLEAN NOT NULL,
    PRIMARY KEY (lang, act_id, e_id, new_version_id)
);

CREATE TABLE IF NOT EXISTS bench_item (        -- the build's items; `line` is the jsonl line as written
    lang                  VARCHAR NOT NULL,
    id                    VARCHAR NOT NULL,
    build                 VARCHAR NOT NULL,
    core                  BOOLEAN NOT NULL,
    act_id                BIGINT NOT NULL,
    e_id                  VARCHAR NOT NULL,
    as_of                 DATE NOT NULL,
    kind                  VARCHAR NOT NULL,
    gold_is_current       BOOLEAN NOT NULL,
    gold_version_id       BIGINT NOT NULL,
    distractor_version_id BIGINT NOT NULL,
    line                  VARCHAR NOT NULL,
    PRIMARY KEY (lang, id)
);

CREATE TABLE IF NOT EXISTS bench_stats (       -- per-language counts of one builder step, as JSON
    lang  VARCHAR NOT NULL,
    step  VARCHAR NOT NULL,                    -- 'eligible_changes' | 'bench_items'
    stats VARCHAR NOT NULL,
    PRIMARY KEY (lang, step)
);
"""


def ensure_tables(store: Store) -> None:
    with store.connect() as con:
        con.execute(BENCH_DDL)
