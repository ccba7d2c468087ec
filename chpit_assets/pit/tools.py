"""Point-in-time tools over the store: one library, called in-process by the runners and the
oracle, and served to outside agents by `mcp_server.py` (R2).

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
         No date means today (Europe/Zurich, or the injected `today`). When D - today included -
         falls in a gap between parsed editions, or after the last edition's end, the answer is
         `NoEditionOnDate` naming the editions on either side: the text in force that day is not
         in the store, and quoting a neighbouring edition instead would be the exact wrong-version
         answer CH-PiT measures. Before the first edition: `DateBeforeFirstEdition`.
article  By number: compared without spaces and case ("268a bis" = "268abis"), an "Art." prefix
         ignored. Where several e_ids carry the number (a top-level `art_7` and a transitional
         `disp_u1/art_7`), the top-level one wins, then document order; the result lists the
         others (`other_e_ids`). By `e_id` (the oracle): exact.

Every lookup is a handful of rows: editions by `act_id`, articles by `version_id` (the key prefix).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import date, datetime, timedelta
from typing import Any, ClassVar
from zoneinfo import ZoneInfo

import duckdb

from chpit_assets.corpus.schema import ALIAS_PREFERENCE
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import LANGS

SWISS_TZ = ZoneInfo("Europe/Zurich")


# --------------------------------------------------------------------------- errors


class PitError(Exception):
    """A tool call that cannot be answered; `context` names the SR number/act, article, lang and date."""

    code: ClassVar[str] = "pit_error"

    def __init__(self, message: str, **context: Any):
        super().__init__(message)
        self.message = message
        self.context = context

    def to_dict(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **_jsonable(self.context)}}


class InvalidArgument(PitError, ValueError):
    code = "invalid_argument"


class UnknownTool(PitError):
    code = "unknown_tool"


class UnknownLanguage(PitError):
    code = "unknown_language"


class UnknownAct(PitError):
    code = "unknown_act"


class NoEditionInLanguage(PitError):
    """The act exists but has no parsed edition in this language."""

    code = "no_edition_in_language"


class DateBeforeFirstEdition(PitError):
    code = "date_before_first_edition"


class NoEditionOnDate(PitError):
    """The date falls in a gap between parsed editions or after the last one ended."""

    code = "no_edition_on_date"


class UnknownArticle(PitError):
    code = "unknown_article"


# --------------------------------------------------------------------------- results


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


class _Result:
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types only (dates as ISO strings)."""
        return _jsonable(self)


@dataclass(frozen=True)
class ActRef(_Result):
    """Which act answered; `other_act_ids` are the acts sharing its SR number that lost the tiebreak."""

    act_id: int
    sr_number: str
    eli: str
    abbreviation: str | None      # in the requested language: de from ch_act, fr/it/... from ch_act_alias
    title: str | None             # in the requested language
    enforcement_status: int       # 0 = in force
    other_act_ids: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class EditionRef(_Result):
    version_id: int
    date_applicability: date
    date_end_applicability: date | None   # inclusive last day; None = no end known (current)
    eli: str                               # the consolidation's ELI
    source: str                            # 'fedlex' (XML)


@dataclass(frozen=True)
class ArticleResult(_Result):
    act: ActRef
    edition: EditionRef
    lang: str
    as_of: date                   # the date the edition was chosen for
    as_of_defaulted: bool         # True when no date was passed and today was used
    e_id: str
    article_number: str | None
    heading: str | None
    text: str                     # verbatim, one numbered paragraph per line
    other_e_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class HistoryEntry(_Result):
    edition: EditionRef
    is_today_edition: bool        # the edition a call without a date returns
    article_present: bool | None  # None when no article was asked about
    e_id: str | None
    change: str | None            # vs the previous parsed edition: added|removed|modified|unchanged


@dataclass(frozen=True)
class Gap(_Result):
    """Days no parsed edition covers, between two consecutive ones."""

    date_from: date
    date_to: date


@dataclass(frozen=True)
class HistoryResult(_Result):
    act: ActRef
    lang: str
    today: date
    article_number: str | None
    editions: list[HistoryEntry]
    gaps: list[Gap]


@dataclass(frozen=True)
class ActArticle(_Result):
    e_id: str
    article_number: str | None
    heading: str | None
    text: str


