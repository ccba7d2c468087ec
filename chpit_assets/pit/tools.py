"""The point-in-time tools over the store (R2, PROTOCOL §5): `PitTools`, one library called in-process by
the runners and the oracle and served to outside agents by `mcp_server.py`, and `call_tool`, the one
entry point for a model's or an MCP client's call. How acts, editions and articles are resolved:
`chpit_assets.pit.resolver`; the answers' shapes: `chpit_assets.pit.results`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import duckdb

from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import LANGS
from chpit_assets.search.index import SearchIndexError
from chpit_assets.search.tool import SearchResult, SearchTool

from .cache import CachedResolver, LookupCache
from .errors import (
    InvalidArgument,
    NoSearchIndex,
    ToolMiss,
    UnknownLanguage,
    clip,
)
from .keys import sr_key
from .resolver import ResolvedAct, Resolver, article_block
from .results import ArticleResult, HistoryResult, TextArticle, TextResult
from .schema import MAX_CHARS, validate_arguments

SWISS_TZ = ZoneInfo("Europe/Zurich")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


# --------------------------------------------------------------------------- argument parsing


def _sr(sr_number: str) -> str:
    sr = sr_key(sr_number)
    if not sr:
        raise InvalidArgument("sr_number is empty", sr_number=clip(sr_number))
    return sr


def _article(article: str) -> str:
    if not str(article).strip():
        raise InvalidArgument("article is empty", article=clip(article))
    return str(article)


def _lang(lang: str) -> str:
    if lang not in LANGS:
        raise UnknownLanguage(
            f"unknown language {clip(lang)}; Fedlex languages are {', '.join(LANGS)}",
            lang=clip(lang),
            languages=list(LANGS),
        )
    return lang


def _date(value: date | str | None) -> date | None:
    if value is None or isinstance(value, date):
        return value
    text = str(value).strip()
    try:
        # fromisoformat alone also takes "20240101" and week dates; the tools promise YYYY-MM-DD.
        if not _ISO_DATE.fullmatch(text):
            raise ValueError
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidArgument(f"as_of must be a date YYYY-MM-DD, got {clip(value)}", as_of=clip(value)) from None


# --------------------------------------------------------------------------- the tools


class PitTools:
    """`ch_get_act_article`, `ch_get_act_history`, `ch_get_act_text` and the oracle's `resolve_by_act`.

    Arguments are the published ones (PROTOCOL §5); the Python API also takes the languages
    Fedlex publishes for a few acts only (en, rm). `today` fixes the date a call without `as_of`
    uses (tests, reproducible runs); None means the current date in Switzerland at each call.
    Each call opens one read-only connection, unless inside `with tools.session():`, which shares
    one connection for a batch (the oracle over a whole split) and reads the store's rows through a
    `LookupCache`, per language and per edition rather than per call (issue 27.4).
    """

    def __init__(self, store: Store, today: date | None = None, search_dir: Path | str | None = None):
        self.store = store
        self._today = today
        self._session: duckdb.DuckDBPyConnection | None = None
        self._cache: LookupCache | None = None  # the session's rows (issue 27.4)
        # The search_index files (chpit_assets/search), for ch_search_articles; None: no search tool.
        self._search = SearchTool(search_dir) if search_dir is not None else None

    def today(self) -> date:
        return self._today or datetime.now(SWISS_TZ).date()

    @contextmanager
    def session(self) -> Iterator[PitTools]:
        if self._session is not None:  # nested: the outer session's connection serves
            yield self
            return
        with self.store.connect(read_only=True) as con:
            self._session, self._cache = con, LookupCache()
            try:
                yield self
            finally:
                self._session = self._cache = None

    @contextmanager
    def _resolver(self, lang: str) -> Iterator[Resolver]:
        lang = _lang(lang)
        if self._session is not None and self._cache is not None:
            # A cursor is its own connection to the shared database, so threads may call concurrently.
            cursor = self._session.cursor()
            try:
                yield CachedResolver(cursor, lang, self._cache)
            finally:
                cursor.close()
        else:
            with self.store.connect(read_only=True) as con:
                yield Resolver(con, lang)

    def _article_result(self, r: Resolver, act: ResolvedAct, as_of: date | str | None, **which: Any) -> ArticleResult:
        day = _date(as_of)
        defaulted = day is None
        day = self.today() if day is None else day
        edition = r.edition_on(act, day)
        row, others = r.article(act, edition, day, **which)
        return ArticleResult(
            act.ref,
            edition,
            r.lang,
            day,
            defaulted,
            row.e_id,
            row.occurrence,
            row.article_number,
            row.heading,
            row.text,
            [o.carrier() for o in others],
        )

    def ch_get_act_article(
        self, sr_number: str, article: str, lang: str = "de", as_of: date | str | None = None
    ) -> ArticleResult:
        """One article as in force on `as_of` (default: today)."""
        article = _article(article)
        with self._resolver(lang) as r:
            return self._article_result(r, r.act_by_sr(_sr(sr_number)), as_of, article=article)

    def resolve_by_act(
        self,
        act_id: int,
        lang: str,
        as_of: date | str | None,
        *,
        e_id: str | None = None,
        occurrence: int | None = None,
        article: str | None = None,
    ) -> ArticleResult:
        """The oracle (R1, R2): act by `act_id`, then edition and article exactly as `ch_get_act_article`;
        by `e_id` (and `occurrence`, default the lowest) or by number."""
        if (e_id is None) == (article is None) or (occurrence is not None and e_id is None):
            raise InvalidArgument(
                "pass exactly one of e_id (with an optional occurrence) and article",
                e_id=e_id,
                occurrence=occurrence,
                article=article,
            )
        if article is not None:
            article = _article(article)
        with self._resolver(lang) as r:
            return self._article_result(
                r, r.act_by_id(act_id), as_of, article=article, e_id=e_id, occurrence=occurrence
            )

    def ch_get_act_history(self, sr_number: str, article: str | None = None, lang: str = "de") -> HistoryResult:
        """Every parsed edition of the act in `lang`, oldest first, which one is in force today, the
        gaps between them, and the per-article changes between consecutive ones (with `article`:
        only the articles carrying that number)."""
        today = self.today()
        if article is not None and not str(article).strip():
            article = None  # an empty number asks for the unfiltered list
        with self._resolver(lang) as r:
            act = r.act_by_sr(_sr(sr_number))
            editions = r.editions(act)
            changes = r.changes(editions, None if article is None else str(article))
        today_edition = Resolver.covering(editions, today)
        gaps = [
            (a.date_end_applicability + timedelta(days=1), b.date_applicability - timedelta(days=1))
            for a, b in zip(editions, editions[1:])
            if a.date_end_applicability is not None
            and a.date_end_applicability + timedelta(days=1) < b.date_applicability
        ]
        return HistoryResult(
            act.ref,
            r.lang,
            today,
            article,
            editions,
            today_edition.version_id if today_edition else None,
            changes,
            gaps,
        )

    def ch_search_articles(
        self,
        query: str,
        lang: str = "de",
        as_of: date | str | None = None,
        sr_number: str | None = None,
        limit: int = 10,
    ) -> SearchResult:
        """Ranked articles of the editions in force on `as_of` (default: today): issue 16's fourth tool."""
        if self._search is None:
            raise NoSearchIndex("no search index is configured for these tools")
        day = _date(as_of) or self.today()
        try:
            return self._search.search(query, _lang(lang), day, sr_number=sr_number, limit=limit)
        except SearchIndexError as exc:
            raise NoSearchIndex(str(exc), lang=lang) from None

    def ch_get_act_text(
        self, sr_number: str, as_of: date | str, lang: str = "de", offset: int = 0, max_chars: int = 50000
    ) -> TextResult:
        """The whole edition in force on `as_of` - every article, repeated eIds included, in document
        order, one block per article (`article_block`) - paged by character offset."""
        day = _date(as_of)
        if day is None:
            raise InvalidArgument("ch_get_act_text needs as_of (R2: the full text has no default date)")
        if not (isinstance(offset, int) and offset >= 0 and isinstance(max_chars, int) and 1 <= max_chars <= MAX_CHARS):
            raise InvalidArgument(
                f"offset must be >= 0 and max_chars in 1..{MAX_CHARS}, got {clip(offset)} and {clip(max_chars)}",
                offset=clip(offset),
                max_chars=clip(max_chars),
            )
        with self._resolver(lang) as r:
            act = r.act_by_sr(_sr(sr_number))
            edition = r.edition_on(act, day)
            rows = r.edition_articles(edition.version_id)
        articles, blocks, at = [], [], 0
        for row in rows:
            block = article_block(row)
            if offset <= at < offset + max_chars:
                articles.append(TextArticle(row.e_id, row.occurrence, row.article_number, at))
            blocks.append(block)
            at += len(block) + 2  # the blank line between blocks
        full = "\n\n".join(blocks)
        page = full[offset : offset + max_chars]
        end = offset + len(page)
        return TextResult(
            act.ref,
            edition,
            r.lang,
            day,
            offset,
            max_chars,
            len(full),
            page,
            end if end < len(full) else None,
            articles,
        )


def call_tool(tools: PitTools, name: str, arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    """Run one tool call from a model and return the published response dict (PROTOCOL §5).

    A call the store cannot answer returns `{"error": "no_edition_for_date" | "article_not_found",
    "code", "message", ...context}`; a malformed call (unknown tool, unknown, missing or
    out-of-bounds argument, bad date) raises a `BadCall`, which the agentic loop reports as
    `{"error": "{Type}: {msg}"}`. Store failures raise too: they are the run's problem."""
    kwargs = validate_arguments(name, arguments)
    try:
        return getattr(tools, name)(**kwargs).to_dict()
    except ToolMiss as exc:
        return exc.to_dict()
