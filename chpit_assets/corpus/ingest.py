"""Fetched edition files -> the store's ch_act, ch_act_alias, ch_act_version, ch_act_article, per language.

One language is written in one transaction: a failed partition leaves the
previous good data. An edition whose file (sha256) and parser version are
unchanged keeps its stored articles and is not parsed again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import polars as pl

from chpit_assets.akn.errors import AknError
from chpit_assets.akn.parser import PARSER_VERSION, parse_edition
from chpit_assets.faults import kill_point
from chpit_assets.fedlex.catalog import Catalog, CatalogAct, CatalogEdition
from chpit_assets.markdown import table

from .schema import act_id_for, version_id_for
from .store import Store, insert, registered, sync_rows

PARSED = "parsed"
# "Datenschutzgesetz, DSG" -> "DSG": the last comma-separated part of a title's final parenthesis.
_TITLE_PAREN = re.compile(r"\(([^()]*)\)\s*$")
_ABBREVIATION = re.compile(r"^[A-ZÄÖÜ][A-Za-zÄÖÜäöüÀ-ÿ0-9.\-/]{0,15}$")


class FetchedEdition(Protocol):
    """What the downloader hands over for one catalog edition."""

    edition: CatalogEdition
    path: Path | None
    sha256: str | None
    stage: str            # 'downloaded' | 'cached' (usable) or a failure stage ('no_file', 'download', 'validate')
    error: str | None


USABLE_STAGES = frozenset({"downloaded", "cached"})


@dataclass(frozen=True)
class EditionFailure:
    act_eli: str
    sr_number: str
    consolidation: str
    lang: str
    stage: str
    error: str
    url: str | None


@dataclass
class IngestReport:
    lang: str
    acts: int = 0
    editions: int = 0
    parsed: int = 0
    reparsed: int = 0
    reused: int = 0
    articles: int = 0
    failures: list[EditionFailure] = field(default_factory=list)
    data_version: str = ""

    def failures_by_stage(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for f in self.failures:
            counts[f.stage] = counts.get(f.stage, 0) + 1
        return dict(sorted(counts.items()))

    def failures_markdown(self) -> str:
        if not self.failures:
            return "No failures."
        return table(
            ["SR", "edition", "lang", "stage", "error"],
            [(f.sr_number, f.consolidation, f.lang, f.stage, f.error[:300]) for f in self.failures],
        )


def title_paren_abbreviation(title: str | None) -> str | None:
    """The abbreviation a title carries in its closing parenthesis, if it looks like one."""
    m = _TITLE_PAREN.search(title or "")
    if not m:
        return None
    candidate = m.group(1).split(",")[-1].strip()
    return candidate if _ABBREVIATION.match(candidate) and any(c.isupper() for c in candidate) else None


ARTICLE_BATCH = 50_000
"""Articles inserted per statement: bounds memory to one batch, not one language's whole text."""