@dataclass(frozen=True)
class ActTextResult(_Result):
    act: ActRef
    edition: EditionRef
    lang: str
    as_of: date
    as_of_defaulted: bool
    total_articles: int
    offset: int
    articles: list[ActArticle]    # document order, from `offset`, at most `limit`


# --------------------------------------------------------------------------- argument parsing

_ART_PREFIX = re.compile(r"^(?:art(?:icle|ikel|icolo)?\.?|§)\s*", re.IGNORECASE)
_SR_PREFIX = re.compile(r"^(?:sr|rs)\s+", re.IGNORECASE)


def article_key(article_number: str) -> str:
    """The comparison form of an article number: no "Art." prefix, no spaces, lower case."""
    return re.sub(r"\s+", "", _ART_PREFIX.sub("", article_number.strip())).lower()


# The same comparison form in SQL, applied to the stored column.
_ARTICLE_KEY_SQL = "lower(replace(article_number, ' ', ''))"


def sr_key(sr_number: str) -> str:
    """The comparison form of an SR number: no "SR" prefix, trimmed ("SR 235.1 " -> "235.1")."""
    return _SR_PREFIX.sub("", str(sr_number).strip())


def _sr(sr_number: str) -> str:
    sr = sr_key(sr_number)
    if not sr:
        raise InvalidArgument("sr_number is empty", sr_number=sr_number)
    return sr


def _lang(lang: str) -> str:
    if lang not in LANGS:
        raise UnknownLanguage(f"unknown language {lang!r}; Fedlex languages are {', '.join(LANGS)}", lang=lang,
                              languages=list(LANGS))
    return lang


def _date(value: date | str | None, what: str = "as_of") -> date | None:
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value).strip())
    except ValueError:
        raise InvalidArgument(f"{what} must be an ISO date YYYY-MM-DD, got {value!r}", **{what: value}) from None


# --------------------------------------------------------------------------- resolution


@dataclass(frozen=True)
class _Act:
    ref: ActRef
    label: str          # how errors name it: "SR 235.1 (DSG)" or "act_id 123"


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
            raise UnknownAct(f"no federal act with SR number {sr_number!r}", sr_number=sr_number)
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
        """Parsed editions of the act in the language, oldest first; never empty."""
        rows = self._rows(
            "SELECT version_id, date_applicability, date_end_applicability, eli, source FROM ch_act_version "
            "WHERE act_id = ? AND lang = ? AND stage = 'parsed' ORDER BY date_applicability, version_id",
            [act.ref.act_id, self.lang],
        )
        if not rows:
            langs = [r[0] for r in self._rows(
                "SELECT DISTINCT lang FROM ch_act_version WHERE act_id = ? AND stage = 'parsed' ORDER BY lang",
                [act.ref.act_id],
            )]
            raise NoEditionInLanguage(
                f"{act.label} has no parsed edition in {self.lang!r}; it has: {', '.join(langs) or 'none'}",
                sr_number=act.ref.sr_number, act_id=act.ref.act_id, lang=self.lang, languages=langs,
            )
        return [EditionRef(*r) for r in rows]

    @staticmethod
    def covering(editions: list[EditionRef], day: date) -> EditionRef | None:
        hits = [e for e in editions
                if e.date_applicability <= day and (e.date_end_applicability is None or e.date_end_applicability >= day)]
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
                first_edition=first.date_applicability, **context,
            )
        before = max((e for e in editions if e.date_applicability <= day), key=lambda e: e.date_applicability)
        after = min((e for e in editions if e.date_applicability > day), key=lambda e: e.date_applicability,
                    default=None)
        raise NoEditionOnDate(
            f"{act.label} [{self.lang}]: no edition in the store covers {day}; the previous one ended "
            f"{before.date_end_applicability}"
            + (f", the next one starts {after.date_applicability}" if after else ", and there is no later one"),
            previous_edition_end=before.date_end_applicability,
            next_edition_start=after.date_applicability if after else None,
            **context,
        )

    # article ---------------------------------------------------------------
    def article_rows(self, version_ids: list[int], key: str) -> list[tuple]:
        """(version_id, e_id, article_number, heading, text) rows carrying the number, in document order
        (ingest inserts an edition's articles in document order, so rowid order is document order)."""
        marks = ", ".join("?" * len(version_ids))
        return self._rows(
            f"SELECT version_id, e_id, article_number, heading, text FROM ch_act_article "
            f"WHERE version_id IN ({marks}) AND {_ARTICLE_KEY_SQL} = ? ORDER BY rowid",
            [*version_ids, key],
        )

    @staticmethod
    def pick(rows: list[tuple]) -> tuple[tuple, list[str]]:
        """The row a number resolves to within one edition, and the other e_ids carrying it."""
        chosen = min(rows, key=lambda r: "/" in r[1])   # min is stable: document order among equals
        return chosen, [r[1] for r in rows if r is not chosen]

    def article(self, act: _Act, edition: EditionRef, day: date, *, article_number: str | None = None,
                e_id: str | None = None) -> tuple[tuple, list[str]]:
        if e_id is not None:
            rows = self._rows(
                "SELECT version_id, e_id, article_number, heading, text FROM ch_act_article "
                "WHERE version_id = ? AND e_id = ?",
                [edition.version_id, e_id],
            )
            if rows:
                return rows[0], []
            raise UnknownArticle(
                f"{act.label} [{self.lang}]: no article with e_id {e_id!r} in the edition of "
                f"{edition.date_applicability} (valid on {day})",
                act_id=act.ref.act_id, sr_number=act.ref.sr_number, e_id=e_id, lang=self.lang, as_of=day,
                version_id=edition.version_id,
            )
        assert article_number is not None
        key = article_key(article_number)
        rows = self.article_rows([edition.version_id], key)
        if rows:
            return self.pick(rows)
        # Say where the number does exist, so an agent can correct its date instead of guessing.
        editions = self.editions(act)
        holders = {row[0] for row in self.article_rows([e.version_id for e in editions], key)}
        elsewhere = [e.date_applicability for e in editions if e.version_id in holders]
        raise UnknownArticle(
            f"{act.label} [{self.lang}]: no Art. {article_number} in the edition of {edition.date_applicability} "
            f"(valid on {day})"
            + (f"; it exists in the editions of {', '.join(map(str, elsewhere))}" if elsewhere else
               "; no edition in the store has it"),
            sr_number=act.ref.sr_number, act_id=act.ref.act_id, article_number=article_number, lang=self.lang,
            as_of=day, editions_with_article=elsewhere,
        )


