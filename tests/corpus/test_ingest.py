"""Ingest on the real sample through the real downloader (file:// urls), plus failure and incremental cases."""

from __future__ import annotations

import dataclasses
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from chpit_assets.corpus.ingest import (
    ingest_language,
    store_editions,
    title_paren_abbreviation,
)
from chpit_assets.corpus.schema import act_id_for, version_id_for
from chpit_assets.corpus.store import Store, StoreError
from chpit_assets.fedlex.catalog import LANGS, Catalog, load_sample_catalog
from chpit_assets.fedlex.download import download_editions

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
DSG_ELI = "https://fedlex.data.admin.ch/eli/cc/2022/491"


@pytest.fixture()
def catalog() -> Catalog:
    return load_sample_catalog(SAMPLE)


@pytest.fixture()
def store(tmp_path) -> Store:
    return Store(tmp_path / "chpit.duckdb")


def test_sample_german_lands_in_the_store(store, catalog, tmp_path):
    report = ingest_language(store, catalog, "de", tmp_path / "cache")
    assert (report.editions, report.parsed, report.reparsed, report.reused) == (11, 10, 10, 0)
    # The 2022-07-01 edition of SR 170.512 exists on Fedlex but not in the sample: recorded, never invented.
    assert report.failures_by_stage() == {"no_file": 1}
    [missing] = report.failures
    assert missing.consolidation.endswith("/eli/cc/2004/745/20220701") and "no XML file" in missing.error
    versions = store.frame(
        "SELECT c.sr_number, v.date_applicability, v.date_end_applicability, v.stage, v.n_articles "
        "FROM ch_act_version v JOIN ch_act c USING (act_id) WHERE v.lang = 'de' ORDER BY 1, 2"
    ).rows()
    assert [v for v in versions if v[0] in ("101", "170.512")][:3] == [
        ("101", date(2024, 3, 3), None, "parsed", 232),
        ("170.512", date(2018, 11, 26), date(2022, 6, 30), "parsed", 29),
        ("170.512", date(2022, 7, 1), date(2023, 8, 31), "no_file", None),
    ]
    assert [v[4] for v in versions if v[0] == "235.1"] == [77, 77, 77]
    art_24 = store.frame(
        "SELECT text FROM ch_act_article WHERE version_id = ? AND e_id = 'art_24'",
        [version_id_for(f"{DSG_ELI}/20250401", "de")],
    ).item()
    assert "\n5bis Der EDÖB" in art_24


# B7 per act and language, as the real files state them (FRBRname/@shortForm, and the title's parenthesis).
EXPECTED_ALIASES = {
    ("de", "235.1"): {("DSG", "curated"), ("DSG", "title_paren")},
    ("fr", "235.1"): {("LPD", "curated"), ("LPD", "title_paren")},
    ("it", "235.1"): {("LPD", "curated"), ("LPD", "title_paren")},
    ("en", "235.1"): {("FADP", "curated"), ("FADP", "title_paren")},
    ("de", "170.512"): {("PublG", "curated"), ("PublG", "title_paren")},
    ("de", "101"): {("BV", "curated")},
    ("en", "101"): {("Cst.", "curated")},
    ("rm", "101"): {("Cst.", "curated")},
    ("fr", "210"): {("CC", "curated")},
    ("de", "220"): {("OR", "curated")},
    ("de", "311.0"): {("StGB", "curated")},
    ("de", "142.31"): {("AsylG", "curated"), ("AsylG", "title_paren")},
    ("fr", "952.0"): {("LB", "curated"), ("LB", "title_paren")},
    ("en", "955.0"): {("AMLA", "curated"), ("AMLA", "title_paren")},
    ("de", "0.107"): set(),  # a treaty without an abbreviation: none invented (the builder counts no_abbreviation)
}