def store_editions(store: Store, catalog: Catalog, lang: str, fetched: Sequence[FetchedEdition]) -> IngestReport:
    """Parse what was fetched for `lang` and replace that language's rows in the store atomically.

    One transaction: a failure anywhere leaves the previous rows. Editions whose file and parser
    version are unchanged keep their stored articles; the rest are parsed and inserted in batches.
    """
    catalog = catalog.for_lang(lang)
    report = IngestReport(lang=lang, acts=len(catalog.acts), editions=len(catalog.editions))
    by_consolidation = {f.edition.consolidation: f for f in fetched if f.edition.lang == lang}
    # One transaction for the whole language (one open and one checkpoint): read what is stored,
    # decide every edition's fate, then write.
    with store.transaction() as con:
        cursor = con.execute(
            "SELECT version_id, sha256, parser_version, stage, n_articles, title, short_form "
            "FROM ch_act_version WHERE lang = ?", [lang])
        columns = [d[0] for d in cursor.description]
        previous = {row[0]: dict(zip(columns, row)) for row in cursor.fetchall()}
        # Decide every edition's fate before touching the store: failed, reused as stored, or to parse.
        version_rows: list[dict] = []
        to_parse: list[tuple[dict, CatalogAct, CatalogEdition, Path]] = []
        reused: set[int] = set()
        act_ids = {act.eli: act_id_for(act.eli) for act in catalog.acts}
        for edition in sorted(catalog.editions, key=lambda e: (e.act_eli, e.date_applicability)):
            act = catalog.act(edition.act_eli)
            version_id = version_id_for(edition.consolidation, lang)
            got = by_consolidation.get(edition.consolidation)
            row = {
                "version_id": version_id,
                "act_id": act_ids[act.eli],
                "lang": lang,
                "date_applicability": edition.date_applicability,
                "date_end_applicability": edition.date_end_applicability,
                "eli": edition.consolidation,
                "source": "fedlex",
                "stage": PARSED,
                "error": None,
                "file_url": edition.file_url,
                "sha256": got.sha256 if got else None,
                "parser_version": PARSER_VERSION,
                "n_articles": None,
                "title": None,
                "short_form": None,
            }
            version_rows.append(row)
            if got is None or got.stage not in USABLE_STAGES:
                stage = got.stage if got else "no_file" if edition.file_url is None else "download"
                _fail(report, row, act, edition, stage, got.error if got and got.error else _missing(edition))
                continue
            old = previous.get(version_id)
            if old and old["stage"] == PARSED and old["sha256"] == got.sha256 and old["parser_version"] == PARSER_VERSION:
                reused.add(version_id)
                # Everything ingest needs from the file is stored: a reused edition is not opened at all.
                row.update(n_articles=old["n_articles"], title=old["title"], short_form=old["short_form"])
            else:
                to_parse.append((row, act, edition, Path(got.path)))
        report.reused = len(reused)

        rewritten = sorted((set(previous) | {r["version_id"] for r in version_rows}) - reused)
        con.execute("DELETE FROM ch_act_article WHERE list_contains(?, version_id)", [rewritten])
        batch: dict[str, list] = {name: [] for name in ARTICLE_SCHEMA}
        for row, act, edition, path in to_parse:
            where = f"SR {act.sr_number} {edition.consolidation} [{lang}] {edition.file_url}"
            try:
                parsed = parse_edition(path.read_bytes(), where)
            except (AknError, OSError) as exc:
                _fail(report, row, act, edition, getattr(exc, "stage", "parse"), str(exc))
                continue
            row["n_articles"] = len(parsed.articles)
            row["title"] = parsed.identity.names.get(lang)
            row["short_form"] = parsed.identity.short_forms.get(lang)
            report.reparsed += 1
            for a in parsed.articles:
                batch["version_id"].append(row["version_id"])
                batch["e_id"].append(a.e_id)
                batch["article_number"].append(a.article_number)
                batch["heading"].append(a.heading)
                batch["text"].append(a.text)
            if len(batch["e_id"]) >= ARTICLE_BATCH:
                insert(con, "ch_act_article", pl.DataFrame(batch, schema=ARTICLE_SCHEMA))
                batch = {name: [] for name in ARTICLE_SCHEMA}
        insert(con, "ch_act_article", pl.DataFrame(batch, schema=ARTICLE_SCHEMA))

        act_rows, alias_rows = _act_rows(catalog, lang, _latest_names(version_rows, catalog))
        _upsert_acts(con, act_rows, lang)
        sync_rows(con, "ch_act_alias", list(ALIAS_SCHEMA), "lang = ?", [lang], _frame(alias_rows, ALIAS_SCHEMA))
        sync_rows(con, "ch_act_version", ["version_id"], "lang = ?", [lang], _frame(version_rows, VERSION_SCHEMA))
        kill_point("ingest.transaction")  # every row written, nothing committed yet

    report.parsed = sum(1 for r in version_rows if r["stage"] == PARSED)
    report.articles = sum(r["n_articles"] or 0 for r in version_rows if r["stage"] == PARSED)
    report.data_version = data_version(version_rows)
    return report


def _fail(report: IngestReport, row: dict, act: CatalogAct, edition: CatalogEdition, stage: str, error: str) -> None:
    row.update(stage=stage, error=error, parser_version=None, n_articles=None)
    report.failures.append(
        EditionFailure(act.eli, act.sr_number, edition.consolidation, edition.lang, stage, error, edition.file_url)
    )


def _latest_names(version_rows: list[dict], catalog: Catalog) -> dict[str, tuple[str | None, str | None]]:
    """Per act eli, (title, short form) as its latest parsed edition in this language states them."""
    latest: dict[int, dict] = {}
    for row in version_rows:  # sorted by act and date
        if row["stage"] == PARSED:
            latest[row["act_id"]] = row
    elis = {act_id_for(a.eli): a.eli for a in catalog.acts}
    return {elis[act_id]: (row["title"], row["short_form"]) for act_id, row in latest.items()}


def data_version(version_rows: list[dict]) -> str:
    """Changes exactly when an edition's file, stage or the parser changes: Dagster's data version."""
    h = hashlib.sha256(PARSER_VERSION.encode())
    for r in sorted(version_rows, key=lambda r: r["version_id"]):
        h.update(f"{r['version_id']}|{r['sha256']}|{r['stage']}|{r['date_end_applicability']}\n".encode())
    return h.hexdigest()[:16]


