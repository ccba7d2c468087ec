"""Fetched edition files -> the store's ch_act, ch_act_alias, ch_act_version, ch_act_article, per language.

One language is written in one transaction: a failed partition leaves the
previous good data. An edition whose file (sha256) and parser version are
unchanged keeps its stored articles and is not parsed again.

Last good data (issue 15 item 3): an edition parsed before whose new file fails
(download, validation or parse) keeps its stored row and articles; the failure is
recorded beside them (`failed_stage`, `failed_error`, `failed_url`) and counted by
`editions_on_last_good_file`. A re-issued file (same edition, new bytes) is parsed
again; `content_sha256` (what was stored from it) decides whether anything changed
for downstream, and `revision` records 'reissued' (same content) or 'corrected'.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import polars as pl

from chpit_assets.akn.errors import AknError
from chpit_assets.akn.parser import PARSER_VERSION, parse_edition
from chpit_assets.faults import kill_point
from chpit_assets.fedlex.catalog import Catalog, CatalogAct, CatalogEdition
from chpit_assets.fedlex.download import CacheCorrupt, read_verified
from chpit_assets.markdown import table

from .schema import act_id_for, version_id_for
from .store import Store, insert, registered, sync_rows

PARSED = "parsed"
# "Datenschutzgesetz, DSG" -> "DSG": the last comma-separated part of a title's final parenthesis.
_TITLE_PAREN = re.compile(r"\(([^()]*)\)\s*$")
_ABBREVIATION = re.compile(r"^[A-ZÄÖÜ][A-Za-zÄÖÜäöüÀ-ÿ0-9.\-/]{0,15}$")


class FetchedEdition(Protocol):
    """What the downloader hands over for one catalog edition (read-only: results are frozen)."""

    @property
    def edition(self) -> CatalogEdition: ...
    @property
    def path(self) -> Path | None: ...
    @property
    def sha256(self) -> str | None: ...
    @property
    def stage(self) -> str: ...  # 'downloaded' | 'cached' (usable) or a failure ('no_file', 'download', 'validate')
    @property
    def error(self) -> str | None: ...


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


@dataclass(frozen=True)
class Revision:
    """An edition whose file was re-issued (new bytes for the same edition) in this ingest."""

    sr_number: str
    consolidation: str
    lang: str
    kind: str  # 'reissued' (stored content unchanged) | 'corrected' (it changed)
    old_sha256: str
    new_sha256: str
    generator: str | None  # the new file's generator build


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
    last_good: list[EditionFailure] = field(default_factory=list)  # new file failed; last good parse kept
    revisions: list[Revision] = field(default_factory=list)
    repeated_eids: dict[str, int] = field(default_factory=dict)  # consolidation -> n, parsed editions with any
    data_version: str = ""

    def failures_by_stage(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for f in self.failures:
            counts[f.stage] = counts.get(f.stage, 0) + 1
        return dict(sorted(counts.items()))

    def failures_markdown(self) -> str:
        if not self.failures:
            return "No failures."
        return _failure_table(self.failures)

    def last_good_markdown(self) -> str:
        if not self.last_good:
            return "Every parsed edition is on its current file."
        return _failure_table(self.last_good)

    def revisions_markdown(self) -> str:
        if not self.revisions:
            return "No re-issued file."
        return table(
            ["SR", "edition", "lang", "revision", "old sha256", "new sha256", "generator"],
            [
                (r.sr_number, r.consolidation, r.lang, r.kind, r.old_sha256[:12], r.new_sha256[:12], r.generator or "")
                for r in self.revisions
            ],
        )


def _failure_table(failures: list[EditionFailure]) -> str:
    return table(
        ["SR", "edition", "lang", "stage", "file", "error"],
        [(f.sr_number, f.consolidation, f.lang, f.stage, f.url or "", f.error[:300]) for f in failures],
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


Refetch = Callable[[CatalogEdition], FetchedEdition]


def store_editions(
    store: Store,
    catalog: Catalog,
    lang: str,
    fetched: Sequence[FetchedEdition],
    *,
    refetch: Refetch | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> IngestReport:
    """Parse what was fetched for `lang` and replace that language's rows in the store atomically.

    One transaction: a failure anywhere leaves the previous rows. Editions whose file and parser
    version are unchanged keep their stored articles; the rest are parsed and inserted in batches.
    Every file is checked against its sha256 as it is read for a parse (issue 23 item 1); one that
    changed in the cache is fetched again with `refetch` (live), or without it fails at stage
    'cache' naming the file (it was moved aside, so the next run fetches it anew). `progress`
    hears (editions parsed, editions to parse) before the first parse and after each (issue 23.8).
    """
    catalog = catalog.for_lang(lang)
    report = IngestReport(lang=lang, acts=len(catalog.acts), editions=len(catalog.editions))
    by_consolidation = {f.edition.consolidation: f for f in fetched if f.edition.lang == lang}
    # One transaction for the whole language (one open and one checkpoint): read what is stored,
    # decide every edition's fate, then write.
    with store.transaction() as con:
        cursor = con.execute(f"SELECT {', '.join(VERSION_SCHEMA)} FROM ch_act_version WHERE lang = ?", [lang])
        columns = [d[0] for d in cursor.description]
        previous = {row[0]: dict(zip(columns, row)) for row in cursor.fetchall()}
        # Decide every edition's fate before touching the store: failed, reused as stored, or to parse.
        version_rows: list[dict] = []
        to_parse: list[tuple[dict, CatalogAct, CatalogEdition, FetchedEdition, dict | None]] = []
        act_ids = {act.eli: act_id_for(act.eli) for act in catalog.acts}
        for edition in sorted(catalog.editions, key=lambda e: (e.act_eli, e.date_applicability)):
            act = catalog.act(edition.act_eli)
            version_id = version_id_for(edition.consolidation, lang)
            got = by_consolidation.get(edition.consolidation)
            row = {name: None for name in VERSION_SCHEMA} | {
                "version_id": version_id,
                "act_id": act_ids[act.eli],
                "lang": lang,
                "date_applicability": edition.date_applicability,
                "date_end_applicability": edition.date_end_applicability,
                "eli": edition.consolidation,
                "source": "fedlex",
                "stage": PARSED,
                "file_url": edition.file_url,
                "sha256": got.sha256 if got else None,
                "parser_version": PARSER_VERSION,
            }
            version_rows.append(row)
            old = previous.get(version_id)
            last_good = old if old is not None and old["stage"] == PARSED else None
            if got is None or got.stage not in USABLE_STAGES:
                stage = got.stage if got else "no_file" if edition.file_url is None else "download"
                _fail(
                    report, row, act, edition, stage, got.error if got and got.error else _missing(edition), last_good
                )
            elif last_good and last_good["sha256"] == got.sha256 and last_good["parser_version"] == PARSER_VERSION:
                # Everything ingest needs from the file is stored: a reused edition is not opened at all.
                _keep(row, last_good)
                report.reused += 1
            else:
                to_parse.append((row, act, edition, got, last_good))

        # Articles of editions the catalog no longer lists go; every other edition's are replaced only
        # when a parse produced different content (below), so nothing is deleted before its successor exists.
        gone = sorted(set(previous) - {r["version_id"] for r in version_rows})
        con.execute("DELETE FROM ch_act_article WHERE list_contains(?, version_id)", [gone])
        batch: dict[str, list] = {name: [] for name in ARTICLE_SCHEMA}
        for row, act, edition, got, last_good in _counted(to_parse, progress):
            where = f"SR {act.sr_number} {edition.consolidation} [{lang}] {edition.file_url}"
            try:
                data, got = _read_for_parse(got, edition, refetch, where)
                row["sha256"] = got.sha256
                parsed = parse_edition(data, where)
            except (AknError, OSError, CacheCorrupt) as exc:
                _fail(report, row, act, edition, getattr(exc, "stage", "parse"), str(exc), last_good)
                continue
            names = (parsed.identity.names.get(lang), parsed.identity.short_forms.get(lang))
            content = content_digest(
                ((a.e_id, a.occurrence, a.article_number, a.heading, a.text) for a in parsed.articles), *names
            )
            row.update(
                n_articles=len(parsed.articles),
                title=names[0],
                short_form=names[1],
                n_repeated_eids=parsed.n_repeated_eids,
                generator=parsed.identity.generator,
                content_sha256=content,
            )
            report.reparsed += 1
            stored = _stored_content(con, last_good) if last_good else None
            if last_good:
                row.update(reissued_from=last_good["reissued_from"], revision=last_good["revision"])
                if last_good["sha256"] != got.sha256:  # same edition, new bytes: Fedlex re-issued the file
                    row.update(
                        reissued_from=last_good["sha256"], revision="reissued" if stored == content else "corrected"
                    )
                    report.revisions.append(
                        Revision(
                            act.sr_number,
                            edition.consolidation,
                            lang,
                            str(row["revision"]),
                            last_good["sha256"],
                            str(got.sha256),
                            str(row["generator"]) if row["generator"] is not None else None,
                        )
                    )
                if stored == content:
                    continue  # the stored articles are exactly these: nothing downstream changes
            for a in parsed.articles:
                batch["version_id"].append(row["version_id"])
                batch["e_id"].append(a.e_id)
                batch["occurrence"].append(a.occurrence)
                batch["article_number"].append(a.article_number)
                batch["heading"].append(a.heading)
                batch["text"].append(a.text)
            if len(batch["e_id"]) >= ARTICLE_BATCH:
                _replace_articles(con, batch)
                batch = {name: [] for name in ARTICLE_SCHEMA}
        _replace_articles(con, batch)

        act_rows, alias_rows = _act_rows(catalog, lang, _latest_names(version_rows, catalog))
        _upsert_acts(con, act_rows, lang)
        sync_rows(con, "ch_act_alias", list(ALIAS_SCHEMA), "lang = ?", [lang], _frame(alias_rows, ALIAS_SCHEMA))
        sync_rows(con, "ch_act_version", ["version_id"], "lang = ?", [lang], _frame(version_rows, VERSION_SCHEMA))
        kill_point("ingest.transaction")  # every row written, nothing committed yet

    report.parsed = sum(1 for r in version_rows if r["stage"] == PARSED)
    report.repeated_eids = {
        r["eli"]: r["n_repeated_eids"] for r in version_rows if r["stage"] == PARSED and r["n_repeated_eids"]
    }
    report.articles = sum(r["n_articles"] or 0 for r in version_rows if r["stage"] == PARSED)
    report.data_version = data_version(version_rows)
    return report


def _counted(items: list, progress: Callable[[int, int], None] | None) -> Iterator:
    """`items`, telling `progress` how many are done before the first and after each one's turn."""
    if progress is None or not items:
        yield from items
        return
    progress(0, len(items))
    for n, item in enumerate(items, 1):
        yield item
        progress(n, len(items))


