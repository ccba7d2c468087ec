"""Point-in-time tools over the store: one library, called in-process by the runners and the
oracle, and served to outside agents by `mcp_server.py` (R2, PROTOCOL §5).

Resolution, shared by every entry point (`_Resolver`):

act      By SR number (the tools): federal acts (`jurisdiction = 'CH'`, B1) with that number, ordered
         in force first (`enforcement_status = 0`), then acts that have a parsed edition in the
         requested language, then the latest `date_entry_in_force`, then the smallest `act_id`; the
         first one wins and the result names it (`act`) and the others (`act.other_act_ids`).
         By `act_id` (the oracle, `resolve_by_act`): that row, nothing else.
edition  Only `stage = 'parsed'` editions exist for the tools (B10). The edition for a date D is the
         one whose validity covers D (`date_applicability <= D` and `date_end_applicability` NULL or
         `>= D`, the end being inclusive). Where two editions both claim D (Fedlex re-issued one
         without retracting the old end date) the later `date_applicability` wins - the ordering
         the card describes and B11 keeps out of the benchmark.
         No date means today (Europe/Zurich, or the injected `today`); only `ch_get_act_article`
         has that default (R2 as published: history takes no date, the full text requires one).
         When D falls in a gap between parsed editions, or after the last edition's end, the answer
         is `NoEditionOnDate` naming the editions on either side: the text in force that day is not
         in the store, and quoting a neighbouring edition instead would be the exact wrong-version
         answer CH-PiT measures. Before the first edition: `DateBeforeFirstEdition`.
article  An article is keyed by (e_id, occurrence) within its edition: Fedlex repeats eIds (the
         Civil Code's final title reproduces old-law articles as a second `art_178`), and the store
         numbers each e_id's articles 1, 2, ... in document order. By number: compared without
         spaces and case ("268a bis" = "268abis"), an "Art." prefix ignored. Where several articles
         carry the number (B9's ambiguous case), R2's order picks one: the top-level, un-nested
         e_id first (`art_7` before `disp_u1/art_7`), then the lowest occurrence, then document
         order; the answer lists the others (`also_carried_by`) so a caller knows it was a choice.
         By `e_id` (the oracle): exact, lowest occurrence unless one is given.

Every lookup is a handful of rows: editions by `act_id`, articles by `version_id` (the key prefix).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import duckdb

from chpit_assets.corpus.schema import ALIAS_PREFERENCE
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import LANGS
from chpit_assets.search.index import SearchIndexError
from chpit_assets.search.tool import SearchResult, SearchTool

from .errors import (
    BadCall,
    DateBeforeFirstEdition,
    InvalidArgument,
    NoEditionInLanguage,
    NoEditionOnDate,
    NoSearchIndex,
    PitError,
    ToolMiss,
    UnknownAct,
    UnknownArticle,
    UnknownLanguage,
    UnknownTool,
    clip,
    jsonable,
)
from .keys import ARTICLE_KEY_SQL, article_key, sr_key
from .schema import MAX_CHARS, TOOL_NAMES, TOOL_SPECS, validate_arguments

__all__ = [
    "TOOL_NAMES",
    "TOOL_SPECS",
    "ActRef",
    "ArticleChange",
    "ArticleResult",
    "BadCall",
    "Carrier",
    "DateBeforeFirstEdition",
    "EditionRef",
    "HistoryResult",
    "InvalidArgument",
    "NoEditionInLanguage",
    "NoEditionOnDate",
    "PitError",
    "PitTools",
    "TextResult",
    "ToolMiss",
    "UnknownAct",
    "UnknownArticle",
    "UnknownLanguage",
    "UnknownTool",
    "article_key",
    "call_tool",
    "sr_key",
]

SWISS_TZ = ZoneInfo("Europe/Zurich")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ActRef:
    """Which act answered; `other_act_ids` are the acts sharing its SR number that lost the tiebreak."""

    act_id: int
    sr_number: str
    eli: str
    abbreviation: str | None  # in the requested language: de from ch_act, fr/it/... from ch_act_alias (B7)
    title: str | None  # in the requested language
    enforcement_status: int  # 0 = in force
    other_act_ids: list[int] = field(default_factory=list)

    def header(self, lang: str) -> dict[str, Any]:
        """The published response's leading keys, then ours (`act`)."""
        return {"sr_number": self.sr_number, "abbreviation": self.abbreviation, "title": self.title, "lang": lang}

    def extra(self) -> dict[str, Any]:
        return {
            "act_id": self.act_id,
            "eli": self.eli,
            "enforcement_status": self.enforcement_status,
            "other_act_ids": self.other_act_ids,
        }


