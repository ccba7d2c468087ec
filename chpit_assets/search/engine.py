"""Ranked search over the articles of the editions in force on a date.

Strategies, each a ranking of the same candidates (articles of editions in force on `as_of`,
optionally of one SR number), fused by reciprocal rank fusion:

| strategy | what it ranks | why |
|---|---|---|
| `citation` | the article the query cites, number and act ("Art. 24 DSG", "art. 336a CO (RS 220)") | a cited article is the strongest signal there is, and BM25 barely sees short numbers |
| `number` | articles carrying the cited number, in any act (when the act is not named or not found) | "Art. 24" alone still narrows the field |
| `phrase` | BM25 over `words`, each quoted span of the query («…», "…") as an FTS5 phrase | the asker's own quotation is the law's wording, in order |
| `words_all` | BM25 over `words`, every query word required | precise when the query's wording is the law's |
| `words_any` | BM25 over `words`, any query word | recall when some query words are not in the text |
| `grams` | BM25 over character 5-grams, any gram | German compounds and inflections ("Datenschutzgesetzes") |

Terms in more than MAX_DF_SHARE of all articles ("der", "art", "1", the question's own "lautet")
are dropped from the text strategies before they run (their counts come from FTS5's vocabulary
tables): their IDF is near zero, so they change no ranking, yet each matches most of the index
and made a question cost 0.7 s instead of milliseconds at CH-PiT scale. When that would drop every
word of a query ("protezione dei dati" where most articles are about data protection), its words
are searched all together and as a phrase instead, and an empty result carries a hint (`tool.py`).

A query that cites an SR number the index knows ("(SR 235.1)") is limited to that act, as if
`sr_number` had been passed: the act is the asker's own scope, and wording (a quoted phrase
above all) repeats across acts.

RRF: score(article) = sum over strategies s of WEIGHTS[s] / (RRF_K + rank_s(article)), rank from 1,
RRF_K = 60 (the constant the case-law search engine uses; it damps the difference between rank 1
and rank 2 of one strategy so that agreement between strategies decides). Ties are broken by SR
number, edition and article key, never by row ids, so an index built incrementally ranks exactly
as one built from scratch.
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from .index import INDEX_VERSION, WORD_WEIGHTS, SearchIndexError, index_path, number_key, verify
from .query import Citation, fold, grams, match_expression, parse_citation, phrase_expression, quoted_phrases, words

RRF_K = 60
# A cited article outweighs rank 1 in all three text strategies together (4/61 > 2.8/61); `search`
# relies on that to skip them when only the best hit is asked for and one article is cited.
WEIGHTS = {"citation": 4.0, "phrase": 4.0, "number": 1.0, "words_all": 1.0, "words_any": 1.0, "grams": 0.8}
CANDIDATES = 100  # per strategy: deep enough that fusion can promote what one strategy ranks low
MAX_DF_SHARE = 0.10
SNIPPET_WORDS = 30


@dataclass(frozen=True)
class Hit:
    sr_number: str
    abbreviation: str | None
    article_number: str | None
    e_id: str
    occurrence: int
    heading: str | None
    version_id: int
    date_applicability: str
    date_end_applicability: str | None
    snippet: str
    score: float
    strategies: dict[str, int]  # strategy -> rank of this article in it

    def as_dict(self) -> dict:
        return {
            "sr_number": self.sr_number,
            "abbreviation": self.abbreviation,
            "article_number": self.article_number,
            "e_id": self.e_id,
            "occurrence": self.occurrence,
            "heading": self.heading,
            "version": {
                "version_id": self.version_id,
                "date_applicability": self.date_applicability,
                "date_end_applicability": self.date_end_applicability,
            },
            "snippet": self.snippet,
            "score": round(self.score, 6),
            "strategies": self.strategies,
        }


# Candidates: articles of editions covering the date (inclusive end), optionally of one SR number.
_IN_FORCE = (
    "e.date_applicability <= :as_of AND (e.date_end_applicability IS NULL OR "
    "e.date_end_applicability >= :as_of) AND (:sr IS NULL OR e.sr_number = :sr)"
)


VERIFY_RETRIES = (0.05, 0.2, 0.5, 1.0)
"""Seconds a reader waits before it checks a file that does not match its digest again."""


class SearchIndex:
    """A read-only handle on `{lang}.sqlite`, reopened when a build swapped a new file in."""

    def __init__(self, search_dir: Path | str, lang: str):
        self.path = index_path(search_dir, lang)
        self.lang = lang
        self._db: sqlite3.Connection | None = None
        self._inode: tuple[int, int] | None = None
        self._articles = 0
        self._df: dict[tuple[str, str], int] = {}  # (table, term) -> document count, of the open file
        self._sr_numbers: frozenset[str] = frozenset()  # the open file's acts

    def _connection(self) -> sqlite3.Connection:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            raise SearchIndexError(
                f"no search index for {self.lang!r} at {self.path}; materialise search_index[{self.lang}]"
            ) from None
        inode = (stat.st_ino, stat.st_mtime_ns)
        if self._db is None or inode != self._inode:
            if self._db is not None:
                self._db.close()
                self._db = None
            self._verify()
            # Not immutable=1: a build updates the file in place (index.py), and SQLite's locking is
            # what keeps a reader out of its transaction.
            self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
            try:
                version = self._db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
                if version is None or version[0] != INDEX_VERSION:
                    raise SearchIndexError(
                        f"{self.path} has index version {version and version[0]!r}, "
                        f"this code reads {INDEX_VERSION!r}; materialise search_index[{self.lang}]"
                    )
                self._inode = inode
                self._articles = self._db.execute("SELECT count(*) FROM article").fetchone()[0]
                self._sr_numbers = frozenset(r[0] for r in self._db.execute("SELECT DISTINCT sr_number FROM edition"))
            except sqlite3.DatabaseError as error:
                # An update killed inside its transaction left its journal: SQLite will not read
                # past it read-only, and the next build rolls it back.
                self.close()
                raise SearchIndexError(
                    f"search index refused: {self.path} cannot be read ({error}); "
                    f"materialise search_index[{self.lang}] to repair it"
                ) from error
            except SearchIndexError:
                self.close()
                raise
            self._df = {}
        return self._db

    def _verify(self) -> None:
        # A build writes the digest right after its commit or right before its rename: while it
        # hashes the new file (a few tenths of a second at CH-PiT scale) the two disagree.
        for wait in VERIFY_RETRIES:
            try:
                verify(self.path, self.lang)
                return
            except SearchIndexError:
                time.sleep(wait)
        verify(self.path, self.lang)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def search(self, query: str, as_of: date, sr_number: str | None = None, limit: int = 10) -> list[Hit]:
        db = self._connection()
        citation = parse_citation(query, self.lang)
        if sr_number is None and citation.sr_number in self._sr_numbers:
            # A question that names its act ("DSG (SR 235.1)") is about that act: its words and
            # phrases are searched there, not in the hundred other acts that share them.
            sr_number = citation.sr_number
        params = {"as_of": as_of.isoformat(), "sr": sr_number}
        tokens = words(query, self.lang)
        rankings: dict[str, list[int]] = {}
        if citation.article is not None:
            named, others = self._cited(db, citation, params)
            rankings["citation" if named else "number"] = named or others
        weights = ", ".join(str(w) for w in WORD_WEIGHTS)
        phrases = [e for e in (phrase_expression(p, self.lang) for p in quoted_phrases(query)) if e]
        if limit == 1 and len(rankings.get("citation", ())) == 1 and not phrases:
            # One article carries the cited number in the cited act: its 4/61 beats any other article's
            # best from the text strategies, (1 + 1 + 0.8)/61, so the best hit is decided and they are
            # not run (a model-free system's whole run over a language is mostly this case).
            return self._fuse(db, rankings, tokens, limit)
        # Scoped to one act, the text strategies read only the row-id ranges of its editions in force
        # (an edition's articles are inserted together, so they are one range): FTS5 then seeks
        # into each posting list instead of scoring every match in the index and filtering after.
        ranges = (
            None
            if sr_number is None
            else db.execute(
                f"SELECT min(a.id), max(a.id) FROM article a JOIN edition e USING (version_id) WHERE {_IN_FORCE} "
                "GROUP BY e.version_id ORDER BY e.version_id",
                params,
            ).fetchall()
        )
        if phrases:
            # Phrases are position lookups, cheap whatever their words' frequency: no term is dropped.
            rankings["phrase"] = self._ranked(
                db, "words", f"bm25(words, {weights})", " OR ".join(phrases), params, ranges
            )
        informative = self.informative(db, "words", tokens)
        for name, operator in (("words_all", "AND"), ("words_any", "OR")):
            expression = match_expression(informative, operator)
            if expression:
                rankings[name] = self._ranked(db, "words", f"bm25(words, {weights})", expression, params, ranges)
        common = [t for t in dict.fromkeys(tokens) if self._df.get(("words", t), 0) > 0]
        if not informative and not phrases and common:
            # Every word is common ("protection des données" in an index of data protection acts): dropping
            # them all left nothing to search (issue 23 item 8). Their sequence as a phrase, and all of them
            # together, are still selective; this costs what dropping saves, but only for such a query.
            rankings["phrase"] = self._ranked(
                db,
                "words",
                f"bm25(words, {weights})",
                phrase_expression(" ".join(common), self.lang) or "",
                params,
                ranges,
            )
            rankings["words_all"] = self._ranked(
                db, "words", f"bm25(words, {weights})", match_expression(common, "AND") or "", params, ranges
            )
        gram_expression = match_expression(self.informative(db, "grams", grams(" ".join(tokens))), "OR")
        if gram_expression:
            rankings["grams"] = self._ranked(db, "grams", "bm25(grams)", gram_expression, params, ranges)
        return self._fuse(db, rankings, tokens, limit)

    def informative(self, db: sqlite3.Connection, table: str, tokens: list[str]) -> list[str]:
        """`tokens` in the index and in at most MAX_DF_SHARE of its articles, in query order."""
        unique = list(dict.fromkeys(tokens))
        if not unique:
            return []
        # One equality lookup per term not seen before (fts5vocab answers `term = ?` from the index; `term
        # IN (...)` scanned the whole vocabulary, 17 ms a question at CH-PiT scale); the counts are kept
        # for this file, since questions repeat their template's words.
        for t in unique:
            if (table, t) not in self._df:
                row = db.execute(f"SELECT doc FROM {table}_vocab WHERE term = ?", [t]).fetchone()
                self._df[(table, t)] = row[0] if row else 0
        counts = {t: self._df[(table, t)] for t in unique}
        limit = max(1, MAX_DF_SHARE * self._articles)
        return [t for t in unique if 0 < counts.get(t, 0) <= limit]

    def _ranked(
        self,
        db: sqlite3.Connection,
        table: str,
        rank: str,
        expression: str,
        params: dict,
        ranges: list[tuple[int, int]] | None,
    ) -> list[int]:
        """The best CANDIDATES matches in force, by BM25 (global statistics either way), then the key."""
        sql = (
            f"SELECT a.id, {rank} AS score, e.sr_number, e.version_id, a.e_id, a.occurrence FROM {table} f "
            f"JOIN article a ON a.id = f.rowid JOIN edition e USING (version_id) "
            f"WHERE {table} MATCH :q AND {_IN_FORCE} {{within}} "
            f"ORDER BY score, e.sr_number, e.version_id, a.e_id, a.occurrence LIMIT {CANDIDATES}"
        )
        if ranges is None:
            rows = db.execute(sql.format(within=""), {**params, "q": expression}).fetchall()
        else:
            rows = [
                row
                for lo, hi in ranges
                for row in db.execute(
                    sql.format(within="AND f.rowid BETWEEN :lo AND :hi"),
                    {**params, "q": expression, "lo": lo, "hi": hi},
                )
            ]
            rows.sort(key=lambda r: r[1:])
        return [r[0] for r in rows[:CANDIDATES]]

    def _cited(self, db: sqlite3.Connection, citation: Citation, params: dict) -> tuple[list[int], list[int]]:
        """Articles carrying the cited number: (those of the act the query names, by SR number or
        abbreviation; all of them), each the top-level e_id before a nested one, then the first
        occurrence (B9, R2)."""
        columns = "a.id, e.sr_number, e.abbreviation, a.e_id, a.occurrence, e.version_id"
        # The same rows either way, sorted below. Within one act, from its editions in force to their
        # articles (`+` keeps SQLite off the number index: every act has an Art. 1, and reading all
        # of them to keep one act's cost 20 ms a question at CH-PiT scale); across acts, by number.
        sql = (
            f"SELECT {columns} FROM edition e CROSS JOIN article a ON a.version_id = e.version_id "
            f"WHERE +a.number_key = :n AND {_IN_FORCE}"
            if params["sr"] is not None
            else f"SELECT {columns} FROM article a JOIN edition e USING (version_id) WHERE a.number_key = :n AND {_IN_FORCE}"
        )
        rows = db.execute(sql, {**params, "n": number_key(citation.article)}).fetchall()
        abbreviation = fold(citation.abbreviation, self.lang) if citation.abbreviation else None

        def names_act(row: tuple) -> bool:
            sr, abbr = row[1], row[2]
            return (citation.sr_number is not None and sr == citation.sr_number) or (
                abbreviation is not None and abbr is not None and fold(abbr, self.lang) == abbreviation
            )

        rows.sort(key=lambda r: ("/" in r[3], r[4], r[1], r[5], r[3]))
        return [r[0] for r in rows if names_act(r)][:CANDIDATES], [r[0] for r in rows][:CANDIDATES]

    def _fuse(self, db: sqlite3.Connection, rankings: dict[str, list[int]], tokens: list[str], limit: int) -> list[Hit]:
        scores: dict[int, float] = {}
        ranks: dict[int, dict[str, int]] = {}
        for name, ids in rankings.items():
            for rank, article in enumerate(ids, start=1):
                scores[article] = scores.get(article, 0.0) + WEIGHTS[name] / (RRF_K + rank)
                ranks.setdefault(article, {})[name] = rank
        if not scores:
            return []
        keys = {
            r[0]: r[1:]
            for r in db.execute(
                "SELECT a.id, e.sr_number, e.version_id, a.e_id, a.occurrence FROM article a JOIN edition e "
                f"USING (version_id) WHERE a.id IN ({','.join('?' * len(scores))})",
                list(scores),
            )
        }
        top = sorted(scores, key=lambda i: (-scores[i], *keys[i]))[:limit]
        rows = {
            r[0]: r[1:]
            for r in db.execute(
                "SELECT a.id, e.sr_number, e.abbreviation, a.article_number, a.e_id, a.occurrence, a.heading, "
                "e.version_id, e.date_applicability, e.date_end_applicability, a.text "
                f"FROM article a JOIN edition e USING (version_id) WHERE a.id IN ({','.join('?' * len(top))})",
                top,
            )
        }
        hits = []
        for article in top:
            sr, abbr, number, e_id, occurrence, heading, version_id, start, end, text = rows[article]
            hits.append(
                Hit(
                    sr,
                    abbr,
                    number,
                    e_id,
                    occurrence,
                    heading,
                    version_id,
                    start,
                    end,
                    snippet(text, tokens, self.lang),
                    scores[article],
                    ranks[article],
                )
            )
        return hits


_WORD = re.compile(r"\S+")


def snippet(text: str, tokens: list[str], lang: str, size: int = SNIPPET_WORDS) -> str:
    """About `size` words of the original text around its first word that matches a query token
    (compared folded), with "…" where it is cut; the text's start when no word matches."""
    spans = list(_WORD.finditer(text))
    wanted = set(tokens)
    first = next((n for n, m in enumerate(spans) if set(fold(m[0], lang).split()) & wanted), 0)
    start = max(0, min(first - size // 3, len(spans) - size))
    chosen = spans[start : start + size]
    if not chosen:
        return ""
    body = text[chosen[0].start() : chosen[-1].end()]
    return ("…" if start > 0 else "") + body + ("…" if start + size < len(spans) else "")
