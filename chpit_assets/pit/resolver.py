"""How the point-in-time tools (`chpit_assets.pit.tools`) and the oracle resolve a call to rows.

Resolution, shared by every entry point (`Resolver`):

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

from dataclasses import dataclass
from datetime import date

import duckdb

from chpit_assets.corpus.schema import ALIAS_PREFERENCE

from .errors import (
    DateBeforeFirstEdition,
    NoEditionInLanguage,
    NoEditionOnDate,
    UnknownAct,
    UnknownArticle,
    clip,
)
from .keys import ARTICLE_KEY_SQL, article_key
from .results import ActRef, ArticleChange, Carrier, EditionRef


@dataclass(frozen=True)
class ResolvedAct:
    ref: ActRef
    label: str  # how errors name it: "SR 235.1 (DSG)" or "act_id 123"


@dataclass(frozen=True)
class ArticleRow:
    """One stored article (ch_act_article)."""

    version_id: int
    e_id: str
    occurrence: int
    article_number: str | None
    heading: str | None
    text: str

    def carrier(self) -> Carrier:
        return Carrier(self.e_id, self.occurrence, self.heading)


ROW_COLUMNS = "version_id, e_id, occurrence, article_number, heading, text"
EDITION_COLUMNS = "version_id, date_applicability, date_end_applicability, eli, source"  # EditionRef's fields


def act_columns(lang: str) -> str:
    """The columns of an act row (ActRef's first six fields); `lang` is one of LANGS (the tools check),
    so the title column is one of the five."""
    return f"act_id, sr_number, eli, abbreviation, enforcement_status, title_{lang}"


def pick_carrier(rows: list[ArticleRow]) -> tuple[ArticleRow, list[ArticleRow]]:
    """R2/B9 among an edition's articles carrying one number: un-nested e_id first, then the lowest
    occurrence; `min` is stable, so document order breaks what remains."""
    chosen = min(rows, key=lambda r: ("/" in r.e_id, r.occurrence))
    return chosen, [r for r in rows if r is not chosen]


class Resolver:
    """One connection's worth of lookups; the single code path of the tools and the oracle (R2).

    The rules live here; the rows they read come from the fetch methods (`acts_with_sr`,
    `act_with_id`, `alias`, `parsed_editions`, `with_e_id`, `by_number`, `edition_articles`),
    each a query of its own. `CachedResolver` answers the same methods from a session's
    `LookupCache` instead (issue 27.4), so both paths resolve by this one code."""

    def __init__(self, con: duckdb.DuckDBPyConnection, lang: str):
        self.con = con
        self.lang = lang

    def _rows(self, sql: str, params: list) -> list[tuple]:
        return self.con.execute(sql, params).fetchall()

    # fetch -----------------------------------------------------------------
    def acts_with_sr(self, sr_number: str) -> list[tuple]:
        """Federal acts with the SR number: ACT_COLUMNS + date_entry_in_force, has_lang."""
        return self._rows(
            f"SELECT {act_columns(self.lang)}, date_entry_in_force, "
            "EXISTS (SELECT 1 FROM ch_act_version v WHERE v.act_id = a.act_id AND v.lang = ? "
            "        AND v.stage = 'parsed') AS has_lang "
            "FROM ch_act a WHERE sr_number = ? AND jurisdiction = 'CH'",
            [self.lang, sr_number],
        )

    def act_with_id(self, act_id: int) -> tuple | None:
        rows = self._rows(f"SELECT {act_columns(self.lang)} FROM ch_act WHERE act_id = ?", [act_id])
        return rows[0] if rows else None

    def alias(self, act_id: int) -> str | None:
        """B7's abbreviation of the act in this language (not German)."""
        alias = self._rows(
            f"SELECT abbr FROM ch_act_alias WHERE act_id = ? AND lang = ? ORDER BY {ALIAS_PREFERENCE} LIMIT 1",
            [act_id, self.lang],
        )
        return alias[0][0] if alias else None

    def parsed_editions(self, act_id: int) -> list[EditionRef]:
        return [
            EditionRef(*r)
            for r in self._rows(
                f"SELECT {EDITION_COLUMNS} FROM ch_act_version "
                "WHERE act_id = ? AND lang = ? AND stage = 'parsed' ORDER BY date_applicability, version_id",
                [act_id, self.lang],
            )
        ]

    def article_rows(self, version_ids: list[int], where: str, params: list) -> list[ArticleRow]:
        """Articles of the editions matching `where`, in document order (ingest inserts an edition's
        articles in document order, so rowid order is document order)."""
        marks = ", ".join("?" * len(version_ids))
        return [
            ArticleRow(*r)
            for r in self._rows(
                f"SELECT {ROW_COLUMNS} FROM ch_act_article WHERE version_id IN ({marks}) AND ({where}) ORDER BY rowid",
                [*version_ids, *params],
            )
        ]

    def with_e_id(self, version_id: int, e_id: str) -> list[ArticleRow]:
        return self.article_rows([version_id], "e_id = ?", [e_id])

    def by_number(self, version_ids: list[int], article: str) -> list[ArticleRow]:
        return self.article_rows(version_ids, f"{ARTICLE_KEY_SQL} = ?", [article_key(article)])

    def edition_articles(self, version_id: int) -> list[ArticleRow]:
        return self.article_rows([version_id], "TRUE", [])

    # act -------------------------------------------------------------------
    def _act_ref(self, row: tuple, others: list[int]) -> ActRef:
        act_id, sr_number, eli, abbreviation, status, title = row[:6]
        if self.lang != "de":
            abbreviation = self.alias(act_id)
        return ActRef(act_id, sr_number, eli, abbreviation, title, status, others)

    def act_by_sr(self, sr_number: str) -> ResolvedAct:
        rows = self.acts_with_sr(sr_number)
        if not rows:
            raise UnknownAct(f"no federal act with SR number {clip(sr_number)}", sr_number=clip(sr_number))
        rows = sorted(rows, key=lambda r: (r[4] != 0, not r[7], -(r[6] or date.min).toordinal(), r[0]))
        ref = self._act_ref(rows[0], [r[0] for r in rows[1:]])
        label = f"SR {sr_number}" + (f" ({ref.abbreviation})" if ref.abbreviation else "")
        return ResolvedAct(ref, label)

    def act_by_id(self, act_id: int) -> ResolvedAct:
        row = self.act_with_id(act_id)
        if row is None:
            raise UnknownAct(f"no act with act_id {act_id}", act_id=act_id)
        return ResolvedAct(self._act_ref(row, []), f"act_id {act_id} (SR {row[1]})")

    # edition ---------------------------------------------------------------
    def editions(self, act: ResolvedAct) -> list[EditionRef]:
        """Parsed editions of the act in the language, oldest first (ties by version_id, as
        ch_act_change pairs them); never empty."""
        editions = self.parsed_editions(act.ref.act_id)
        if not editions:
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
        return editions

    @staticmethod
    def covering(editions: list[EditionRef], day: date) -> EditionRef | None:
        hits = [
            e
            for e in editions
            if e.date_applicability <= day and (e.date_end_applicability is None or e.date_end_applicability >= day)
        ]
        # Overlapping editions: the later start wins (see the module docstring).
        return max(hits, key=lambda e: (e.date_applicability, e.version_id), default=None)

    def edition_on(self, act: ResolvedAct, day: date) -> EditionRef:
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
    def article(
        self,
        act: ResolvedAct,
        edition: EditionRef,
        day: date,
        *,
        article: str | None = None,
        e_id: str | None = None,
        occurrence: int | None = None,
    ) -> tuple[ArticleRow, list[ArticleRow]]:
        if e_id is not None:
            rows = self.with_e_id(edition.version_id, e_id)
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
            return pick_carrier(rows)
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


def article_block(row: ArticleRow) -> str:
    """One article in the full text: "Art. <number> <heading>", then its paragraphs."""
    title = f"Art. {row.article_number}" if row.article_number else row.e_id
    return (f"{title} {row.heading}" if row.heading else title) + "\n" + row.text