@dataclass(frozen=True)
class EditionRef:
    version_id: int
    date_applicability: date
    date_end_applicability: date | None  # inclusive last day; None = no end known (current)
    eli: str  # the consolidation's ELI
    source: str  # 'fedlex' (XML)

    def to_dict(self) -> dict[str, Any]:
        """The published `version` object (PROTOCOL §5), `source` beside it."""
        return {
            "version_id": self.version_id,
            "date_applicability": self.date_applicability.isoformat(),
            "date_end_applicability": jsonable(self.date_end_applicability),
            "eli_consolidation_uri": self.eli,
            "source": self.source,
        }


@dataclass(frozen=True)
class Carrier:
    """Another article of the same edition carrying the asked-for number (B9's ambiguous case)."""

    e_id: str
    occurrence: int
    heading: str | None


@dataclass(frozen=True)
class ArticleResult:
    act: ActRef
    edition: EditionRef
    lang: str
    as_of: date  # the date the edition was chosen for
    as_of_defaulted: bool  # True when no date was passed and today was used
    e_id: str
    occurrence: int  # with e_id, the article's key in its edition
    article_number: str | None
    heading: str | None  # the published `marginal_note`
    text: str  # verbatim, one numbered paragraph per line
    also_carried_by: list[Carrier] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The published response of `ch_get_act_article`, our fields beside the published keys."""
        return {
            **self.act.header(self.lang),
            "as_of": self.as_of.isoformat(),
            "version": self.edition.to_dict(),
            "article": {
                "e_id": self.e_id,
                "article_number": self.article_number,
                "marginal_note": self.heading,
                "text": self.text,
                "occurrence": self.occurrence,
                "also_carried_by": jsonable(self.also_carried_by),
            },
            "as_of_defaulted": self.as_of_defaulted,
            "act": self.act.extra(),
        }


@dataclass(frozen=True)
class ArticleChange:
    """One article's change between two consecutive parsed editions (B3): keyed by (e_id, occurrence)."""

    old_version_id: int
    new_version_id: int
    date_applicability: date  # the new edition's
    e_id: str
    occurrence: int
    article_number: str | None  # the new edition's, the old one's for a removal
    change_type: str  # added | removed | modified


@dataclass(frozen=True)
class HistoryResult:
    act: ActRef
    lang: str
    today: date
    article: str | None  # the filter, as asked
    editions: list[EditionRef]  # parsed editions, oldest first
    today_version_id: int | None  # the edition a call without a date answers from
    changes: list[ArticleChange]  # consecutive pairs oldest first, then document order
    gaps: list[tuple[date, date]]  # days no parsed edition covers, between two consecutive ones

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.act.header(self.lang),
            "editions": [
                {**e.to_dict(), "in_force_today": e.version_id == self.today_version_id} for e in self.editions
            ],
            "changes": jsonable(self.changes),
            "article": self.article,
            "today": self.today.isoformat(),
            "gaps": [{"date_from": a.isoformat(), "date_to": b.isoformat()} for a, b in self.gaps],
            "act": self.act.extra(),
        }


@dataclass(frozen=True)
class TextArticle:
    """Where an article's block starts in the edition's full text."""

    e_id: str
    occurrence: int
    article_number: str | None
    offset: int


@dataclass(frozen=True)
class TextResult:
    act: ActRef
    edition: EditionRef
    lang: str
    as_of: date
    offset: int
    max_chars: int
    total_chars: int
    text: str  # the full text's characters [offset, offset + max_chars)
    next_offset: int | None  # None: this page reaches the end
    articles: list[TextArticle]  # the articles whose block starts on this page

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.act.header(self.lang),
            "as_of": self.as_of.isoformat(),
            "version": self.edition.to_dict(),
            "offset": self.offset,
            "max_chars": self.max_chars,
            "total_chars": self.total_chars,
            "next_offset": self.next_offset,
            "text": self.text,
            "articles": jsonable(self.articles),
            "act": self.act.extra(),
        }


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