# --------------------------------------------------------------------------- the tools


def _change(previous: tuple[str, str] | None, now: tuple[str, str] | None) -> str | None:
    """How an article's (e_id, text) differs from the previous edition's; None when absent in both."""
    if previous is None:
        return None if now is None else "added"
    if now is None:
        return "removed"
    return "unchanged" if now[1] == previous[1] else "modified"


class PitTools:
    """`ch_get_act_article`, `ch_get_act_history`, `ch_get_act_text` and the oracle's `resolve_by_act`.

    `today` fixes the date a call without `as_of` uses (tests, reproducible runs); None means the
    current date in Switzerland at each call. Each call opens one read-only connection, unless inside
    `with tools.session():`, which shares one connection for a batch (the oracle over a whole split).
    """

    def __init__(self, store: Store, today: date | None = None):
        self.store = store
        self._today = today
        self._session: duckdb.DuckDBPyConnection | None = None

    def today(self) -> date:
        return self._today or datetime.now(SWISS_TZ).date()

    @contextmanager
    def session(self) -> Iterator[PitTools]:
        if self._session is not None:      # nested: the outer session's connection serves
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

    def _day(self, as_of: date | str | None) -> tuple[date, bool]:
        day = _date(as_of)
        return (self.today(), True) if day is None else (day, False)

    def _article_result(self, r: _Resolver, act: _Act, as_of: date | str | None, *,
                        article_number: str | None = None, e_id: str | None = None) -> ArticleResult:
        day, defaulted = self._day(as_of)
        edition = r.edition_on(act, day)
        (_, found_e_id, number, heading, text), others = r.article(
            act, edition, day, article_number=article_number, e_id=e_id)
        return ArticleResult(act.ref, edition, r.lang, day, defaulted, found_e_id, number, heading, text, others)

    def ch_get_act_article(self, sr_number: str, article_number: str, lang: str,
                           as_of: date | str | None = None) -> ArticleResult:
        """One article as in force on `as_of` (default: today)."""
        if not str(article_number).strip():
            raise InvalidArgument("article_number is empty", article_number=article_number)
        with self._resolver(lang) as r:
            return self._article_result(r, r.act_by_sr(_sr(sr_number)), as_of, article_number=str(article_number))

    def resolve_by_act(self, act_id: int, lang: str, as_of: date | str | None, *, e_id: str | None = None,
                       article_number: str | None = None) -> ArticleResult:
        """The oracle (R1, R2): act by `act_id`, then edition and article exactly as `ch_get_act_article`."""
        if (e_id is None) == (article_number is None):
            raise InvalidArgument("pass exactly one of e_id and article_number", e_id=e_id,
                                  article_number=article_number)
        with self._resolver(lang) as r:
            return self._article_result(r, r.act_by_id(act_id), as_of, article_number=article_number, e_id=e_id)

    def ch_get_act_history(self, sr_number: str, lang: str, article_number: str | None = None) -> HistoryResult:
        """Every parsed edition of the act in `lang`, oldest first; with `article_number`, whether each
        edition has the article and how it changed from the previous edition."""
        today = self.today()
        if article_number is not None and not str(article_number).strip():
            article_number = None   # an empty number asks for the editions only
        with self._resolver(lang) as r:
            act = r.act_by_sr(_sr(sr_number))
            editions = r.editions(act)
            today_edition = r.covering(editions, today)
            texts: dict[int, tuple[str, str]] = {}   # version_id -> (e_id, text) of the article
            if article_number is not None:
                rows = r.article_rows([e.version_id for e in editions], article_key(str(article_number)))
                for version_id in {row[0] for row in rows}:
                    chosen, _ = r.pick([row for row in rows if row[0] == version_id])
                    texts[version_id] = (chosen[1], chosen[4])
        entries: list[HistoryEntry] = []
        for i, e in enumerate(editions):
            now = texts.get(e.version_id)
            entries.append(HistoryEntry(
                edition=e,
                is_today_edition=today_edition is not None and e.version_id == today_edition.version_id,
                article_present=None if article_number is None else now is not None,
                e_id=now[0] if now else None,
                change=_change(texts.get(editions[i - 1].version_id), now)
                if article_number is not None and i > 0 else None,
            ))
        gaps = [Gap(a.date_end_applicability + timedelta(days=1), b.date_applicability - timedelta(days=1))
                for a, b in zip(editions, editions[1:])
                if a.date_end_applicability is not None
                and a.date_end_applicability + timedelta(days=1) < b.date_applicability]
        return HistoryResult(act.ref, r.lang, today, article_number, entries, gaps)

    def ch_get_act_text(self, sr_number: str, lang: str, as_of: date | str | None = None,
                        offset: int = 0, limit: int | None = None) -> ActTextResult:
        """The whole edition in force on `as_of` (default: today), articles in document order;
        `offset`/`limit` page through long acts."""
        if offset < 0 or (limit is not None and limit < 1):
            raise InvalidArgument("offset must be >= 0 and limit >= 1", offset=offset, limit=limit)
        with self._resolver(lang) as r:
            act = r.act_by_sr(_sr(sr_number))
            day, defaulted = self._day(as_of)
            edition = r.edition_on(act, day)
            total = r.con.execute("SELECT count(*) FROM ch_act_article WHERE version_id = ?",
                                  [edition.version_id]).fetchone()[0]
            rows = r.con.execute(
                "SELECT e_id, article_number, heading, text FROM ch_act_article WHERE version_id = ? "
                "ORDER BY rowid LIMIT ? OFFSET ?",
                [edition.version_id, limit if limit is not None else total, offset],
            ).fetchall()
        return ActTextResult(act.ref, edition, r.lang, day, defaulted, total, offset, [ActArticle(*row) for row in rows])


