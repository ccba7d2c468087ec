"""The full-text index over every parsed edition of a language: one SQLite FTS5 file.

One file per language (`{lang}.sqlite`), read by the search tool and written only here. It holds
every article of every parsed edition with its act (SR number, abbreviation in the language,
title), number, heading, text and the edition's validity interval, so a search can be limited to
the editions in force on a date.

Two FTS5 tables index the same articles (rowid = the article's row):
 * `words`: act abbreviation, title, article number, heading and text, folded (`query.fold`),
   tokenizer `unicode61 remove_diacritics 2`; BM25 weights per column in `WORD_WEIGHTS`;
 * `grams`: the character 5-grams of the long words of the heading and text, for German compounds
   and inflected forms that share no whole word with the question.
Both are contentless (`content=''`): the original text is in `article` once, and the folded
copies FTS5 would keep cost as much again. A deletion gives FTS5 the folded values back
(`_fts_values`, recomputed from `article`), as contentless tables require. `words_vocab` and
`grams_vocab` expose each term's document count, which the search uses to drop terms that are in
so many articles that they cost much and rank nothing.

Atomic: a build from scratch writes `{lang}.sqlite.tmp-<pid>` and renames it over the index. An
incremental build updates the current file in place, in one SQLite transaction (rollback journal):
it only deletes and inserts the articles of editions whose fingerprint (file sha256, parser
version, validity interval, act fields) changed. Readers open the file with SQLite's locking
(engine.py), so they see the index before the transaction or after it, never inside it. It used to
copy the file (305 MB a language at CH-PiT scale) and swap the copy in: the same SQL on the same
bytes, so the same bytes result (issue 27.2). An unchanged corpus leaves the file untouched.

Trusted for its bytes (issue 23 item 1): beside each index, `{lang}.sqlite.sha256` records the
digest of the file as built (`file_digest`: a sha256 over the sha256 of each 16 MiB chunk, hashed
two chunks at a time; a digest in another form, such as the plain sha256 older builds wrote, is
refused like a wrong one, so the index is rebuilt once). A build starts from the current file only
when it matches that digest or is unchanged since it was hashed (below); otherwise it rebuilds from
scratch and says why. A reader refuses a file that does not match (`verify`), naming it: an index
edited or damaged on disk is never searched. Killed at any point, an update leaves a file that is
trusted only if it is the old index or the new one:
 * inside the transaction (pages of it may be written already): SQLite's journal beside the file
   holds the old pages; the next build opens the file for writing first, which puts them back, so
   the file is again the bytes its digest names (`_roll_back_interrupted`). Until then a reader
   refuses it: the bytes differ from the digest, or SQLite will not read past a hot journal
   read-only.
 * after the commit, before the new digest is written: the digest is the old file's, so the file is
   refused, and the next build rebuilds it from scratch.
A build from scratch writes the digest before its rename (killed between the two, the old file is
refused), and first removes a journal left beside the path: it belongs to the file being replaced,
and SQLite would roll it back into the new one.

A build hashes the index once, not twice (issue 27.2: each pass reads 300 MB). Beside the digest,
`{lang}.sqlite.stat` records the file's (st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns) as
the digest found it (a build from scratch: as its rename left it, inode, size and mtime unchanged);
the next build skips its check of the digest when the file's signature is still that one (and the
stat file names the recorded digest), and hashes in full otherwise. A copy of the file is another
inode: restored from a backup (`cp -a`), it is hashed in full once. Sound for any change made through the file system: a write, a truncation or a file
renamed or copied over it changes the size, inode, mtime or ctime, and ctime cannot be set back
(utime sets it to now) without changing the clock, which takes root, who can rewrite the digest
as well. The signature is recorded only when no write during the hash can have kept the old
times: timestamps come from a clock that ticks every few milliseconds, so the hash starts only
once the file's last change is SETTLE_NS old (a write from then on gets a later mtime), and not
at all on a file system whose timestamps are whole milliseconds or come from a clock ahead of
ours (`_hash`). A build that had to hash in full records the signature when the file matched.
Not covered: bytes changed below the file system (a failing disk) keep the signature. Readers
(`verify`) still hash in full and refuse such a file, but a build would update it in place and
record its digest; the engine's reopen check (inode, mtime) makes the same trade for an open index.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import duckdb

from chpit_assets.corpus.schema import ALIAS_PREFERENCE
from chpit_assets.files import write_atomic

from .query import fold, grams

INDEX_VERSION = "3"  # bump when the layout or the folding changes: every index is rebuilt once

# BM25 column weights of `words`: a hit in the act's abbreviation or the article number names the
# article; a heading (marginal note) is a short summary of it; the title repeats for every article
# of the act and so weighs least; the text is long and noisy.
WORD_COLUMNS = ("abbreviation", "title", "article_number", "heading", "text")
WORD_WEIGHTS = (4.0, 0.5, 4.0, 2.0, 1.0)

_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE edition (
    version_id INTEGER PRIMARY KEY, act_id INTEGER NOT NULL, sr_number TEXT NOT NULL, abbreviation TEXT,
    title TEXT, date_applicability TEXT NOT NULL, date_end_applicability TEXT, fingerprint TEXT NOT NULL
);
CREATE TABLE article (
    id INTEGER PRIMARY KEY, version_id INTEGER NOT NULL, e_id TEXT NOT NULL, occurrence INTEGER NOT NULL,
    article_number TEXT, number_key TEXT, heading TEXT, text TEXT NOT NULL
);
CREATE INDEX article_version ON article (version_id);
CREATE INDEX article_number_key ON article (number_key);
CREATE INDEX edition_interval ON edition (date_applicability, date_end_applicability);
CREATE VIRTUAL TABLE words USING fts5(abbreviation, title, article_number, heading, text,
    content = '', tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE grams USING fts5(gram, content = '', tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE words_vocab USING fts5vocab(words, 'row');
CREATE VIRTUAL TABLE grams_vocab USING fts5vocab(grams, 'row');
"""

