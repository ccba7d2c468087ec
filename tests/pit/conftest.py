"""A small constructed store (every resolution case of chpit_assets.pit.tools) and the fixed 'today'."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import polars as pl
import pytest

from chpit_assets.corpus.store import Store
from chpit_assets.pit.tools import PitTools

TODAY = date(2025, 6, 15)

ACT = {
    "act_id": pl.Int64,
    "sr_number": pl.Utf8,
    "eli": pl.Utf8,
    "jurisdiction": pl.Utf8,
    "abbreviation": pl.Utf8,
    "enforcement_status": pl.Int32,
    "date_entry_in_force": pl.Date,
    "title_de": pl.Utf8,
    "title_fr": pl.Utf8,
}
ALIAS = {"lang": pl.Utf8, "sr_number": pl.Utf8, "abbr": pl.Utf8, "source": pl.Utf8, "act_id": pl.Int64}
VERSION = {
    "version_id": pl.Int64,
    "act_id": pl.Int64,
    "lang": pl.Utf8,
    "date_applicability": pl.Date,
    "date_end_applicability": pl.Date,
    "eli": pl.Utf8,
    "source": pl.Utf8,
    "stage": pl.Utf8,
}
ARTICLE = {
    "version_id": pl.Int64,
    "e_id": pl.Utf8,
    "occurrence": pl.Int32,
    "article_number": pl.Utf8,
    "heading": pl.Utf8,
    "text": pl.Utf8,
}

D = date.fromisoformat
ELI = "https://fedlex.data.admin.ch/eli/cc/"


def art1(edition: str) -> str:
    """Art. 1 of act 1: paragraph 2 names the edition, so every edition's text is its own."""
    return f"1 Dieses Gesetz regelt den Testfall.\n2 Fassung {edition}."


def _numbered(rows: list[tuple]) -> list[tuple]:
    """(version_id, e_id, number, heading, text) rows in document order -> with their occurrence
    (1, 2, ... per e_id within the edition), as ingest numbers them."""
    seen: dict[tuple[int, str], int] = {}
    out = []
    for version_id, e_id, *rest in rows:
        seen[version_id, e_id] = seen.get((version_id, e_id), 0) + 1
        out.append((version_id, e_id, seen[version_id, e_id], *rest))
    return out


def repeated_articles(version_id: int, *, later: bool) -> list[tuple]:
    """Act 7 (SR 777): the Civil Code's shape (issue 13). Its final title reproduces old-law articles
    under the SAME eIds (`art_178` twice), and a transitional `disp_u2/art_5` precedes the main
    `art_5` in document order. The later edition modifies the main Art. 178, keeps the old-law one,
    drops the old-law Art. 179 and adds a second old-law Art. 180."""
    rows = [
        (version_id, "disp_u2/art_5", "5", "Übergang", "1 Übergangsfassung fünf."),
        (version_id, "art_5", "5", "Fünf", "1 Hauptartikel fünf."),
        (version_id, "art_178", "178", "Neues Recht", "1 Neues Recht 178" + (", geändert." if later else ".")),
        (version_id, "art_179", "179", "Neues Recht", "1 Neues Recht 179."),
        (version_id, "art_180", "180", "Neues Recht", "1 Neues Recht 180."),
        (version_id, "art_178", "178", "Altes Recht", "1 Altes Recht 178."),
    ]
    rows.append(
        (version_id, "art_180", "180", "Altes Recht", "1 Altes Recht 180.")
        if later
        else (version_id, "art_179", "179", "Altes Recht", "1 Altes Recht 179.")
    )
    return rows


def _edition_articles(version_id: int, edition: str, *, with_5a: bool) -> list[tuple]:
    # Inserted in document order: art_2 before art_10 (lexical order would put art_10 first).
    rows = [
        (version_id, "art_1", "1", "Zweck", art1(edition)),
        (version_id, "art_2", "2", None, "1 Zweiter Artikel, unverändert."),
    ]
    if with_5a:
        rows.append((version_id, "art_5_a", "5a", "Neu", "1 Eingefügter Artikel."))
    rows += [
        (version_id, "art_7", "7", None, "1 Hauptartikel sieben."),
        (version_id, "art_10", "10", None, "1 Zehnter Artikel."),
        (version_id, "art_268_a_bis", "268a bis", None, "1 Artikel 268a bis."),
        (version_id, "art_x", None, None, "Ein Artikel ohne lesbare Nummer."),
        (version_id, "disp_u1/art_7", "7", None, "1 Übergangsbestimmung sieben."),
    ]
    return rows


