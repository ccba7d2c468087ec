"""A session's lookup cache (issue 27.4): the rows `Resolver` reads, fetched per language and per
edition instead of four point queries per call.

A model-free run asks thousands of lookups in one `PitTools.session()`; each used to cost four
DuckDB queries (act, alias or editions, the article, its number's other carriers), and a DuckDB
query costs a millisecond whatever it returns. Here:
 * a language's acts, aliases and parsed editions are read once, in one query each, when the
   session first resolves in that language (they are small: one row per act or edition);
 * an edition's articles are read together, with those of the act's neighbouring editions, in
   one query, the first time any of them is asked for, and kept while the cached texts stay
   under `max_chars` (the least recently used edition goes first), so the five systems over one
   language read each act about once.
`CachedResolver` answers `Resolver`'s fetch methods from here; the rules that pick the act, the
edition and the article are `Resolver`'s, unchanged, so a cached answer is the uncached one.

The cache lives as long as the session: the session reads through one read-only connection, and
no writer changes the file under it meanwhile (DuckDB locks other processes out; a run's session
is on a store this process does not hold for writing, `ChpitStore.released_store`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import duckdb

from chpit_assets.corpus.schema import ALIAS_PREFERENCE

from .keys import ARTICLE_KEY_SQL, article_key
from .resolver import EDITION_COLUMNS, ROW_COLUMNS, ArticleRow, Resolver, act_columns
from .results import EditionRef

# Texts kept across editions (characters): the texts of every parsed edition of one language at
# CH-PiT scale (~110 M in German), so five systems in a row read each edition once; ~120 MB at most.
MAX_CHARS = 120_000_000
ACT_BATCH = 8  # editions of one act read in one query: all of them at CH-PiT scale (4 per act)


@dataclass
class _Language:
    """One language's acts and parsed editions, as `Resolver`'s fetch methods return them."""

    acts: dict[int, tuple] = field(default_factory=dict)  # act_id -> act_columns row
    by_sr: dict[str, list[tuple]] = field(default_factory=dict)  # federal acts: + date_entry_in_force, has_lang
    aliases: dict[int, str] = field(default_factory=dict)  # act_id -> B7's preferred abbreviation
    editions: dict[int, list[EditionRef]] = field(default_factory=dict)  # act_id -> oldest first
    act_of: dict[int, int] = field(default_factory=dict)  # version_id -> act_id


# An edition's articles in document order: (rowid, the number's ARTICLE_KEY_SQL, the row).
_Articles = list[tuple[int, str | None, ArticleRow]]


class LookupCache:
    """The rows of one session, shared by its threads (each resolves through its own cursor)."""

    def __init__(self, max_chars: int = MAX_CHARS):
        self.max_chars = max_chars
        self._lock = threading.Lock()
        self._langs: dict[str, _Language] = {}
        self._articles: OrderedDict[int, _Articles] = OrderedDict()
        self._chars = 0
        self.queries = 0  # store queries made, for the benchmark and the tests

    def language(self, con: duckdb.DuckDBPyConnection, lang: str) -> _Language:
        with self._lock:
            found = self._langs.get(lang)
            if found is None:
                found = self._langs[lang] = self._load_language(con, lang)
            return found

    def _load_language(self, con: duckdb.DuckDBPyConnection, lang: str) -> _Language:
        out = _Language()
        for act_id, *rest in con.execute(
            f"SELECT act_id, {EDITION_COLUMNS} FROM ch_act_version "
            "WHERE lang = ? AND stage = 'parsed' ORDER BY act_id, date_applicability, version_id",
            [lang],
        ).fetchall():
            out.editions.setdefault(act_id, []).append(EditionRef(*rest))
            out.act_of[rest[0]] = act_id
        for *row, entry_in_force, jurisdiction in con.execute(
            f"SELECT {act_columns(lang)}, date_entry_in_force, jurisdiction FROM ch_act"
        ).fetchall():
            out.acts[row[0]] = tuple(row)
            if jurisdiction == "CH":
                out.by_sr.setdefault(row[1], []).append((*row, entry_in_force, row[0] in out.editions))
        # Ordered as `Resolver.alias` orders one act's: the first row of each act is its LIMIT 1.
        for act_id, abbr in con.execute(
            f"SELECT act_id, abbr FROM ch_act_alias WHERE lang = ? ORDER BY act_id, {ALIAS_PREFERENCE}", [lang]
        ).fetchall():
            out.aliases.setdefault(act_id, abbr)
        self.queries += 3
        return out

    def articles(
        self, con: duckdb.DuckDBPyConnection, version_ids: list[int], also: list[int] | None = None
    ) -> list[_Articles]:
        """Each edition's articles. When one is missing, it is read with those of `also` not read yet,
        in one query: one `version_id = ?` per edition, UNION ALL (DuckDB 2.0 pushes an equality into
        the scan, but turned an IN list of four editions into a join over the whole table, five
        times slower than four queries)."""
        with self._lock:
            missing = []
            if any(v not in self._articles for v in version_ids):
                missing = [v for v in dict.fromkeys([*version_ids, *(also or ())]) if v not in self._articles]
            if missing:
                loaded: dict[int, _Articles] = {v: [] for v in missing}
                one = f"(SELECT rowid, {ARTICLE_KEY_SQL}, {ROW_COLUMNS} FROM ch_act_article WHERE version_id = ?)"
                rows = con.execute(" UNION ALL ".join([one] * len(missing)), missing).fetchall()
                rows.sort(key=lambda r: r[0])  # document order; sorted here, DuckDB's ORDER BY cost more
                for rowid, key, *row in rows:
                    loaded[row[0]].append((rowid, key, ArticleRow(*row)))
                self.queries += 1
                for version_id, edition in loaded.items():
                    self._articles[version_id] = edition
                    self._chars += sum(len(r.text) for _, _, r in edition)
            asked = list(dict.fromkeys(version_ids))
            for v in asked:
                self._articles.move_to_end(v)
            out = [self._articles[v] for v in version_ids]
            # The editions just asked for stay, whatever the budget: they are this call's answer.
            while self._chars > self.max_chars and len(self._articles) > len(asked):
                _, dropped = self._articles.popitem(last=False)
                self._chars -= sum(len(r.text) for _, _, r in dropped)
            return out


class CachedResolver(Resolver):
    """`Resolver` reading its rows from a session's `LookupCache`; only its fetch methods differ."""

    def __init__(self, con: duckdb.DuckDBPyConnection, lang: str, cache: LookupCache):
        super().__init__(con, lang)
        self.cache = cache
        self.rows = cache.language(con, lang)

    def acts_with_sr(self, sr_number: str) -> list[tuple]:
        return self.rows.by_sr.get(sr_number, [])

    def act_with_id(self, act_id: int) -> tuple | None:
        return self.rows.acts.get(act_id)

    def alias(self, act_id: int) -> str | None:
        return self.rows.aliases.get(act_id)

    def parsed_editions(self, act_id: int) -> list[EditionRef]:
        return self.rows.editions.get(act_id, [])

    def _neighbours(self, version_ids: list[int]) -> list[int]:
        """The editions of the same act next to the asked ones, read in the same query: an act's
        items ask for several of its editions (the item's date, today's)."""
        out = []
        for v in version_ids:
            ids = [e.version_id for e in self.rows.editions.get(self.rows.act_of.get(v, -1), [])]
            at = ids.index(v) if v in ids else 0
            out += ids[max(0, at - ACT_BATCH // 2) : at + ACT_BATCH // 2]
        return out

    def _matching(self, version_ids: list[int], keep) -> list[ArticleRow]:
        editions = self.cache.articles(self.con, version_ids, self._neighbours(version_ids))
        rows = [entry for edition in editions for entry in edition]
        if len(version_ids) > 1:
            rows.sort(key=lambda entry: entry[0])  # the query's ORDER BY rowid, across editions
        return [row for _, key, row in rows if keep(key, row)]

    def with_e_id(self, version_id: int, e_id: str) -> list[ArticleRow]:
        return self._matching([version_id], lambda key, row: row.e_id == e_id)

    def by_number(self, version_ids: list[int], article: str) -> list[ArticleRow]:
        wanted = article_key(article)
        return self._matching(version_ids, lambda key, row: key == wanted)

    def edition_articles(self, version_id: int) -> list[ArticleRow]:
        return self._matching([version_id], lambda key, row: True)
