"""DDL of the store. One DuckDB file holds every table of the spec's data model.

Ids are derived from Fedlex's own permanent identifiers, never from insertion
order, so a fresh clone and a nightly rebuild assign the same `act_id` and
`version_id` to the same act and edition. That matters because item ids (B17)
hash `act_id`, and published items are frozen (B18).
"""

from __future__ import annotations

import hashlib

import duckdb


def stable_id(*parts: str) -> int:
    """A positive 52-bit integer from the sha256 of `parts` joined by '|'.

    52 bits keep the id exact in JSON readers that parse numbers as doubles.
    """
    digest = hashlib.sha256("|".join(parts).encode("utf-8")).hexdigest()
    return int(digest[:13], 16)


def act_id_for(act_eli: str) -> int:
    """`ch_act.act_id` of the act whose ConsolidationAbstract ELI is `act_eli`."""
    return stable_id("act", act_eli)


def version_id_for(consolidation_eli: str, lang: str) -> int:
    """`ch_act_version.version_id` of one edition (consolidation ELI) in one language."""
    return stable_id("version", consolidation_eli, lang)


ALIAS_PREFERENCE = "CASE source WHEN 'curated' THEN 0 ELSE 1 END, abbr"
"""B7's choice among a language's aliases of one act, as an SQL sort key: `curated` before
`title_paren`, then the abbreviation itself so the choice is stable. The builder and the
point-in-time tools both pick by it."""


DDL = """
CREATE TABLE IF NOT EXISTS chpit_schema (         -- which DDL each part of the store was last brought to
    name   VARCHAR PRIMARY KEY,                   -- 'corpus' (this file) | 'bench' (bench/tables.py)
    digest VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS ch_act (
    act_id              BIGINT PRIMARY KEY,
    sr_number           VARCHAR NOT NULL,
    eli                 VARCHAR NOT NULL UNIQUE,
    jurisdiction        VARCHAR NOT NULL,          -- 'CH' (B1)
    abbreviation        VARCHAR,                   -- German abbreviation (B7)
    enforcement_status  INTEGER NOT NULL,          -- 0 = in force (B6)
    date_entry_in_force DATE,
    date_no_longer_in_force DATE,
    title_de VARCHAR, title_fr VARCHAR, title_it VARCHAR, title_en VARCHAR, title_rm VARCHAR
);

CREATE TABLE IF NOT EXISTS ch_act_alias (
    lang      VARCHAR NOT NULL,
    sr_number VARCHAR NOT NULL,
    abbr      VARCHAR NOT NULL CHECK (trim(abbr) <> ''),
    source    VARCHAR NOT NULL,                    -- 'curated' | 'title_paren' (B7)
    act_id    BIGINT NOT NULL,
    PRIMARY KEY (lang, sr_number, abbr, source, act_id)
);

CREATE TABLE IF NOT EXISTS ch_act_version (
    version_id             BIGINT PRIMARY KEY,
    act_id                 BIGINT NOT NULL,
    lang                   VARCHAR NOT NULL,
    date_applicability     DATE NOT NULL,
    date_end_applicability DATE,                   -- INCLUSIVE last day; NULL = current
    eli                    VARCHAR NOT NULL,       -- consolidation URI
    source                 VARCHAR NOT NULL,       -- 'fedlex' (XML); 'fedlex_pdf' reserved (B2)
    stage                  VARCHAR NOT NULL,       -- 'parsed' or the failure stage (B10)
    error                  VARCHAR,                -- why the stage failed, naming act/edition/url
    file_url               VARCHAR,
    sha256                 VARCHAR,
    parser_version         VARCHAR,                -- re-parse only when the file or the parser changed
    n_articles             INTEGER,
    title                  VARCHAR,                -- the file's own FRBRname in this language
    short_form             VARCHAR                 -- and its shortForm: ch_act / alias rows come from them
);

-- Stores built before these columns existed get them; PARSER_VERSION 2 re-parses their editions to fill
-- title and short_form, PARSER_VERSION 3 the rest.
ALTER TABLE ch_act_version ADD COLUMN IF NOT EXISTS title VARCHAR;
ALTER TABLE ch_act_version ADD COLUMN IF NOT EXISTS short_form VARCHAR;
-- Articles repeating an earlier article's e_id in the edition (occurrence > 1): a warning count, not an error.
ALTER TABLE ch_act_version ADD COLUMN IF NOT EXISTS n_repeated_eids INTEGER;
-- The file's FRBRManifestation/FRBRformat/@fedlex:generator: Fedlex re-issues a file with a new build.
ALTER TABLE ch_act_version ADD COLUMN IF NOT EXISTS generator VARCHAR;
-- sha256 of what ingest stored from the file (every article's key, number, heading, text; title, short form).
-- Downstream depends on this, not on the file's sha256: a re-issued file with the same wording changes nothing.
ALTER TABLE ch_act_version ADD COLUMN IF NOT EXISTS content_sha256 VARCHAR;
-- A re-issued file (same edition, new bytes): the sha256 of the file it replaced, and whether the stored
-- content stayed ('reissued') or changed ('corrected'). NULL while the edition has had one file.
ALTER TABLE ch_act_version ADD COLUMN IF NOT EXISTS reissued_from VARCHAR;
ALTER TABLE ch_act_version ADD COLUMN IF NOT EXISTS revision VARCHAR;
-- Last good data (issue 15 item 3): a newer file that failed, while the row and its articles keep the last
-- good parse (stage stays 'parsed'). NULL when the edition's current file is the one parsed.
ALTER TABLE ch_act_version ADD COLUMN IF NOT EXISTS failed_stage VARCHAR;
ALTER TABLE ch_act_version ADD COLUMN IF NOT EXISTS failed_error VARCHAR;
ALTER TABLE ch_act_version ADD COLUMN IF NOT EXISTS failed_url VARCHAR;

CREATE TABLE IF NOT EXISTS ch_act_article (
    version_id     BIGINT NOT NULL,
    -- The article key is (version_id, e_id, occurrence): Fedlex repeats eIds within an edition (SR 210's
    -- final title), e_id keeps its published value, occurrence counts 1, 2, ... in document order.
    e_id           VARCHAR NOT NULL,               -- as Fedlex publishes it; can repeat within an edition
    occurrence     INTEGER NOT NULL DEFAULT 1,     -- 1, 2, ... among the edition's articles with this e_id, document order
    article_number VARCHAR,                        -- NULL when it did not parse (B8)
    heading        VARCHAR,
    text           VARCHAR NOT NULL,               -- verbatim, one paragraph per line
    PRIMARY KEY (version_id, e_id, occurrence)
);

CREATE TABLE IF NOT EXISTS ch_act_change (
    act_id             BIGINT NOT NULL,
    e_id               VARCHAR NOT NULL,
    occurrence         INTEGER NOT NULL DEFAULT 1, -- the article key is (e_id, occurrence), as in ch_act_article
    lang               VARCHAR NOT NULL,
    change_type        VARCHAR NOT NULL,           -- added | removed | modified (B3)
    old_version_id     BIGINT NOT NULL,
    new_version_id     BIGINT NOT NULL,
    date_applicability DATE NOT NULL,              -- the new edition's
    PRIMARY KEY (act_id, e_id, occurrence, lang, new_version_id)
);
"""