# --------------------------------------------------------------------------- registry (OpenAI format)

_LANG_PARAM = {"type": "string", "enum": list(LANGS),
               "description": "Language of the text: de, fr, it (all acts), en, rm (some acts)."}
_SR_PARAM = {"type": "string",
             "description": "Number of the act in the Swiss Classified Compilation (SR/RS), e.g. \"220\" or \"235.1\"."}
_AS_OF_PARAM = {"type": "string", "format": "date",
                "description": "Date (YYYY-MM-DD) the text must have been in force on. Omit for today's text."}
_ARTICLE_PARAM = {"type": "string", "description": "Article number as printed, e.g. \"24\", \"5a\", \"268a bis\"."}

TOOL_SPECS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "ch_get_act_article",
        "description": (
            "Get the verbatim text of one article of a Swiss federal act from the official consolidated "
            "editions on Fedlex, as in force on a given date. The act is named by its SR number. Without "
            "as_of the tool returns the edition in force today. The result names the act and the edition "
            "used (its validity dates)."),
        "parameters": {"type": "object", "properties": {
            "sr_number": _SR_PARAM, "article_number": _ARTICLE_PARAM, "lang": _LANG_PARAM, "as_of": _AS_OF_PARAM},
            "required": ["sr_number", "article_number", "lang"], "additionalProperties": False},
    }},
    {"type": "function", "function": {
        "name": "ch_get_act_history",
        "description": (
            "List the consolidated editions of a Swiss federal act (validity dates, which one is in force "
            "today, gaps in the record). With article_number, also tell for each edition whether that "
            "article exists and whether its text was added, modified, unchanged or removed compared with "
            "the previous edition."),
        "parameters": {"type": "object", "properties": {
            "sr_number": _SR_PARAM, "lang": _LANG_PARAM, "article_number": _ARTICLE_PARAM},
            "required": ["sr_number", "lang"], "additionalProperties": False},
    }},
    {"type": "function", "function": {
        "name": "ch_get_act_text",
        "description": (
            "Get the full text of a Swiss federal act, article by article in document order, as in force on "
            "a given date. Without as_of the tool returns the edition in force today. Long acts can be read "
            "in pages with offset and limit (counted in articles)."),
        "parameters": {"type": "object", "properties": {
            "sr_number": _SR_PARAM, "lang": _LANG_PARAM, "as_of": _AS_OF_PARAM,
            "offset": {"type": "integer", "minimum": 0, "description": "Articles to skip (default 0)."},
            "limit": {"type": "integer", "minimum": 1, "description": "Most articles to return (default all)."}},
            "required": ["sr_number", "lang"], "additionalProperties": False},
    }},
]