@pytest.fixture(scope="session")
def store(tmp_path_factory) -> Store:
    """Act 1 (SR 999.1): de editions 2020, 2021-H1, a gap (its 2021-H2 edition failed to parse),
    2022-2025, a future-dated 2026 edition; one fr edition. SR 888: act 2 repealed, act 3 in force,
    act 6 cantonal. SR 666 (act 5): two editions that both claim 2021-01-01. SR 777 (act 7): repeated
    eIds and numbers (`repeated_articles`), editions 2020-2023 and 2024-."""
    s = Store(tmp_path_factory.mktemp("pit") / "chpit.duckdb")
    acts = [
        (1, "999.1", ELI + "2019/1", "CH", "TG", 0, D("2020-01-01"), "Testgesetz", "Loi de test"),
        (2, "888", ELI + "2009/2", "CH", "AG", 1, D("2010-01-01"), "Altes Gesetz", None),
        (3, "888", ELI + "2019/3", "CH", "NG", 0, D("2020-01-01"), "Neues Gesetz", None),
        (6, "888", ELI + "zh/6", "ZH", "KG", 0, D("2023-01-01"), "Kantonales Gesetz", None),
        (5, "666", ELI + "2019/5", "CH", "UG", 0, D("2020-01-01"), "Überlappungsgesetz", None),
        (7, "777", ELI + "2019/7", "CH", "WG", 0, D("2020-01-01"), "Wiederholungsgesetz", None),
    ]
    aliases = [("fr", "999.1", "LT", "curated", 1), ("fr", "999.1", "ATL", "title_paren", 1)]
    versions = [
        (11, 1, "de", D("2020-01-01"), D("2020-12-31"), ELI + "2019/1/20200101", "fedlex", "parsed"),
        (12, 1, "de", D("2021-01-01"), D("2021-06-30"), ELI + "2019/1/20210101", "fedlex", "parsed"),
        (13, 1, "de", D("2021-07-01"), D("2021-12-31"), ELI + "2019/1/20210701", "fedlex", "fetch"),
        (14, 1, "de", D("2022-01-01"), D("2025-12-31"), ELI + "2019/1/20220101", "fedlex", "parsed"),
        (15, 1, "de", D("2026-01-01"), None, ELI + "2019/1/20260101", "fedlex", "parsed"),
        (21, 1, "fr", D("2022-01-01"), None, ELI + "2019/1/20220101", "fedlex", "parsed"),
        (31, 2, "de", D("2010-01-01"), D("2019-12-31"), ELI + "2009/2/20100101", "fedlex", "parsed"),
        (41, 3, "de", D("2020-01-01"), None, ELI + "2019/3/20200101", "fedlex", "parsed"),
        (61, 6, "de", D("2023-01-01"), None, ELI + "zh/6/20230101", "fedlex", "parsed"),
        (51, 5, "de", D("2020-01-01"), D("2021-01-01"), ELI + "2019/5/20200101", "fedlex", "parsed"),
        (52, 5, "de", D("2021-01-01"), None, ELI + "2019/5/20210101", "fedlex", "parsed"),
        (71, 7, "de", D("2020-01-01"), D("2023-12-31"), ELI + "2019/7/20200101", "fedlex", "parsed"),
        (72, 7, "de", D("2024-01-01"), None, ELI + "2019/7/20240101", "fedlex", "parsed"),
    ]
    articles = _numbered(
        _edition_articles(11, "2020", with_5a=False)
        + _edition_articles(12, "2021", with_5a=False)
        + [(13, "art_1", "1", None, art1("nie geparst"))]
        + _edition_articles(14, "2021", with_5a=True)  # Art. 1 unchanged from 2021
        + _edition_articles(15, "2026", with_5a=True)
        + [(21, "art_1", "1", "But", "1 La présente loi règle le cas de test.")]
        + [
            (31, "art_1", "1", None, "1 Altes Gesetz, Artikel 1."),
            (41, "art_1", "1", None, "1 Neues Gesetz, Artikel 1."),
            (61, "art_1", "1", None, "1 Kantonales Gesetz, Artikel 1."),
            (51, "art_1", "1", None, "1 Alte überlappende Fassung."),
            (52, "art_1", "1", None, "1 Neue überlappende Fassung."),
        ]
        + repeated_articles(71, later=False)
        + repeated_articles(72, later=True)
    )
    s.replace(
        [
            ("ch_act", "TRUE", [], pl.DataFrame(acts, schema=ACT, orient="row")),
            ("ch_act_alias", "TRUE", [], pl.DataFrame(aliases, schema=ALIAS, orient="row")),
            ("ch_act_version", "TRUE", [], pl.DataFrame(versions, schema=VERSION, orient="row")),
            ("ch_act_article", "TRUE", [], pl.DataFrame(articles, schema=ARTICLE, orient="row")),
        ]
    )
    return s


@pytest.fixture(params=["per call", "session"])
def tools(request, store: Store) -> Iterator[PitTools]:
    """Every test of the tools twice: each call on its own connection, and inside a session, where
    the rows come from the session's LookupCache (issue 27.4): both must answer alike."""
    tools = PitTools(store, today=TODAY)
    if request.param == "per call":
        yield tools
        return
    with tools.session():
        yield tools
