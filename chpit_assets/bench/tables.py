"""The builder's own tables in the store (kept here, not in corpus/schema.py, because only the
builder writes them).

They are created by act_changes, the builder's first step, inside its write transaction (it
holds the `duckdb_writer` pool). Every later step reads them on a read-only connection
(DuckDB cannot create a table there) and fails with `MissingTablesError` naming the step to
run first. The writing assets read and write in one transaction on one connection
(`chpit_assets.corpus.store.replace_rows`). Each language's rows are replaced atomically, so a re-run is idempotent.
"""

from __future__ import annotations

import re

import duckdb

from chpit_assets.corpus.schema import mark_schema, schema_current

BENCH_DDL = """
CREATE TABLE IF NOT EXISTS bench_eligible (   -- PROTOCOL §1.4 `eligible`: before the shuffle, caps, B11, B12
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

CREATE TABLE IF NOT EXISTS bench_item (        -- the build's items; their jsonl lines are in bench_line
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
    fingerprint           VARCHAR NOT NULL,    -- its line in bench_line
    PRIMARY KEY (lang, id)
);

-- Item lines by what they were rendered from (items._fingerprint), apart from bench_item: a rebuild
-- only adds the lines that changed, and deleting scattered rows of a table of long lines made
-- DuckDB rewrite the whole row group at the checkpoint. Lines no item uses any more are collected
-- once they outnumber the ones in use (items._collect_lines). No key constraint: only bench_items
-- writes here, adding fingerprints it does not find, and the index behind a key was rewritten at
-- every checkpoint (up to 0.9 s per language at CH-PiT scale).
CREATE TABLE IF NOT EXISTS bench_line (
    fingerprint VARCHAR NOT NULL,
    line        BLOB NOT NULL                  -- UTF-8, as written to the file: never decoded to be copied
);

CREATE TABLE IF NOT EXISTS bench_stats (       -- per-language counts of one builder step, as JSON
    lang  VARCHAR NOT NULL,
    step  VARCHAR NOT NULL,                    -- 'eligible_changes' | 'bench_items'
    stats VARCHAR NOT NULL,
    PRIMARY KEY (lang, step)
);

CREATE TABLE IF NOT EXISTS bench_act_fingerprint (  -- what ch_act_change was last computed from, per act
    lang        VARCHAR NOT NULL,
    act_id      BIGINT NOT NULL,
    fingerprint VARCHAR,                       -- NULL: not derivable (an edition without sha256), always recomputed
    PRIMARY KEY (lang, act_id)
);

CREATE TABLE IF NOT EXISTS bench_act_eligibility (  -- eligible_changes' outcome per act, and what from
    lang           VARCHAR NOT NULL,
    act_id         BIGINT NOT NULL,
    fingerprint    VARCHAR,                    -- eligibility._ACT_FINGERPRINTS_SQL; NULL: evaluated every build
    considered     BIGINT NOT NULL,            -- the act's changes in changes_considered (PROTOCOL §1.3)
    halves_dropped BIGINT NOT NULL,            -- halves of its eligible changes without a B12 unit
    skips          VARCHAR NOT NULL,           -- JSON {reason: changes} of the excluded ones, first appearance
    PRIMARY KEY (lang, act_id)
);
"""


class MissingTablesError(RuntimeError):
    """A reading step ran before the writing step that creates the builder's tables."""


_TABLES = tuple(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", BENCH_DDL))


# Items and their lines from an older layout (a line column in bench_item; text lines; a key on
# bench_line) are derived data: both tables are dropped and the next bench_items rebuilds them.
_OUTDATED_ITEMS_SQL = """
SELECT 1 FROM duckdb_columns() WHERE column_name = 'line'
   AND (table_name = 'bench_item' OR (table_name = 'bench_line' AND data_type <> 'BLOB'))
UNION ALL
SELECT 1 FROM duckdb_constraints() WHERE table_name = 'bench_line' AND constraint_type = 'PRIMARY KEY'
"""


# Tables an older version kept (the text-pair cache that per-act eligibility replaced).
_RETIRED_TABLES = ("bench_text_check",)


def ensure_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create or update the builder's tables on a writable connection (a writing step's
    transaction), unless the store records that they are current."""
    if schema_current(con, "bench", BENCH_DDL + _OUTDATED_ITEMS_SQL):
        return
    if con.execute(_OUTDATED_ITEMS_SQL).fetchall():
        con.execute("DROP TABLE IF EXISTS bench_item; DROP TABLE IF EXISTS bench_line")
    for name in _RETIRED_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {name}")
    con.execute(BENCH_DDL)
    mark_schema(con, "bench", BENCH_DDL + _OUTDATED_ITEMS_SQL)


def missing_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The builder's tables the store does not have yet (a read-only reader cannot create them)."""
    have = {name for (name,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    return [name for name in _TABLES if name not in have]


def require_tables(con: duckdb.DuckDBPyConnection, step: str) -> None:
    missing = missing_tables(con)
    if missing:
        raise MissingTablesError(f"{step} reads {', '.join(missing)}, which act_changes creates: materialise it first")