# Every parsed edition of the language with what the index shows of its act. The abbreviation is
# the one the question templates use (B7): German from ch_act, other languages their preferred alias.
_EDITIONS_SQL = f"""
SELECT v.version_id, v.act_id, a.sr_number,
       CASE WHEN $lang = 'de' THEN a.abbreviation ELSE (
           SELECT arg_min(abbr, ({ALIAS_PREFERENCE})) FROM ch_act_alias l WHERE l.act_id = v.act_id AND l.lang = $lang)
       END AS abbreviation,
       coalesce(v.title, '') AS title, CAST(v.date_applicability AS VARCHAR),
       CAST(v.date_end_applicability AS VARCHAR), coalesce(v.sha256, ''), coalesce(v.parser_version, '')
FROM ch_act_version v JOIN ch_act a USING (act_id)
WHERE v.lang = $lang AND v.stage = 'parsed' AND a.jurisdiction = 'CH'
ORDER BY v.version_id
"""

_ARTICLES_SQL = """
SELECT version_id, e_id, occurrence, article_number, heading, text FROM ch_act_article
WHERE version_id IN (SELECT unnest($ids)) ORDER BY version_id, e_id, occurrence
"""


class SearchIndexError(RuntimeError):
    """The index cannot be built or read; names the file."""


@dataclass(frozen=True)
class IndexBuild:
    path: Path
    editions: int
    articles: int
    editions_added: int
    editions_removed: int
    digest: str  # of every indexed edition's fingerprint: equal digests, equal index content
    distrusted: str | None = None  # why the current file was not built upon (rebuilt from scratch)


def number_key(article_number: str | None) -> str | None:
    """An article number as a citation is compared with it: "268a bis", "268a Bis" -> "268abis"."""
    return article_number.replace(" ", "").lower() if article_number else None


def index_path(search_dir: Path | str, lang: str) -> Path:
    return Path(search_dir) / f"{lang}.sqlite"


def digest_path(path: Path) -> Path:
    return path.with_name(f"{path.name}.sha256")


DIGEST_SCHEME = "sha256-chunks-16MiB"
DIGEST_CHUNK = 16 << 20