def _read_for_parse(
    got: FetchedEdition, edition: CatalogEdition, refetch: Refetch | None, where: str
) -> tuple[bytes, FetchedEdition]:
    """The edition's bytes, verified against their sha256, and what they were read from."""
    if got.path is None or got.sha256 is None:  # to_parse holds usable editions only, which have a file
        raise OSError(f"{where}: no file")
    try:
        return read_verified(got.path, got.sha256), got
    except CacheCorrupt as corrupt:
        if refetch is None:
            raise
        again = refetch(edition)
        if again.stage not in USABLE_STAGES or again.path is None or again.sha256 is None:
            raise OSError(f"{where}: {corrupt}; fetching it again failed: {again.error}") from None
        return read_verified(again.path, again.sha256), again


def content_digest(articles, title: str | None, short_form: str | None) -> str:
    """sha256 of what ingest stores from one file: its articles as (e_id, occurrence, number, heading,
    text), in key order so that stored rows (which keep no document order) give the same digest,
    and the file's title and short form."""
    h = hashlib.sha256(f"{title}\x1f{short_form}\x1e".encode())
    for key in sorted(articles, key=lambda a: (a[0], a[1])):
        h.update("\x1f".join("" if v is None else str(v) for v in key).encode() + b"\x1e")
    return h.hexdigest()