def test_every_act_gets_its_abbreviation_in_every_language_it_has(store, catalog, tmp_path):
    for lang in LANGS:
        ingest_language(store, catalog, lang, tmp_path / "cache")
    parsed = store.frame(
        "SELECT DISTINCT v.lang, c.sr_number FROM ch_act_version v JOIN ch_act c USING (act_id) "
        "WHERE v.stage = 'parsed'"
    ).rows()
    assert set(parsed) == set(EXPECTED_ALIASES)
    got: dict[tuple[str, str], set] = {key: set() for key in parsed}
    for lang, sr, abbr, source in store.frame("SELECT lang, sr_number, abbr, source FROM ch_act_alias").rows():
        got.setdefault((lang, sr), set()).add((abbr, source))  # also languages the catalog lists without a file
    assert {key: got[key] for key in EXPECTED_ALIASES} == EXPECTED_ALIASES
    acts = dict(store.frame("SELECT sr_number, abbreviation FROM ch_act").rows())
    # ch_act.abbreviation is the German one (B7): only acts with a German edition here have it.
    assert acts == {
        "235.1": "DSG",
        "170.512": "PublG",
        "101": "BV",
        "220": "OR",
        "311.0": "StGB",
        "142.31": "AsylG",
        "0.107": None,
        "210": None,
        "952.0": None,
        "955.0": None,
    }
    assert store.frame("SELECT act_id FROM ch_act WHERE sr_number = '235.1'").item() == act_id_for(DSG_ELI)


def test_rerun_reparses_nothing_and_gives_the_same_store(store, catalog, tmp_path):
    first = ingest_language(store, catalog, "de", tmp_path / "cache")
    snapshot = store.frame("SELECT * FROM ch_act_article ORDER BY version_id, e_id")
    second = ingest_language(store, catalog, "de", tmp_path / "cache")
    assert (second.reparsed, second.reused) == (0, 10)
    assert second.data_version == first.data_version and second.articles == first.articles
    assert store.frame("SELECT * FROM ch_act_article ORDER BY version_id, e_id").equals(snapshot)


def test_a_changed_file_is_the_only_edition_parsed_again(store, catalog, tmp_path):
    ingest_language(store, catalog, "de", tmp_path / "cache")
    # The 2025-07-07 edition is re-published with other bytes (here: the same XML plus a trailing comment).
    changed = tmp_path / "20250707-de.xml"
    changed.write_bytes((SAMPLE / "cc-2022-491" / "20250707-de.xml").read_bytes() + b"<!-- republished -->")
    editions = tuple(
        dataclasses.replace(e, file_url=changed.as_uri(), sha256=None)
        if e.consolidation.endswith("/2022/491/20250707") and e.lang == "de"
        else e
        for e in catalog.editions
    )
    report = ingest_language(store, Catalog(catalog.acts, editions), "de", tmp_path / "cache")
    assert (report.reparsed, report.reused) == (1, 9)
    # Same wording in new bytes: a re-issue, recorded as such, and nothing downstream sees a change.
    [revision] = report.revisions
    assert (revision.kind, revision.consolidation) == ("reissued", f"{DSG_ELI}/20250707")


def test_a_bad_file_is_recorded_with_its_stage_and_the_rest_continue(store, catalog, tmp_path):
    # Point one German edition at the Federal Gazette text: refused at validation, named in the error.
    gazette = (SAMPLE / "not-sr" / "fga-2025-2900-de.xml").resolve().as_uri()
    editions = tuple(
        dataclasses.replace(e, file_url=gazette, sha256=None)
        if e.consolidation.endswith("/2022/491/20250401") and e.lang == "de"
        else e
        for e in catalog.editions
    )
    report = ingest_language(store, Catalog(catalog.acts, editions), "de", tmp_path / "cache")
    assert report.parsed == 9
    bad = [f for f in report.failures if f.stage == "validate"]
    assert len(bad) == 1 and "20250401" in bad[0].consolidation and "fga" in bad[0].error
    stage, error = store.frame(
        "SELECT stage, error FROM ch_act_version WHERE version_id = ?", [version_id_for(f"{DSG_ELI}/20250401", "de")]
    ).row(0)
    assert stage == "validate" and "not a consolidation" in error
    assert (
        store.frame(
            "SELECT count(*) FROM ch_act_article WHERE version_id = ?", [version_id_for(f"{DSG_ELI}/20250401", "de")]
        ).item()
        == 0
    )


