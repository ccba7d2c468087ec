"""The DuckDB store: one file, the spec's tables, atomic per-partition writes.

DuckDB allows one writing process at a time, and no other process even reads meanwhile.
Writers (the assets in the `duckdb_writer` pool) hold one transaction for their partition's
whole computation, so a partition is replaced all at once or not at all; readers open short
read-only connections and wait, bounded, while a writer holds the file.

A process that runs several steps back to back (a build run with the in-process executor) can
keep the file open between them (`Store(..., hold=True)`, released by `release_held`): the steps
then share DuckDB's block cache and one checkpoint, instead of each re-reading what it needs
from a cold file and checkpointing on close. Other processes wait for the file as they wait for
any writer, for the rest of the run; so only a run that owns the writer pool for its whole
duration holds it (ChpitStore), and a step that waits on the network for long releases it first.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import duckdb
import polars as pl

from .schema import DDL, mark_schema, migrate_article_key, schema_current


class StoreError(RuntimeError):
    """A write to the store failed; the partition keeps its previous data."""


LOCK_POLL_S = 0.025
"""How often a process waiting for the file tries again during its first `LOCK_POLL_FOR_S` (a failed
open costs about 4 ms of CPU); after that, the wait doubles up to a second."""
LOCK_POLL_FOR_S = 1.0


# The connections kept open by `Store(..., hold=True)`, by resolved path: DuckDB refuses a second
# connection with another configuration (read-only) to a file this process has open, so every
# Store on that path goes through the held one while it is open.
_HELD: dict[str, duckdb.DuckDBPyConnection] = {}
_HELD_LOCK = threading.Lock()
# What `Store.memo` read through a held connection, by resolved path, and each path's count of
# writable connections ended: a value is kept only if no writable connection ended while it was read.
_MEMOS: dict[str, dict[Hashable, object]] = {}
_WRITES_ENDED: dict[str, int] = {}

T = TypeVar("T")


def release_held(path: Path | str) -> None:
    """Close the connection a `hold=True` store kept open on `path`, if any: its last checkpoint
    runs now, and other processes can open the file again (so what `Store.memo` kept is forgotten)."""
    key = str(Path(path).resolve())
    with _HELD_LOCK:
        con = _HELD.pop(key, None)
        _forget(key)
    if con is not None:
        con.close()


def _forget(key: str) -> None:
    """Drop the memos of the file `key` (the caller holds _HELD_LOCK)."""
    _MEMOS.pop(key, None)
    _WRITES_ENDED[key] = _WRITES_ENDED.get(key, 0) + 1


class Store:
    def __init__(self, path: Path | str, lock_timeout_s: float = 300.0, hold: bool = False):
        self.path = Path(path)
        self.lock_timeout_s = lock_timeout_s
        self.hold = hold  # keep the file open in this process after the first connection, until release_held

    def _open(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        """Open a connection, waiting (bounded) while another process holds the file.

        DuckDB lets one process write, and no other process even read meanwhile. Dagster's
        pool serialises the writing assets; readers elsewhere (a run's checks, the MCP server,
        a concurrent report) wait here instead of failing on the lock.
        """
        start = time.monotonic()
        deadline = start + self.lock_timeout_s
        delay = LOCK_POLL_S
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=read_only)
            except duckdb.IOException as exc:
                locked = "lock" in str(exc).lower()
                if not locked or time.monotonic() + delay > deadline:
                    # Issue 23.7: say what to do. The store is derived data: the content-addressed
                    # cache (verified by sha256) rebuilds it without one download.
                    remedy = (
                        "another process still holds it"
                        if locked
                        else f"delete {self.path} to rebuild it from the cache (data/cache/)"
                    )
                    raise StoreError(f"cannot open {self.path}: {exc}; {remedy}") from exc
                time.sleep(delay)
                # Short waits are the common ones (a report waiting for the language run that holds
                # the file to end, a few tenths of a second): polled closely; longer ones back off.
                if time.monotonic() - start > LOCK_POLL_FOR_S:
                    delay = min(delay * 2, 1.0)

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        key = str(self.path.resolve())
        if key in _HELD or (self.hold and (self.path.exists() or not read_only)):
            # A cursor of the held connection: the same database, a transaction of its own. Read-only
            # callers get it too (DuckDB allows no second configuration); they only read through it.
            with _HELD_LOCK:
                if key not in _HELD:
                    _HELD[key] = self._open_writable()
                cursor = _HELD[key].cursor()
            try:
                yield cursor
            finally:
                cursor.close()
                if not read_only:
                    with _HELD_LOCK:
                        _forget(key)
            return
        if read_only and not self.path.exists():
            # Reading an unbuilt store is reading an empty one: an in-memory database with the
            # schema, so a reader never creates the file (that is a writer's job, under the pool).
            con = duckdb.connect(":memory:")
            con.execute(DDL)
            try:
                yield con
            finally:
                con.close()
            return
        con = self._open_writable() if not read_only else self._open(read_only=True)
        try:
            yield con
        finally:
            con.close()

    def memo(self, name: Hashable, read: Callable[[], T]) -> T:
        """`read()`, a value read from this store, kept under `name` for as long as it stays true.

        Why: the steps of one language run read the same rows more than once (the checks, core_split
        and search_track each read the language's item lines: at CH-PiT scale 5,000 lines, 40-45 ms
        a read, 0.1 s of each language run of a rebuild; issue 27.2). While this process holds the
        file open (`hold=True`) no other process can open it, let alone write it, so a value read
        from it changes only when this process writes: the end of any writable connection forgets
        every value kept for the file (whether or not it wrote), and so does its release. A store that is
        not held is read every time: another process may write between two reads. Readers get the held
        connection writable (see `connect`); they must not write through a `read_only=True` connection, or a
        kept value would outlive the write."""
        key = str(self.path.resolve())
        with _HELD_LOCK:
            held = key in _HELD
            kept = _MEMOS.get(key, {})
            if held and name in kept:
                return kept[name]  # type: ignore[return-value]
            writes_before = _WRITES_ENDED.get(key, 0)
        value = read()
        with _HELD_LOCK:
            if held and key in _HELD and _WRITES_ENDED.get(key, 0) == writes_before:
                _MEMOS.setdefault(key, {})[name] = value
        return value

    def _open_writable(self) -> duckdb.DuckDBPyConnection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = self._open(read_only=False)
        _bring_up_to_date(con)
        return con

    def frame(self, sql: str, params: list | None = None) -> pl.DataFrame:
        """Run a read query and return its rows as a polars frame."""
        with self.connect(read_only=True) as con:
            return con.sql(sql, params=params or None).pl()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A writable connection inside one transaction: committed when the block ends, rolled back
        (nothing changed) when it raises. A failed partition keeps its previous good data."""
        with self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
                con.execute("COMMIT")
            except duckdb.Error as exc:
                con.execute("ROLLBACK")
                raise StoreError(f"write to {self.path} failed, nothing changed: {exc}") from exc
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def replace(self, writes: list[tuple[str, str, list, pl.DataFrame]]) -> None:
        """Atomically replace row sets: for each (table, where, params, frame), delete the rows
        matching `where` and insert `frame` (columns by name). All or nothing, and a re-run of
        the same inputs is idempotent."""
        with self.transaction() as con:
            replace_rows(con, writes)


