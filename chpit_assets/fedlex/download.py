"""Edition files, fetched once into a content-addressed cache and validated before they count.

Layout under `cache_dir`:

    sha256/<aa>/<sha256>.xml     the accepted files, named by their own digest
    index.sqlite                 one row per source URL: (url, sha256, consolidation, lang)

The index is an SQLite database in WAL mode: downloader threads and the language partitions
running at the same time in other processes each add their rows in a transaction of their own
(SQLite's locking serialises them; readers never wait), and a rebuild looks up every URL of a
language in one query. One small JSON file per URL (the layout before) cost one open and read
per edition, a third of a rebuild's fetch step; its entries are imported once.

Every file write goes to a temp file in the same directory and is renamed into place, content
first, index row second: an interrupted run leaves either nothing or a complete, validated
file (at worst one without its index row, fetched again next time), never a partial file
under a final name. A re-run finds each URL in the index and downloads nothing it already has.

Trust the bytes, not the index (issue 23 item 1): a cached file is read for a parse through
`read_verified`, which checks it against the digest it is named by. A file that
changed on disk (bit rot, an edit) is moved aside as `<sha256>.xml.corrupt` and is never parsed;
`EditionDownloader.refetch` then fetches the edition again (and validates it like any download),
and where that fails the edition fails, naming the file. An index that is not a readable SQLite
database is moved aside as `index.sqlite.corrupt` and rebuilt from the content files: each file's
digest is checked and its own identity (consolidation, language) read, and a catalog edition
whose URL has no row finds its file by that identity (`EditionCache.recovered`).

A file is accepted only if it parses as XML with root <akomaNtoso>, is a
consolidation, and its own SR number, edition date and language are the ones the
catalog promised (`chpit_assets.akn.identity`), and, where the catalog knows a
sha256 (the sample does), the digest matches. Fedlex answers a bad filestore
path with HTTP 200 and an HTML page; that fails the XML parse.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit
from urllib.request import url2pathname

import httpx

from ..akn.errors import AknError
from ..akn.identity import check_identity, parse_xml, read_identity
from ..files import write_atomic
from ..retry import RetryPolicy
from .catalog import Catalog, CatalogAct, CatalogEdition, CatalogError, EditionRow, edition_from_row, edition_row
from .http import (
    FedlexHttpError,
    FedlexHttpUser,
    Sleep,
    request_with_retry,
)

log = logging.getLogger(__name__)

Stage = Literal["downloaded", "cached", "no_file", "download", "validate"]
ACCEPTED: frozenset[str] = frozenset({"downloaded", "cached"})


@dataclass(frozen=True)
class DownloadResult:
    edition: CatalogEdition
    file: str | None  # the cached file, when accepted
    sha256: str | None  # its digest, when accepted
    stage: Stage  # downloaded | cached (accepted), no_file, or the failing stage
    error: str | None = None  # names act, edition, language and url

    @property
    def ok(self) -> bool:
        return self.stage in ACCEPTED

    @property
    def path(self) -> Path | None:
        # Made on demand: a rebuild finds thousands of editions cached and opens a handful, and
        # building a Path for each was a third of its look-up.
        return Path(self.file) if self.file is not None else None

    def __reduce__(
        self,
    ) -> tuple[Callable[..., DownloadResult], tuple[EditionRow, str | None, str | None, Stage, str | None]]:
        # Pickled with the edition as a row of plain values: every language run pickles its 4,280
        # results for the runs that would load them from disk (the handover IO manager), and a
        # dataclass state for each result and each edition made that 15-17 ms, not 8-9 (issue 27.2).
        return _download_result, (edition_row(self.edition), self.file, self.sha256, self.stage, self.error)


def _download_result(
    edition: EditionRow, file: str | None, sha256: str | None, stage: Stage, error: str | None
) -> DownloadResult:
    """The result `DownloadResult.__reduce__` pickled."""
    return DownloadResult(edition_from_row(edition), file, sha256, stage, error)


class CacheCorrupt(ValueError):
    """A cached file whose bytes no longer match the digest it was stored under (issue 23 item 1)."""

    stage = "cache"

    def __init__(self, path: str, expected: str, actual: str):
        self.path = path
        super().__init__(
            f"cached file {path}: sha256 is {actual}, it was stored as {expected}; the file changed on disk "
            f"and was moved aside to {path}.corrupt, so the next fetch of the edition downloads it again"
        )


def read_verified(path: str | Path, sha256: str) -> bytes:
    """The bytes of a cached file, checked against the digest it was stored under. A mismatch
    moves the file aside (so no later look-up finds it) and raises CacheCorrupt naming it."""
    data = Path(path).read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        os.replace(path, f"{path}.corrupt")
        log.warning("cached file %s changed on disk (sha256 %s, stored as %s): moved aside", path, actual, sha256)
        raise CacheCorrupt(str(path), sha256, actual)
    return data


class _Rejected(Exception):
    """One edition failed at `stage`; turned into a DownloadResult, never raised to the caller."""

    def __init__(self, stage: Stage, message: str):
        self.stage = stage
        super().__init__(message)


@dataclass(frozen=True)
class IndexEntry:
    url: str
    sha256: str
    consolidation: str
    lang: str


class EditionCache:
    """The content-addressed store and its URL index (layout in the module doc)."""

    TEMP_STALE_AFTER = 3600.0  # a temp file older than this belongs to a run that died
    BATCH = 256  # index rows per transaction; an interrupted run refetches at most these

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        # Plain strings on the look-up path: pathlib's joins were most of a cached run's time.
        self._root = str(self.root)
        self._index = self.root / "index.sqlite"
        self._pending: list[tuple[str, str, str, str]] = []
        self._pending_lock = threading.Lock()
        self._checked = False  # the index passed quick_check in this process

    def content_file(self, sha256: str) -> str:
        return f"{self._root}/sha256/{sha256[:2]}/{sha256}.xml"

    def content_path(self, sha256: str) -> Path:
        return Path(self.content_file(sha256))

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection of its own per call (threads and processes share the file, not a connection)."""
        try:
            con = self._open()
        except sqlite3.DatabaseError as exc:  # "file is not a database", a torn header, ...
            self._set_aside_index(exc)
            con = self._open()
        try:
            yield con
            con.commit()
        finally:
            con.close()

    _SCHEMA = (
        "CREATE TABLE IF NOT EXISTS entry (url TEXT PRIMARY KEY, sha256 TEXT NOT NULL, "
        "consolidation TEXT NOT NULL, lang TEXT NOT NULL)",
        # Filled only by a rebuild: the content files by their own identity, for editions without a row.
        "CREATE TABLE IF NOT EXISTS recovered (consolidation TEXT NOT NULL, lang TEXT NOT NULL, "
        "sha256 TEXT NOT NULL, PRIMARY KEY (consolidation, lang, sha256))",
    )

    def _open(self) -> sqlite3.Connection:
        new = not self._index.exists()
        con = sqlite3.connect(self._index, timeout=60.0)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            # WAL with NORMAL never corrupts; a row lost to a power cut only means one more fetch.
            con.execute("PRAGMA synchronous=NORMAL")
            for statement in self._SCHEMA:
                con.execute(statement)
            if not self._checked:  # once per cache: a damaged page is found here, not mid-run
                problem = con.execute("PRAGMA quick_check").fetchone()[0]
                if problem != "ok":
                    raise sqlite3.DatabaseError(f"quick_check: {problem}")
                self._checked = True
            if new:
                self._import_json_index(con)
                con.commit()
        except BaseException:
            con.close()
            raise
        return con

    def _set_aside_index(self, exc: Exception) -> None:
        """Move an unreadable index aside and rebuild it from the content files."""
        with self._pending_lock:
            aside = Path(f"{self._index}.corrupt")
            if self._index.exists():
                log.warning(
                    "cache index %s is unreadable (%s): moved aside to %s, rebuilt from the files",
                    self._index,
                    exc,
                    aside,
                )
                for suffix in ("", "-wal", "-shm"):
                    try:
                        os.replace(f"{self._index}{suffix}", f"{aside}{suffix}")
                    except FileNotFoundError:  # no WAL, or another process moved it first
                        pass
            con = self._open()
            try:
                con.executemany("INSERT OR IGNORE INTO recovered VALUES (?, ?, ?)", self._identities())
                con.commit()
            finally:
                con.close()

    def _identities(self) -> Iterator[tuple[str, str, str]]:
        """(consolidation, lang, sha256) of every content file whose bytes match its name."""
        for folder, _, names in os.walk(Path(self._root, "sha256")):
            for name in sorted(names):
                if not name.endswith(".xml") or name.startswith("."):
                    continue
                path, sha256 = os.path.join(folder, name), name.removesuffix(".xml")
                try:
                    data = read_verified(path, sha256)
                    identity = read_identity(parse_xml(data, path), path)
                except (OSError, CacheCorrupt, AknError) as exc:
                    log.warning("cache rebuild: %s skipped: %s", path, exc)
                    continue
                yield identity.consolidation, identity.lang, sha256

    def recovered(self, editions: Iterable[CatalogEdition]) -> dict[tuple[str, str], str]:
        """{(consolidation, lang): sha256} of the rebuilt index for these editions, where one file
        is there (two files claiming one edition are ambiguous: fetched again)."""
        wanted = {(e.consolidation, e.lang) for e in editions}
        if not wanted:
            return {}
        with self._connect() as con:
            rows = con.execute("SELECT consolidation, lang, sha256 FROM recovered").fetchall()
        found: dict[tuple[str, str], list[str]] = {}
        for cons, lang, sha in rows:
            if (cons, lang) in wanted and os.path.isfile(self.content_file(sha)):
                found.setdefault((cons, lang), []).append(sha)
        return {key: shas[0] for key, shas in found.items() if len(shas) == 1}

    def _import_json_index(self, con: sqlite3.Connection) -> None:
        """Rows for the entries of the earlier layout (index/<bb>/<sha256(url)>.json), once."""
        rows = []
        for path in (self.root / "index").rglob("*.json"):
            try:
                raw = json.loads(path.read_bytes())
                rows.append((raw["url"], raw["sha256"], raw["consolidation"], raw["lang"]))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # unreadable: that URL is fetched again
        con.executemany("INSERT OR REPLACE INTO entry VALUES (?, ?, ?, ?)", rows)

    def lookup_many(self, urls: Iterable[str], langs: Iterable[str] | None = None) -> dict[str, IndexEntry]:
        """The entries among `urls` whose content file is present; only entries in `langs`, when
        given (a language's editions need not read the other languages' rows)."""
        wanted = set(urls)
        query, params = "SELECT url, sha256, consolidation, lang FROM entry", []
        if langs is not None:
            params = sorted(set(langs))
            query += f" WHERE lang IN ({', '.join('?' * len(params))})"
        with self._connect() as con:
            rows = con.execute(query, params).fetchall()
        return {
            url: IndexEntry(url, sha, cons, lang)
            for url, sha, cons, lang in rows
            if url in wanted and os.path.isfile(self.content_file(sha))
        }

    def put(self, url: str, data: bytes, sha256: str, edition: CatalogEdition) -> Path:
        """Store an accepted file, then its index row. Rows are written in batches (`flush`): a
        transaction per file made a full fetch a fifth slower."""
        path = self.content_path(sha256)
        if not path.is_file():  # same bytes from another URL: already stored
            write_atomic(path, data)
        self.remember(url, sha256, edition)
        return path

    def remember(self, url: str, sha256: str, edition: CatalogEdition) -> None:
        """Queue the index row of a file that is stored (written by the next `flush`)."""
        with self._pending_lock:
            self._pending.append((url, sha256, edition.consolidation, edition.lang))
            full = len(self._pending) >= self.BATCH
        if full:
            self.flush()

    def flush(self) -> None:
        """Write the index rows of the files stored since the last flush (one transaction)."""
        with self._pending_lock:
            rows, self._pending = self._pending, []
        if rows:
            with self._connect() as con:
                con.executemany("INSERT OR REPLACE INTO entry VALUES (?, ?, ?, ?)", rows)

    def temp_files(self) -> list[Path]:
        # os.walk, not Path.rglob: this runs on every fetch with something to download, over
        # one folder per hash prefix, and rglob took twice as long.
        return sorted(
            Path(folder, name)
            for folder, _, names in os.walk(self._root)
            for name in names
            if name.startswith(".") and name.endswith(".tmp")
        )

    def sweep_stale_temp(self) -> None:
        """Delete the temp files older than TEMP_STALE_AFTER, at most once per that interval: the walk
        covers the whole cache (12,000 files at CH-PiT scale), and a leftover is never read, so one
        that waits up to twice the interval costs nothing but its disk space."""
        mark = self.root / "last-sweep"
        now = time.time()
        try:
            if now - mark.stat().st_mtime < self.TEMP_STALE_AFTER:
                return
        except FileNotFoundError:
            pass
        # Only old ones: a young temp file may be another process writing right now.
        cutoff = now - self.TEMP_STALE_AFTER
        for tmp in self.temp_files():
            try:
                if tmp.stat().st_mtime < cutoff:
                    tmp.unlink()
            except OSError:
                pass
        mark.touch()