def _missing(edition: CatalogEdition) -> str:
    if edition.file_url is None:
        return f"{edition.consolidation} [{edition.lang}]: Fedlex lists no XML file for this edition"
    return f"{edition.consolidation} [{edition.lang}]: {edition.file_url} was not fetched"


def _upsert_acts(con, rows: list[dict], lang: str) -> None:
    """One ch_act row per act, shared by the languages: each partition writes the act-level fields
    (the same from every language's catalog) and only its own title, and German alone the German
    abbreviation. So the row does not depend on which languages were ingested, or in what order."""
    if not rows:
        return
    columns = list(rows[0])
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in ("act_id", "eli"))
    cols = ", ".join(columns)
    with registered(con, "_acts", pl.DataFrame(rows, schema={c: ACT_SCHEMA[c] for c in columns}, orient="row")):
        # Only the rows that differ: an upsert of every act rewrote the whole table at each checkpoint.
        con.execute(f"INSERT INTO ch_act ({cols}) SELECT {cols} FROM "
                    f"(SELECT {cols} FROM _acts EXCEPT SELECT {cols} FROM ch_act) "
                    f"ON CONFLICT (act_id) DO UPDATE SET {updates}")


def _act_rows(
    catalog: Catalog, lang: str, file_names: dict[str, tuple[str | None, str | None]]
) -> tuple[list[dict], list[dict]]:
    acts, aliases = [], []
    for act in catalog.acts:
        file_title, file_short = file_names.get(act.eli, (None, None))
        catalog_name = act.titles.get(lang)
        title = catalog_name.title if catalog_name else file_title
        # The catalog's titleShort and the file's shortForm are the same curated abbreviation.
        short = (catalog_name.title_short if catalog_name and catalog_name.title_short else None) or file_short

        act_id = act_id_for(act.eli)
        row = {
            "act_id": act_id,
            "sr_number": act.sr_number,
            "eli": act.eli,
            "jurisdiction": "CH",
            "enforcement_status": act.in_force_status,
            "date_entry_in_force": act.date_entry_in_force,
            "date_no_longer_in_force": act.date_no_longer_in_force,
            f"title_{lang}": title,
        }
        if lang == "de":  # B7: ch_act.abbreviation is the German one, so only the German partition sets it
            row["abbreviation"] = short
        acts.append(row)
        for abbr, source in ((short, "curated"), (title_paren_abbreviation(title), "title_paren")):
            if abbr:
                aliases.append(
                    {"lang": lang, "sr_number": act.sr_number, "abbr": abbr, "source": source, "act_id": act_id}
                )
    return acts, aliases


ACT_SCHEMA = {
    "act_id": pl.Int64, "sr_number": pl.String, "eli": pl.String, "jurisdiction": pl.String,
    "abbreviation": pl.String, "enforcement_status": pl.Int32, "date_entry_in_force": pl.Date,
    "date_no_longer_in_force": pl.Date, "title_de": pl.String, "title_fr": pl.String, "title_it": pl.String,
    "title_en": pl.String, "title_rm": pl.String,
}
ALIAS_SCHEMA = {"lang": pl.String, "sr_number": pl.String, "abbr": pl.String, "source": pl.String, "act_id": pl.Int64}
VERSION_SCHEMA = {
    "version_id": pl.Int64, "act_id": pl.Int64, "lang": pl.String, "date_applicability": pl.Date,
    "date_end_applicability": pl.Date, "eli": pl.String, "source": pl.String, "stage": pl.String,
    "error": pl.String, "file_url": pl.String, "sha256": pl.String, "parser_version": pl.String,
    "n_articles": pl.Int32, "title": pl.String, "short_form": pl.String,
}
ARTICLE_SCHEMA = {
    "version_id": pl.Int64, "e_id": pl.String, "article_number": pl.String, "heading": pl.String, "text": pl.String,
}


def _frame(rows: list[dict], schema: dict) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def ingest_language(
    store: Store, catalog: Catalog, lang: str, cache_dir: Path, **download_options
) -> IngestReport:
    """Fetch (or find in the cache) every edition of `lang`, then store them: the whole first slice in one call."""
    from chpit_assets.fedlex.download import download_editions

    fetched = download_editions(catalog, Path(cache_dir), editions=catalog.for_lang(lang).editions, **download_options)
    return store_editions(store, catalog, lang, fetched)