def _stored_content(con, old: dict) -> str:
    """The content digest of an edition as stored (computed from its rows when the store predates
    content_sha256)."""
    if old["content_sha256"]:
        return old["content_sha256"]
    rows = con.execute(
        "SELECT e_id, occurrence, article_number, heading, text FROM ch_act_article WHERE version_id = ?",
        [old["version_id"]],
    ).fetchall()
    return content_digest(rows, old["title"], old["short_form"])


def _replace_articles(con, batch: dict[str, list]) -> None:
    """Insert a batch of parsed articles in place of whatever their editions had stored."""
    versions = sorted(set(batch["version_id"]))
    if versions:
        con.execute("DELETE FROM ch_act_article WHERE list_contains(?, version_id)", [versions])
        insert(con, "ch_act_article", pl.DataFrame(batch, schema=ARTICLE_SCHEMA))


# What a row keeps of its last good parse: everything read from that file.
_FROM_FILE = (
    "sha256",
    "parser_version",
    "n_articles",
    "title",
    "short_form",
    "n_repeated_eids",
    "generator",
    "content_sha256",
    "reissued_from",
    "revision",
)


def _keep(row: dict, last_good: dict) -> None:
    row.update({name: last_good[name] for name in _FROM_FILE})


def _fail(
    report: IngestReport,
    row: dict,
    act: CatalogAct,
    edition: CatalogEdition,
    stage: str,
    error: str,
    last_good: dict | None,
) -> None:
    """Record an edition's failure. One parsed before keeps its last good parse (row and articles), with
    the failure beside it; one never parsed is stored at the failing stage (B10)."""
    failure = EditionFailure(
        act.eli, act.sr_number, edition.consolidation, edition.lang, stage, error, edition.file_url
    )
    if last_good is not None:
        _keep(row, last_good)
        # file_url stays the parsed file's: the failed one is named beside it.
        row.update(file_url=last_good["file_url"], failed_stage=stage, failed_error=error, failed_url=edition.file_url)
        report.last_good.append(failure)
        return
    row.update(stage=stage, error=error, sha256=None, parser_version=None, n_articles=None)
    report.failures.append(failure)