class EditionDownloader(FedlexHttpUser):
    """Fetches, validates and caches edition files; one bad edition never stops the batch."""

    def __init__(
        self,
        cache_dir: Path,
        *,
        http: httpx.Client | None = None,
        timeout: float = 60.0,
        concurrency: int = 4,
        retry: RetryPolicy = RetryPolicy(),
        sleep: Sleep = time.sleep,
        progress: Callable[[int, int], None] | None = None,
    ):
        """`progress` hears (editions fetched, editions to fetch) before the first fetch and after
        each one (issue 23.8); cache hits are not counted, they cost nothing."""
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        super().__init__(http, timeout, retry, sleep)
        self.cache = EditionCache(cache_dir)
        self.concurrency = concurrency
        self.progress = progress or (lambda done, total: None)

    def download(self, catalog: Catalog, editions: Iterable[CatalogEdition] | None = None) -> list[DownloadResult]:
        """One result per edition (default: every edition of `catalog`), in input order."""
        acts = {a.eli: a for a in catalog.acts}
        todo = list(catalog.editions if editions is None else editions)
        # Cache hits and "no file" are answered here, from one index query; only real fetches go to
        # the worker threads.
        cached = self.cache.lookup_many(
            (e.file_url for e in todo if e.file_url is not None and e.act_eli in acts), langs={e.lang for e in todo}
        )
        unindexed = [e for e in todo if e.file_url is not None and e.file_url not in cached and e.act_eli in acts]
        for (cons, lang), sha in self.cache.recovered(unindexed).items():
            # A rebuilt index: the file is found by its own identity and gets its URL's row again.
            edition = next(e for e in unindexed if (e.consolidation, e.lang) == (cons, lang))
            assert edition.file_url is not None
            cached[edition.file_url] = IndexEntry(edition.file_url, sha, cons, lang)
            self.cache.remember(edition.file_url, sha, edition)
        results: list[DownloadResult | None] = [self._known(e, cached.get(e.file_url or "")) for e in todo]
        missing = [i for i, r in enumerate(results) if r is None]
        if missing:
            self.cache.sweep_stale_temp()  # leftovers of a run that died while fetching
        try:
            self._fetch_missing(todo, missing, results, acts)
        finally:
            self.cache.flush()  # also on Ctrl-C: what was stored stays known
        return results  # type: ignore[return-value]

    def _fetch_missing(self, todo: list[CatalogEdition], missing: list[int], results: list, acts: dict) -> None:
        if not missing:
            return
        self.progress(0, len(missing))
        if self.concurrency == 1 or len(missing) <= 1:
            for n, i in enumerate(missing, 1):
                results[i] = self._one(todo[i], acts.get(todo[i].act_eli))
                self.progress(n, len(missing))
            return
        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="fedlex-download")
        futures = {pool.submit(self._one, todo[i], acts.get(todo[i].act_eli)): i for i in missing}
        try:
            for n, future in enumerate(as_completed(futures), 1):
                results[futures[future]] = future.result()
                self.progress(n, len(missing))
        except BaseException:
            # Ctrl-C or a bug: stop queued work instead of finishing the whole batch first.
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    def _known(self, edition: CatalogEdition, entry: IndexEntry | None) -> DownloadResult | None:
        """The result without fetching, when there is nothing to fetch or the cache has the file
        (looked up only for an act the catalog knows: otherwise there is nothing to check the file against)."""
        if edition.file_url is None:
            return DownloadResult(edition, None, None, "no_file", None)
        if (
            entry is not None
            and (entry.consolidation, entry.lang) == (edition.consolidation, edition.lang)
            and edition.sha256 in (None, entry.sha256)
        ):
            return DownloadResult(edition, self.cache.content_file(entry.sha256), entry.sha256, "cached")
        return None

    def refetch(self, catalog: Catalog, edition: CatalogEdition) -> DownloadResult:
        """Fetch one edition again, whatever the index says: its cached file was found corrupt."""
        try:
            act: CatalogAct | None = catalog.act(edition.act_eli)
        except CatalogError:
            act = None
        result = self._one(edition, act) if edition.file_url is not None else self._known(edition, None)
        self.cache.flush()
        assert result is not None
        return result

    def _one(self, edition: CatalogEdition, act: CatalogAct | None) -> DownloadResult:
        """Fetch, validate and cache one edition that has a file and is not in the cache."""
        url = edition.file_url
        assert url is not None  # editions without a file are answered by _known
        sr = act.sr_number if act is not None else "?"
        where = f"act {edition.act_eli} (SR {sr}) edition {edition.consolidation} [{edition.lang}] {url}"
        try:
            if act is None:
                raise _Rejected(
                    "validate", f"{where}: the act is not in the catalog, nothing to check the file against"
                )
            data = self._fetch(url, where)
            sha256 = hashlib.sha256(data).hexdigest()
            self._validate(data, sha256, edition, act, where)
            path = self.cache.put(url, data, sha256, edition)
        except _Rejected as exc:
            log.warning("%s", exc)
            return DownloadResult(edition, None, None, exc.stage, str(exc))
        return DownloadResult(edition, str(path), sha256, "downloaded")

    def _fetch(self, url: str, where: str) -> bytes:
        scheme = urlsplit(url).scheme
        if scheme == "file":
            # The offline sample: same validation and cache, only the transport differs.
            try:
                return Path(url2pathname(urlsplit(url).path)).read_bytes()
            except OSError as exc:
                raise _Rejected("download", f"{where}: cannot read file: {exc}") from exc
        if scheme not in ("http", "https"):
            raise _Rejected("download", f"{where}: unsupported URL scheme {scheme!r}")
        try:
            response = request_with_retry(
                self.http, "GET", url, purpose=f"download {where}", policy=self.retry, sleep=self.sleep
            )
        except FedlexHttpError as exc:
            status = f"HTTP {exc.status}: " if exc.status is not None else ""
            raise _Rejected("download", f"{where}: {status}{exc.detail}") from exc
        if response.status_code != 200:
            raise _Rejected("download", f"{where}: HTTP {response.status_code}")
        return response.content

    @staticmethod
    def _validate(data: bytes, sha256: str, edition: CatalogEdition, act: CatalogAct, where: str) -> None:
        try:
            identity = read_identity(parse_xml(data, where), where)
            check_identity(
                identity,
                sr_number=act.sr_number,
                date_applicability=edition.date_applicability,
                lang=edition.lang,
                where=where,
            )
        except AknError as exc:
            raise _Rejected("validate", str(exc)) from exc
        if edition.sha256 is not None and sha256 != edition.sha256:
            raise _Rejected("validate", f"{where}: sha256 {sha256} != catalog {edition.sha256} ({len(data)} bytes)")


def download_editions(
    catalog: Catalog,
    cache_dir: Path,
    *,
    editions: Iterable[CatalogEdition] | None = None,
    **options,
) -> list[DownloadResult]:
    """One-shot convenience: every edition of `catalog` (or just `editions`) into `cache_dir`."""
    with EditionDownloader(cache_dir, **options) as downloader:
        return downloader.download(catalog, editions)