def test_a_failed_write_leaves_the_previous_good_partition(store, catalog, tmp_path):
    ingest_language(store, catalog, "de", tmp_path / "cache")
    before = store.frame("SELECT * FROM ch_act_version ORDER BY version_id")
    # A catalog listing one edition twice makes the write violate the version key half-way.
    dsg = [e for e in catalog.editions if e.lang == "de" and e.act_eli == DSG_ELI]
    broken = Catalog(catalog.acts, catalog.editions + (dsg[0],))
    fetched = download_editions(broken, tmp_path / "cache", editions=broken.for_lang("de").editions)
    with pytest.raises(StoreError, match="nothing changed"):
        store_editions(store, broken, "de", fetched)
    assert store.frame("SELECT * FROM ch_act_version ORDER BY version_id").equals(before)


def test_languages_are_independent_partitions(store, catalog, tmp_path):
    ingest_language(store, catalog, "de", tmp_path / "cache")
    ingest_language(store, catalog, "it", tmp_path / "cache")
    de_before = store.frame("SELECT * FROM ch_act_version WHERE lang = 'de' ORDER BY version_id")
    ingest_language(store, catalog, "it", tmp_path / "cache")
    assert store.frame("SELECT * FROM ch_act_version WHERE lang = 'de' ORDER BY version_id").equals(de_before)
    assert store.frame("SELECT count(*) FROM ch_act_version WHERE lang = 'it' AND stage = 'parsed'").item() == 1


@pytest.mark.parametrize(
    ("title", "abbr"),
    [
        ("Bundesgesetz vom 25. September 2020 über den Datenschutz (Datenschutzgesetz, DSG)", "DSG"),
        ("Legge federale del 25 settembre 2020 sulla protezione dei dati (LPD)", "LPD"),
        ("Bundesverfassung der Schweizerischen Eidgenossenschaft vom 18. April 1999", None),
        ("Verordnung (EU) über etwas (in Kraft seit 2020)", None),
    ],
)
def test_title_paren_abbreviation(title, abbr):
    assert title_paren_abbreviation(title) == abbr


def test_sample_folder_is_the_shared_copy_byte_for_byte():
    shared = Path(__file__).resolve().parents[3] / "shared" / "fedlex-sample"
    if not shared.is_dir():
        pytest.skip("shared/ is not beside this clone")
    for path in shared.rglob("*"):
        if path.is_file():
            assert (SAMPLE / path.relative_to(shared)).read_bytes() == path.read_bytes(), path


def test_the_act_row_does_not_depend_on_which_languages_were_ingested_or_their_order(catalog, tmp_path):
    def build(order):
        store = Store(tmp_path / f"{'-'.join(order)}.duckdb")
        for lang in order:
            ingest_language(store, catalog, lang, tmp_path / "cache")
        return store.frame("SELECT * FROM ch_act ORDER BY act_id")

    de_then_fr, fr_then_de = build(["de", "fr"]), build(["fr", "de"])
    assert de_then_fr.equals(fr_then_de)
    assert de_then_fr.filter(pl.col("sr_number") == "235.1")["abbreviation"].item() == "DSG"
    # French alone knows no German abbreviation (B7 reads it from the German partition only).
    fr_only = build(["fr"])
    assert fr_only.filter(pl.col("sr_number") == "235.1")["abbreviation"].item() is None
    assert fr_only.filter(pl.col("sr_number") == "235.1")["title_fr"].item().startswith("Loi fédérale")