def editions_on_last_good_file(store: Store, lang: str | None = None) -> int:
    """How many parsed editions (of `lang`, or of every language) are on their last good file: their
    current file failed and the stored parse is an earlier file's. The publish gate reports it."""
    return last_good_editions(store, lang).height


def last_good_editions(store: Store, lang: str | None = None) -> pl.DataFrame:
    """Those editions with the failure recorded beside them: sr_number, eli, lang, failed_stage,
    failed_url, failed_error, and the sha256 of the file still in use."""
    return store.frame(
        "SELECT c.sr_number, v.eli, v.lang, v.failed_stage, v.failed_url, v.failed_error, v.sha256 "
        "FROM ch_act_version v JOIN ch_act c USING (act_id) "
        "WHERE v.stage = 'parsed' AND v.failed_stage IS NOT NULL AND (? IS NULL OR v.lang = ?) "
        "ORDER BY v.lang, c.sr_number, v.date_applicability",
        [lang, lang],
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
    """Changes exactly when what is stored for an edition (its content), its stage or end date changes:
    Dagster's data version. Not the file's sha256: a re-issued file with the same wording, or a
    parser change that stores the same thing, must not re-materialise anything downstream."""
    h = hashlib.sha256()
    for r in sorted(version_rows, key=lambda r: r["version_id"]):
        h.update(f"{r['version_id']}|{r['content_sha256']}|{r['stage']}|{r['date_end_applicability']}\n".encode())
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
        con.execute(
            f"INSERT INTO ch_act ({cols}) SELECT {cols} FROM "
            f"(SELECT {cols} FROM _acts EXCEPT SELECT {cols} FROM ch_act) "
            f"ON CONFLICT (act_id) DO UPDATE SET {updates}"
        )


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
    "act_id": pl.Int64,
    "sr_number": pl.String,
    "eli": pl.String,
    "jurisdiction": pl.String,
    "abbreviation": pl.String,
    "enforcement_status": pl.Int32,
    "date_entry_in_force": pl.Date,
    "date_no_longer_in_force": pl.Date,
    "title_de": pl.String,
    "title_fr": pl.String,
    "title_it": pl.String,
    "title_en": pl.String,
    "title_rm": pl.String,
}
ALIAS_SCHEMA = {"lang": pl.String, "sr_number": pl.String, "abbr": pl.String, "source": pl.String, "act_id": pl.Int64}
VERSION_SCHEMA = {
    "version_id": pl.Int64,
    "act_id": pl.Int64,
    "lang": pl.String,
    "date_applicability": pl.Date,
    "date_end_applicability": pl.Date,
    "eli": pl.String,
    "source": pl.String,
    "stage": pl.String,
    "error": pl.String,
    "file_url": pl.String,
    "sha256": pl.String,
    "parser_version": pl.String,
    "n_articles": pl.Int32,
    "title": pl.String,
    "short_form": pl.String,
    "n_repeated_eids": pl.Int32,
    "generator": pl.String,
    "content_sha256": pl.String,
    "reissued_from": pl.String,
    "revision": pl.String,
    "failed_stage": pl.String,
    "failed_error": pl.String,
    "failed_url": pl.String,
}
ARTICLE_SCHEMA = {
    "version_id": pl.Int64,
    "e_id": pl.String,
    "occurrence": pl.Int32,
    "article_number": pl.String,
    "heading": pl.String,
    "text": pl.String,
}


def _frame(rows: list[dict], schema: dict) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def ingest_language(store: Store, catalog: Catalog, lang: str, cache_dir: Path, **download_options) -> IngestReport:
    """Fetch (or find in the cache) every edition of `lang`, then store them: the whole first slice in one call."""
    from chpit_assets.fedlex.download import download_editions

    fetched = download_editions(catalog, Path(cache_dir), editions=catalog.for_lang(lang).editions, **download_options)
    return store_editions(store, catalog, lang, fetched)