# --------------------------------------------------------------------------- resolution


@dataclass(frozen=True)
class _Act:
    ref: ActRef
    label: str  # how errors name it: "SR 235.1 (DSG)" or "act_id 123"


@dataclass(frozen=True)
class _Row:
    """One stored article (ch_act_article)."""

    version_id: int
    e_id: str
    occurrence: int
    article_number: str | None
    heading: str | None
    text: str

    def carrier(self) -> Carrier:
        return Carrier(self.e_id, self.occurrence, self.heading)


_ROW_COLUMNS = "version_id, e_id, occurrence, article_number, heading, text"


def _pick(rows: list[_Row]) -> tuple[_Row, list[_Row]]:
    """R2/B9 among an edition's articles carrying one number: un-nested e_id first, then the lowest
    occurrence; `min` is stable, so document order breaks what remains."""
    chosen = min(rows, key=lambda r: ("/" in r.e_id, r.occurrence))
    return chosen, [r for r in rows if r is not chosen]


class _Resolver:
    """One connection's worth of lookups; the single code path of the tools and the oracle (R2)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, lang: str):
        self.con = con
        self.lang = lang

    def _rows(self, sql: str, params: list) -> list[tuple]:
        return self.con.execute(sql, params).fetchall()

    # act -------------------------------------------------------------------
    def _act_ref(self, row: tuple, others: list[int]) -> ActRef:
        act_id, sr_number, eli, abbreviation, status, title = row[:6]
        if self.lang != "de":
            alias = self._rows(
                f"SELECT abbr FROM ch_act_alias WHERE act_id = ? AND lang = ? ORDER BY {ALIAS_PREFERENCE} LIMIT 1",
                [act_id, self.lang],
            )
            abbreviation = alias[0][0] if alias else None
        return ActRef(act_id, sr_number, eli, abbreviation, title, status, others)

    def _act_columns(self) -> str:
        # `lang` is one of LANGS, so the column name is one of the five title columns.
        return f"act_id, sr_number, eli, abbreviation, enforcement_status, title_{self.lang}"

    def act_by_sr(self, sr_number: str) -> _Act:
        rows = self._rows(
            f"SELECT {self._act_columns()}, date_entry_in_force, "
            "EXISTS (SELECT 1 FROM ch_act_version v WHERE v.act_id = a.act_id AND v.lang = ? "
            "        AND v.stage = 'parsed') AS has_lang "
            "FROM ch_act a WHERE sr_number = ? AND jurisdiction = 'CH'",
            [self.lang, sr_number],
        )
        if not rows:
            raise UnknownAct(f"no federal act with SR number {clip(sr_number)}", sr_number=clip(sr_number))
        rows.sort(key=lambda r: (r[4] != 0, not r[7], -(r[6] or date.min).toordinal(), r[0]))
        ref = self._act_ref(rows[0], [r[0] for r in rows[1:]])
        label = f"SR {sr_number}" + (f" ({ref.abbreviation})" if ref.abbreviation else "")
        return _Act(ref, label)

    def act_by_id(self, act_id: int) -> _Act:
        rows = self._rows(f"SELECT {self._act_columns()} FROM ch_act WHERE act_id = ?", [act_id])
        if not rows:
            raise UnknownAct(f"no act with act_id {act_id}", act_id=act_id)
        return _Act(self._act_ref(rows[0], []), f"act_id {act_id} (SR {rows[0][1]})")

    # edition ---------------------------------------------------------------
    def editions(self, act: _Act) -> list[EditionRef]:
        """Parsed editions of the act in the language, oldest first (ties by version_id, as
        ch_act_change pairs them); never empty."""
        rows = self._rows(
            "SELECT version_id, date_applicability, date_end_applicability, eli, source FROM ch_act_version "
            "WHERE act_id = ? AND lang = ? AND stage = 'parsed' ORDER BY date_applicability, version_id",
            [act.ref.act_id, self.lang],
        )
        if not rows:
            langs = [
                r[0]
                for r in self._rows(
                    "SELECT DISTINCT lang FROM ch_act_version WHERE act_id = ? AND stage = 'parsed' ORDER BY lang",
                    [act.ref.act_id],
                )
            ]
            raise NoEditionInLanguage(
                f"{act.label} has no parsed edition in {self.lang!r}; it has: {', '.join(langs) or 'none'}",
                sr_number=act.ref.sr_number,
                act_id=act.ref.act_id,
                lang=self.lang,
                languages=langs,
            )
        return [EditionRef(*r) for r in rows]

    @staticmethod
    def covering(editions: list[EditionRef], day: date) -> EditionRef | None:
        hits = [
            e
            for e in editions
            if e.date_applicability <= day and (e.date_end_applicability is None or e.date_end_applicability >= day)
        ]
        # Overlapping editions: the later start wins (see the module docstring).
        return max(hits, key=lambda e: (e.date_applicability, e.version_id), default=None)

    def edition_on(self, act: _Act, day: date) -> EditionRef:
        editions = self.editions(act)
        found = self.covering(editions, day)
        if found is not None:
            return found
        context = dict(sr_number=act.ref.sr_number, act_id=act.ref.act_id, lang=self.lang, as_of=day)
        first = editions[0]
        if day < first.date_applicability:
            raise DateBeforeFirstEdition(
                f"{act.label} [{self.lang}]: {day} is before the first edition in the store "
                f"({first.date_applicability})",
                first_edition=first.date_applicability,
                **context,
            )
        before = max((e for e in editions if e.date_applicability <= day), key=lambda e: e.date_applicability)
        after = min(
            (e for e in editions if e.date_applicability > day), key=lambda e: e.date_applicability, default=None
        )
        raise NoEditionOnDate(
            f"{act.label} [{self.lang}]: no edition in the store covers {day}; the previous one ended "
            f"{before.date_end_applicability}"
            + (f", the next one starts {after.date_applicability}" if after else ", and there is no later one"),
            previous_edition_end=before.date_end_applicability,
            next_edition_start=after.date_applicability if after else None,
            **context,
        )

    # article ---------------------------------------------------------------
    def article_rows(self, version_ids: list[int], where: str, params: list) -> list[_Row]:
        """Articles of the editions matching `where`, in document order (ingest inserts an edition's
        articles in document order, so rowid order is document order)."""
        marks = ", ".join("?" * len(version_ids))
        return [
            _Row(*r)
            for r in self._rows(
                f"SELECT {_ROW_COLUMNS} FROM ch_act_article WHERE version_id IN ({marks}) AND ({where}) ORDER BY rowid",
                [*version_ids, *params],
            )
        ]

    def by_number(self, version_ids: list[int], article: str) -> list[_Row]:
        return self.article_rows(version_ids, f"{ARTICLE_KEY_SQL} = ?", [article_key(article)])

    def article(
        self,
        act: _Act,
        edition: EditionRef,
        day: date,
        *,
        article: str | None = None,
        e_id: str | None = None,
        occurrence: int | None = None,
    ) -> tuple[_Row, list[_Row]]:
        if e_id is not None:
            rows = self.article_rows([edition.version_id], "e_id = ?", [e_id])
            rows = [r for r in rows if occurrence is None or r.occurrence == occurrence]
            if rows:
                chosen = min(rows, key=lambda r: r.occurrence)
                # The oracle's answer says what the tool's would: who else carries its number.
                same = self.by_number([edition.version_id], chosen.article_number) if chosen.article_number else []
                carriers = {(r.e_id, r.occurrence): r for r in [*rows, *same]}
                return chosen, [r for k, r in carriers.items() if k != (chosen.e_id, chosen.occurrence)]
            which = f"e_id {clip(e_id)}" + (f" occurrence {occurrence}" if occurrence is not None else "")
            raise UnknownArticle(
                f"{act.label} [{self.lang}]: no article with {which} in the edition of "
                f"{edition.date_applicability} (valid on {day})",
                act_id=act.ref.act_id,
                sr_number=act.ref.sr_number,
                e_id=clip(e_id),
                occurrence=occurrence,
                lang=self.lang,
                as_of=day,
                version_id=edition.version_id,
            )
        assert article is not None
        rows = self.by_number([edition.version_id], article)
        if rows:
            return _pick(rows)
        # Say where the number does exist, so an agent can correct its date instead of guessing.
        editions = self.editions(act)
        holders = {row.version_id for row in self.by_number([e.version_id for e in editions], article)}
        elsewhere = [e.date_applicability for e in editions if e.version_id in holders]
        raise UnknownArticle(
            f"{act.label} [{self.lang}]: no Art. {clip(article)} in the edition of {edition.date_applicability} "
            f"(valid on {day})"
            + (
                f"; it exists in the editions of {', '.join(map(str, elsewhere))}"
                if elsewhere
                else "; no edition in the store has it"
            ),
            sr_number=act.ref.sr_number,
            act_id=act.ref.act_id,
            article=clip(article),
            lang=self.lang,
            as_of=day,
            editions_with_article=elsewhere,
        )

    # history ---------------------------------------------------------------
    def changes(self, editions: list[EditionRef], article: str | None) -> list[ArticleChange]:
        """B3 between consecutive parsed editions, keyed by (e_id, occurrence), texts compared
        verbatim - the rules `ch_act_change` is built by, computed here so the tool needs no
        build step. With `article`: the changes of every article carrying that number."""
        ids = [e.version_id for e in editions]
        marks = ", ".join("?" * len(ids))
        # A digest, not the text: an act's every edition can be tens of megabytes of text.
        rows = self._rows(
            f"SELECT version_id, e_id, occurrence, article_number, md5(text) FROM ch_act_article "
            f"WHERE version_id IN ({marks}) ORDER BY rowid",
            ids,
        )
        per_edition: dict[int, dict[tuple[str, int], tuple[str | None, str]]] = {v: {} for v in ids}
        for version_id, e_id, occurrence, number, digest in rows:
            per_edition[version_id][(e_id, occurrence)] = (number, digest)
        wanted = None if article is None else article_key(article)

        def keep(number: str | None) -> bool:
            return wanted is None or (number is not None and article_key(number) == wanted)

        out: list[ArticleChange] = []
        for old, new in zip(editions, editions[1:]):
            before, after = per_edition[old.version_id], per_edition[new.version_id]
            for key, (number, digest) in after.items():
                previous = before.get(key)
                kind = "added" if previous is None else "modified" if previous[1] != digest else None
                if kind and (keep(number) or (previous is not None and keep(previous[0]))):
                    out.append(
                        ArticleChange(old.version_id, new.version_id, new.date_applicability, *key, number, kind)
                    )
            for key, (number, _) in before.items():
                if key not in after and keep(number):
                    out.append(
                        ArticleChange(old.version_id, new.version_id, new.date_applicability, *key, number, "removed")
                    )
        return out


def _block(row: _Row) -> str:
    """One article in the full text: "Art. <number> <heading>", then its paragraphs."""
    title = f"Art. {row.article_number}" if row.article_number else row.e_id
    return (f"{title} {row.heading}" if row.heading else title) + "\n" + row.text


# --------------------------------------------------------------------------- the tools


class PitTools:
    """`ch_get_act_article`, `ch_get_act_history`, `ch_get_act_text` and the oracle's `resolve_by_act`.

    Arguments are the published ones (PROTOCOL §5); the Python API also takes the languages
    Fedlex publishes for a few acts only (en, rm). `today` fixes the date a call without `as_of`
    uses (tests, reproducible runs); None means the current date in Switzerland at each call.
    Each call opens one read-only connection, unless inside `with tools.session():`, which shares
    one connection for a batch (the oracle over a whole split).
    """

    def __init__(self, store: Store, today: date | None = None, search_dir: Path | str | None = None):
        self.store = store
        self._today = today
        self._session: duckdb.DuckDBPyConnection | None = None
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
            self._session = con
            try:
                yield self
            finally:
                self._session = None

    @contextmanager
    def _resolver(self, lang: str) -> Iterator[_Resolver]:
        lang = _lang(lang)
        if self._session is not None:
            # A cursor is its own connection to the shared database, so threads may call concurrently.
            cursor = self._session.cursor()
            try:
                yield _Resolver(cursor, lang)
            finally:
                cursor.close()
        else:
            with self.store.connect(read_only=True) as con:
                yield _Resolver(con, lang)

    def _article_result(self, r: _Resolver, act: _Act, as_of: date | str | None, **which: Any) -> ArticleResult:
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
        today_edition = _Resolver.covering(editions, today)
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
        order, one block per article (`_block`) - paged by character offset."""
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
            rows = r.article_rows([edition.version_id], "TRUE", [])
        articles, blocks, at = [], [], 0
        for row in rows:
            block = _block(row)
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