def _bring_up_to_date(con: duckdb.DuckDBPyConnection) -> None:
    """Apply the DDL unless the store records that it already has it (in autocommit: a failed
    lookup, on a store from before chpit_schema, must not abort a transaction)."""
    try:
        current = schema_current(con, "corpus", DDL)
    except duckdb.CatalogException:
        current = False
    if not current:
        # One transaction: a store rebuilt halfway (a table renamed aside, not yet refilled) is never left.
        con.execute("BEGIN TRANSACTION")
        try:
            migrate_article_key(con)
            con.execute(DDL)
            mark_schema(con, "corpus", DDL)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise


def replace_rows(con: duckdb.DuckDBPyConnection, writes: list[tuple[str, str, list, pl.DataFrame]]) -> None:
    """`Store.replace` on a connection the caller already holds in a transaction (one connection
    per asset: opening the store and checkpointing on close cost more than most of the work)."""
    for table, where, params, frame in writes:
        con.execute(f"DELETE FROM {table} WHERE {where}", params)
        insert(con, table, frame)


def sync_rows(
    con: duckdb.DuckDBPyConnection, table: str, key: Sequence[str], where: str, params: list, frame: pl.DataFrame
) -> None:
    """Make the rows of `table` matching `where` exactly the rows of `frame` (every column of the
    table, unique by `key`), deleting and inserting only the rows that differ.

    The result is `replace_rows`'s, but a rebuild that changes a handful of a language's rows
    touches a handful: DuckDB rewrites at the checkpoint what a transaction deleted or inserted,
    and rewriting a whole language's unchanged rows cost more than computing them."""
    keys, cols = ", ".join(key), ", ".join(frame.columns)
    repeated = frame.filter(frame.select(key).is_duplicated())
    if repeated.height:
        # Delete-and-insert would fail on the key; the set difference below would quietly keep one.
        raise StoreError(
            f"write to {table} refused, nothing changed: {repeated.height} rows repeat a key "
            f"({keys}), e.g. {repeated.select(key).row(0)}"
        )
    with registered(con, "_incoming", frame):
        con.execute(
            f"DELETE FROM {table} WHERE {where} AND ({keys}) IN (SELECT {keys} FROM "
            f"(SELECT {cols} FROM {table} WHERE {where} EXCEPT SELECT {cols} FROM _incoming))",
            [*params, *params],
        )
        con.execute(
            f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _incoming "
            f"WHERE ({keys}) NOT IN (SELECT {keys} FROM {table} WHERE {where})",
            params,
        )


def insert(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> None:
    """Insert a frame's rows into `table`, matching columns by name."""
    if frame.height:
        cols = ", ".join(frame.columns)
        with registered(con, "_incoming", frame):
            con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _incoming")


@contextmanager
def registered(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> Iterator[None]:
    """`frame` visible to the block's queries as the view `name`, and gone afterwards. Not unregistered
    when the block fails: a failed statement has aborted the transaction, unregistering would raise
    over the real error, and the connection is closed with the rollback anyway."""
    con.register(name, frame)
    yield
    con.unregister(name)


def article_texts(con: duckdb.DuckDBPyConnection, keys: Iterable[tuple[int, str]]) -> dict[tuple[int, str], str]:
    """The ch_act_article texts of the (version_id, e_id) pairs in `keys` that exist. Joined on a
    frame of the pairs: fetching a few texts must not make DuckDB hash the whole article table.
    A repeated e_id answers with its first occurrence (the top-level one: the repeats sit in the
    final title, R2); the builder never asks for one, B9 excludes them as `ambiguous_article`."""
    wanted = pl.DataFrame(list(set(keys)), schema={"version_id": pl.Int64, "e_id": pl.String}, orient="row")
    if not wanted.height:
        return {}
    with registered(con, "_wanted", wanted):
        rows = con.execute(
            "SELECT a.version_id, a.e_id, a.text FROM ch_act_article a "
            "JOIN _wanted w USING (version_id, e_id) WHERE a.occurrence = 1"
        ).fetchall()
    return {(version_id, e_id): text for version_id, e_id, text in rows}