TOOL_NAMES: tuple[str, ...] = tuple(spec["function"]["name"] for spec in TOOL_SPECS)


def _arguments(name: str, arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    """Check model-supplied arguments against the tool's schema; numbers given for string fields are
    accepted as their decimal text (models often send article 24 as a number)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise InvalidArgument(f"{name}: arguments are not valid JSON: {exc}", tool=name) from None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidArgument(f"{name}: arguments must be a JSON object", tool=name)
    schema = next(s["function"]["parameters"] for s in TOOL_SPECS if s["function"]["name"] == name)
    props = schema["properties"]
    unknown = sorted(set(arguments) - set(props))
    missing = [k for k in schema["required"] if arguments.get(k) is None]
    if unknown or missing:
        raise InvalidArgument(
            f"{name}: " + "; ".join(filter(None, [
                f"missing {', '.join(missing)}" if missing else "",
                f"unknown {', '.join(unknown)}" if unknown else ""])) + f" (parameters: {', '.join(props)})",
            tool=name, missing=missing, unknown=unknown)
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        if value is None:
            continue      # an explicit null is the same as leaving an optional argument out
        kind = props[key]["type"]
        if kind == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        ok = isinstance(value, str) if kind == "string" else isinstance(value, int) and not isinstance(value, bool)
        if not ok:
            raise InvalidArgument(f"{name}: {key} must be a {kind}, got {value!r}", tool=name, argument=key)
        out[key] = value
    return out


def call_tool(tools: PitTools, name: str, arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    """Run one tool call from a model and return its JSON-able result, or `{"error": {...}}` for a call
    that cannot be answered (unknown tool, bad arguments, unknown act/article/lang, no edition on the
    date) - the agentic loop hands either back to the model. Store failures still raise: they are the
    run's problem, not the model's."""
    try:
        if name not in TOOL_NAMES:
            raise UnknownTool(f"unknown tool {name!r}; tools are {', '.join(TOOL_NAMES)}", tool=name,
                              tools=list(TOOL_NAMES))
        return getattr(tools, name)(**_arguments(name, arguments)).to_dict()
    except PitError as exc:
        return exc.to_dict()