# Tables whose primary key gained `occurrence`: a store written before keeps the old key, which
# ADD COLUMN cannot change, so they are rebuilt (`migrate_article_key`).
_KEYED_BY_OCCURRENCE = ("ch_act_article", "ch_act_change")


def migrate_article_key(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Bring tables written before the article key (e_id, occurrence) to it: each is renamed aside,
    re-created by `DDL`, refilled with occurrence 1 (the old key made every e_id unique in its
    edition, so 1 is exact) and the old copy dropped. Call inside a transaction, before `DDL`.
    Returns the tables rebuilt."""
    rebuilt = []
    for table in _KEYED_BY_OCCURRENCE:
        columns = [
            r[0]
            for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND table_schema = 'main' "
                "ORDER BY ordinal_position",
                [table],
            ).fetchall()
        ]
        if not columns or "occurrence" in columns:
            continue
        con.execute(f"ALTER TABLE {table} RENAME TO {table}_before_occurrence")
        rebuilt.append(table)
    if rebuilt:
        con.execute(DDL)
        for table in rebuilt:
            cols = ", ".join(
                r[0]
                for r in con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND table_schema = 'main'",
                    [f"{table}_before_occurrence"],
                ).fetchall()
            )
            con.execute(f"INSERT INTO {table} ({cols}, occurrence) SELECT {cols}, 1 FROM {table}_before_occurrence")
            con.execute(f"DROP TABLE {table}_before_occurrence")
    return rebuilt


def schema_current(con: duckdb.DuckDBPyConnection, name: str, ddl: str) -> bool:
    """Whether the store's `name` part was last brought up to `ddl` (see `mark_schema`). Running the
    DDL on every writable open cost 20-40 ms a step, more than some steps' work; this is one lookup.
    Only call it where chpit_schema exists: on a writable connection, after `Store.connect`."""
    # fetchall, not fetchone: DuckDB refuses the next statement while a result is unfinished.
    return con.execute("SELECT digest FROM chpit_schema WHERE name = ?", [name]).fetchall() == [(_digest(ddl),)]


def mark_schema(con: duckdb.DuckDBPyConnection, name: str, ddl: str) -> None:
    """Record that the store's `name` part now has `ddl` applied."""
    con.execute("INSERT OR REPLACE INTO chpit_schema VALUES (?, ?)", [name, _digest(ddl)])


def _digest(ddl: str) -> str:
    return hashlib.sha256(ddl.encode()).hexdigest()[:16]