def file_digest(path: Path) -> str:
    """`path`'s digest as its build records it: `sha256-chunks-16MiB:` and the sha256 of the
    concatenated sha256 digests of its 16 MiB chunks, in order. Any change of a byte or of the
    length changes it, as a sha256 of the whole file would. Why chunks (issue 27.2): every build that
    changes an index and every reader that opens one hashes its 300 MB; one sha256 over the file
    takes 0.2-0.23 s on one core, and chunks hashed on two threads (pread and hashlib let go of
    the GIL) take 0.11-0.13 s."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = range(0, os.fstat(fd).st_size, DIGEST_CHUNK)
        with ThreadPoolExecutor(2) as pool:
            joined = b"".join(pool.map(lambda offset: _chunk_digest(fd, offset), chunks))
    finally:
        os.close(fd)
    return f"{DIGEST_SCHEME}:{hashlib.sha256(joined).hexdigest()}"


def _chunk_digest(fd: int, offset: int) -> bytes:
    h = hashlib.sha256()
    done = 0
    while done < DIGEST_CHUNK and (data := os.pread(fd, DIGEST_CHUNK - done, offset + done)):
        h.update(data)
        done += len(data)
    return h.digest()


def _recorded(path: Path) -> str:
    """The digest recorded beside `path` (FileNotFoundError when none is)."""
    return digest_path(path).read_text(encoding="ascii").strip()


def mismatch(path: Path, actual: str | None = None) -> str | None:
    """Why `path` is not the file its build recorded, or None when it is (`actual`: its digest, when
    already computed)."""
    try:
        recorded = _recorded(path)
    except FileNotFoundError:
        return f"no recorded digest beside {path} ({digest_path(path).name})"
    if not recorded.startswith(f"{DIGEST_SCHEME}:"):
        return f"the digest recorded beside {path} is not a {DIGEST_SCHEME} digest (an older build's, or edited)"
    actual = file_digest(path) if actual is None else actual
    if actual != recorded:
        return f"{path} has digest {actual}, its build recorded {recorded}: the file changed on disk"
    return None


def signature_path(path: Path) -> Path:
    """The file's signature as it was when its digest was computed: lets the next build skip a hash."""
    return path.with_name(f"{path.name}.stat")


SETTLE_NS = 20_000_000  # > the timestamp clock's tick (at most 10 ms on Linux, HZ >= 100)


def _signature(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _hash(path: Path) -> tuple[str, list[int] | None]:
    """`path`'s digest, and its signature when a later change of its bytes must change it (else None)."""
    first = os.stat(path)
    wait = max(first.st_mtime_ns, first.st_ctime_ns) + SETTLE_NS - time.time_ns()
    if 0 < wait <= SETTLE_NS:
        time.sleep(wait / 1e9)  # a few ms at most: a build hashes right after its last write
    now = time.time_ns()
    before = os.stat(path)
    last = max(before.st_mtime_ns, before.st_ctime_ns)
    digest = file_digest(path)
    after = os.stat(path)
    # A write after `before` gets a later mtime only if the clock ticked since the last change.
    settled = last % 1_000_000 != 0 and now - last > SETTLE_NS
    return digest, _signature(after) if settled and _signature(before) == _signature(after) else None


def _record(path: Path, digest: str, signature: list[int] | None) -> None:
    """Write the digest, then the signature that vouches for it: killed between the two, the stat
    file names the old digest and is not used."""
    write_atomic(digest_path(path), (digest + "\n").encode("ascii"))
    _record_signature(path, digest, signature)


def _record_signature(path: Path, digest: str, signature: list[int] | None) -> None:
    if signature is None:
        signature_path(path).unlink(missing_ok=True)
    else:
        # Not fsynced: lost or torn, it matches nothing and the next build hashes in full.
        write_atomic(signature_path(path), json.dumps({"sha256": digest, "stat": signature}).encode(), durable=False)


def _unchanged_since_hashed(path: Path) -> bool:
    """True when `path` has the signature recorded with its current digest: its bytes are the ones
    hashed. Anything unreadable or not matching is False (the caller hashes in full)."""
    try:
        recorded = _recorded(path)
        stat = json.loads(signature_path(path).read_bytes())
        return recorded.startswith(f"{DIGEST_SCHEME}:") and stat == {
            "sha256": recorded,
            "stat": _signature(os.stat(path)),
        }
    except (OSError, ValueError):
        return False


def build_mismatch(path: Path) -> str | None:
    """`mismatch` as a build asks it: no hash when the file is unchanged since its digest was
    computed; a full hash that matches records the signature, so the next build skips it."""
    if _unchanged_since_hashed(path):
        return None
    if not digest_path(path).exists():
        return mismatch(path)  # nothing to hash against: says which file is missing
    digest, signature = _hash(path)
    problem = mismatch(path, digest)
    if problem is None:
        _record_signature(path, digest, signature)
    return problem


def verify(path: Path, lang: str) -> None:
    """Raise SearchIndexError naming `path` unless it is the file its build recorded."""
    problem = mismatch(path)
    if problem is not None:
        raise SearchIndexError(f"search index refused: {problem}; materialise search_index[{lang}] to rebuild it")


def _fingerprint(row: tuple) -> str:
    # sha256 + parser version vouch for the articles (ingest rewrites them only when one changes);
    # the rest is what the index shows of the edition and its act.
    return hashlib.sha256("|".join("" if v is None else str(v) for v in (INDEX_VERSION, *row)).encode()).hexdigest()


def build_index(con: duckdb.DuckDBPyConnection, lang: str, search_dir: Path | str) -> IndexBuild:
    """Bring `{lang}.sqlite` up to date with the store behind `con`: in place in one transaction when
    the current file is trusted, else from scratch and swapped in atomically."""
    path = index_path(search_dir, lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    editions = {row[0]: (row, _fingerprint(row)) for row in con.execute(_EDITIONS_SQL, {"lang": lang}).fetchall()}
    digest = hashlib.sha256(",".join(fp for _, fp in sorted(editions.values())).encode()).hexdigest()[:16]
    stored: dict[int, str] = {}
    distrusted = None
    if path.exists():
        _roll_back_interrupted(path)
        distrusted = build_mismatch(path)
        if distrusted is None:
            version, stored, counts = _read_stored(path)
            if version != INDEX_VERSION:
                distrusted, stored = f"{path} is not an index of version {INDEX_VERSION}", {}
    fresh = not path.exists() or distrusted is not None
    stale = [v for v, fp in stored.items() if editions.get(v, (None, None))[1] != fp]
    new = sorted(v for v, (_, fp) in editions.items() if stored.get(v) != fp)
    if not fresh and not stale and not new:
        # Nothing changed: the file (and its bytes) stays as it is.
        return IndexBuild(path, counts[0], counts[1], 0, 0, digest, None)
    rows = [editions[v] for v in new]
    counts = _build_fresh(path, con, lang, rows) if fresh else _update_in_place(path, con, lang, stale, rows)
    return IndexBuild(path, counts[0], counts[1], len(new), len(stale), digest, distrusted)


def journal_path(path: Path) -> Path:
    """SQLite's rollback journal of `path`: present only while a transaction writes it, or after one was killed."""
    return path.with_name(f"{path.name}-journal")


def _roll_back_interrupted(path: Path) -> None:
    """Put back the old pages of an update killed inside its transaction: SQLite rolls a hot journal
    back when a connection that may write reads the file. A file SQLite cannot read is left as it
    is, for the trust check to refuse."""
    if not journal_path(path).exists():
        return
    try:
        db = sqlite3.connect(path)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            db.close()
    except sqlite3.DatabaseError:
        pass


def _update_in_place(
    path: Path, con: duckdb.DuckDBPyConnection, lang: str, stale: list[int], rows: list[tuple[tuple, str]]
) -> tuple[int, int]:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        _delete(db, stale, lang)
        _insert(db, con, lang, rows)
        db.execute("COMMIT")  # FTS5's automerge keeps the segments a nightly rebuild appends in check
        counts = db.execute(_COUNTS).fetchone()
    except BaseException:
        try:
            if db.in_transaction:
                db.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # the journal stays; the next build rolls it back
        db.close()
        raise
    db.close()
    # Killed before this write, the digest is still the old file's: the new file is refused and rebuilt.
    _record(path, *_hash(path))
    return counts


def _build_fresh(
    path: Path, con: duckdb.DuckDBPyConnection, lang: str, rows: list[tuple[tuple, str]]
) -> tuple[int, int]:
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    db = sqlite3.connect(tmp, isolation_level=None)
    try:
        db.executescript(_DDL)
        db.execute("INSERT INTO meta VALUES ('version', ?), ('lang', ?)", [INDEX_VERSION, lang])
        db.execute("BEGIN")
        _insert(db, con, lang, rows)
        db.execute("COMMIT")
        counts = db.execute(_COUNTS).fetchone()
    except BaseException:
        db.close()
        tmp.unlink(missing_ok=True)
        raise
    db.close()
    # A journal beside the path is the replaced file's: SQLite would roll it back into the new one.
    journal_path(path).unlink(missing_ok=True)
    # The digest first: killed between the two, the recorded digest is the new file's, so the
    # old file is refused and rebuilt, never trusted under a digest that is not its own.
    digest, signature = _hash(tmp)
    write_atomic(digest_path(path), (digest + "\n").encode("ascii"))
    os.replace(tmp, path)
    # The rename may set ctime; the rest (inode, size, mtime) must still be what was hashed.
    renamed = _signature(os.stat(path))
    _record_signature(path, digest, renamed if signature is not None and renamed[:4] == signature[:4] else None)
    return counts


_COUNTS = "SELECT (SELECT count(*) FROM edition), (SELECT count(*) FROM article)"


def _read_stored(path: Path) -> tuple[str | None, dict[int, str], tuple[int, int]]:
    """The current file's version, its editions' fingerprints and its counts, read without writing."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            version = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0]
            stored = dict(db.execute("SELECT version_id, fingerprint FROM edition").fetchall())
            return version, stored, db.execute(_COUNTS).fetchone()
        finally:
            db.close()
    except sqlite3.DatabaseError:  # a damaged or foreign file: rebuilt from scratch
        return None, {}, (0, 0)


_WORDS_INSERT = (
    "INSERT INTO words (rowid, abbreviation, title, article_number, heading, text) VALUES (?, ?, ?, ?, ?, ?)"
)
_GRAMS_INSERT = "INSERT INTO grams (rowid, gram) VALUES (?, ?)"
_WORDS_DELETE = (
    "INSERT INTO words (words, rowid, abbreviation, title, article_number, heading, text) "
    "VALUES ('delete', ?, ?, ?, ?, ?, ?)"
)
_GRAMS_DELETE = "INSERT INTO grams (grams, rowid, gram) VALUES ('delete', ?, ?)"


def _fts_values(
    article_id: int, abbreviation: str, title: str, number: str | None, heading: str | None, text: str, lang: str
) -> tuple[tuple, tuple]:
    """The rows of `words` and `grams` for one article: what is inserted, and what a deletion repeats."""
    folded_heading, folded_text = fold(heading or "", lang), fold(text, lang)
    return (
        (
            article_id,
            fold(abbreviation, lang),
            fold(title, lang),
            fold(number or "", lang),
            folded_heading,
            folded_text,
        ),
        (article_id, " ".join(grams(f"{folded_heading} {folded_text}"))),
    )


def _delete(db: sqlite3.Connection, version_ids: list[int], lang: str) -> None:
    for version_id in version_ids:
        rows = db.execute(
            "SELECT a.id, coalesce(e.abbreviation, ''), e.title, a.article_number, a.heading, a.text "
            "FROM article a JOIN edition e USING (version_id) WHERE a.version_id = ?",
            [version_id],
        ).fetchall()
        values = [
            _fts_values(article_id, abbreviation, title, number, heading, text, lang)
            for article_id, abbreviation, title, number, heading, text in rows
        ]
        db.executemany(_WORDS_DELETE, [w for w, _ in values])
        db.executemany(_GRAMS_DELETE, [g for _, g in values])
        db.execute("DELETE FROM article WHERE version_id = ?", [version_id])
        db.execute("DELETE FROM edition WHERE version_id = ?", [version_id])


def _insert(
    db: sqlite3.Connection, con: duckdb.DuckDBPyConnection, lang: str, editions: list[tuple[tuple, str]]
) -> None:
    if not editions:
        return
    by_version = {}
    for row, fingerprint in editions:
        version_id, act_id, sr_number, abbreviation, title, start, end = row[:7]
        db.execute(
            "INSERT INTO edition VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [version_id, act_id, sr_number, abbreviation, title, start, end, fingerprint],
        )
        by_version[version_id] = (abbreviation or "", title)
    next_id = (db.execute("SELECT coalesce(max(id), 0) FROM article").fetchone()[0]) + 1
    cursor = con.execute(_ARTICLES_SQL, {"ids": sorted(by_version)})
    while batch := cursor.fetchmany(2048):
        articles, values = [], []
        for version_id, e_id, occurrence, number, heading, text in batch:
            abbreviation, title = by_version[version_id]
            articles.append((next_id, version_id, e_id, occurrence, number, number_key(number), heading, text))
            values.append(_fts_values(next_id, abbreviation, title, number, heading, text, lang))
            next_id += 1
        db.executemany("INSERT INTO article VALUES (?, ?, ?, ?, ?, ?, ?, ?)", articles)
        db.executemany(_WORDS_INSERT, [w for w, _ in values])
        db.executemany(_GRAMS_INSERT, [g for _, g in values])
