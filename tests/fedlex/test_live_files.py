"""The live path (SPARQL catalog, filestore over HTTP on 127.0.0.1) with the real files that made trouble: an
edition with repeated eIds (SR 210 fr) and a re-issued file (SR 235.1 de 2023-09-01, another generator build)."""

from __future__ import annotations

from dataclasses import replace

from chpit_assets.corpus.ingest import ingest_language
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import Catalog
from chpit_assets.fedlex.catalog_diff import Snapshot, diff
from chpit_assets.fedlex.sparql import FedlexSparqlClient

from .conftest import FAST_RETRY, SAMPLE, filestore_path

DSG_2023 = "https://fedlex.data.admin.ch/eli/cc/2022/491/20230901"


def fetch(fedlex, sleeps) -> Catalog:
    with FedlexSparqlClient(fedlex.endpoint, sleep=sleeps, retry=FAST_RETRY, timeout=5.0) as c:
        return c.fetch_catalog()


def test_an_edition_with_repeated_e_ids_is_fetched_and_stored_whole(fedlex, served, tmp_path, sleeps):
    catalog = fetch(fedlex, sleeps)
    store = Store(tmp_path / "chpit.duckdb")
    report = ingest_language(store, catalog, "fr", tmp_path / "cache", sleep=sleeps)
    assert set(report.failures_by_stage()) <= {"no_file"}, report.failures_markdown()
    [(consolidation, repeated)] = report.repeated_eids.items()
    assert consolidation.startswith("https://fedlex.data.admin.ch/eli/cc/24/233_245_233/") and repeated == 74
    rows = store.frame(
        "SELECT occurrence, count(*) FROM ch_act_article a JOIN ch_act_version v USING (version_id) "
        "WHERE v.eli = ? AND a.e_id = 'art_178' GROUP BY 1 ORDER BY 1",
        [consolidation],
    ).rows()
    assert rows == [(1, 1), (2, 1)]


def test_a_reissued_file_on_the_filestore_is_not_a_new_edition(fedlex, served, tmp_path, sleeps):
    before = fetch(fedlex, sleeps)
    store = Store(tmp_path / "chpit.duckdb")
    first = ingest_language(store, before, "de", tmp_path / "cache", sleep=sleeps)
    # Fedlex regenerates the file: a new filestore name (build 2) with other bytes for the same edition.
    new_path = filestore_path(DSG_2023, "de", 2)
    fedlex.files[new_path] = (SAMPLE / "reissued" / "cc-2022-491" / "20230901-de.xml").read_bytes()
    for row in fedlex.graph.editions:
        if row["cons"]["value"] == DSG_2023 and row["expr"]["value"].endswith("/de"):
            row["file"] = dict(row["file"], value=fedlex.url(new_path))
    after = fetch(fedlex, sleeps)
    assert [e.file_url for e in after.editions if e.consolidation == DSG_2023 and e.lang == "de"] == [
        fedlex.url(new_path)
    ]
    _, changes = diff(Snapshot.of({"de": before.for_lang("de")}), {"de": after.for_lang("de")})
    assert [(c.kind, c.new_editions) for c in changes] == [("changed", ())]  # no new edition announced

    second = ingest_language(store, after, "de", tmp_path / "cache", sleep=sleeps)
    assert fedlex.hits[new_path] == 1 and second.reparsed == 1
    assert [(r.kind, r.generator) for r in second.revisions] == [("reissued", "2024-q4-rel-1.5.26")]
    assert second.data_version == first.data_version  # nothing downstream re-materialises
    # And the same catalog with the file set back is a re-issue again, not a failure.
    restored = Catalog(
        after.acts,
        tuple(
            replace(
                e,
                file_url=next(
                    b.file_url for b in before.editions if (b.consolidation, b.lang) == (e.consolidation, e.lang)
                ),
            )
            for e in after.editions
        ),
    )
    third = ingest_language(store, restored, "de", tmp_path / "cache", sleep=sleeps)
    assert [r.kind for r in third.revisions] == ["reissued"] and third.data_version == first.data_version


def test_an_html_page_at_a_new_filestore_path_keeps_the_last_good_file(fedlex, served, tmp_path, sleeps):
    from chpit_assets.corpus.schema import version_id_for

    from .conftest import HTML_SHELL

    store = Store(tmp_path / "chpit.duckdb")
    before = fetch(fedlex, sleeps)
    ingest_language(store, before, "de", tmp_path / "cache", sleep=sleeps)
    [good_url] = [e.file_url for e in before.editions if e.consolidation == DSG_2023 and e.lang == "de"]
    new_path = filestore_path(DSG_2023, "de", 3)
    fedlex.files[new_path] = HTML_SHELL  # Fedlex answers a path it does not have with 200 and its app page
    for row in fedlex.graph.editions:
        if row["cons"]["value"] == DSG_2023 and row["expr"]["value"].endswith("/de"):
            row["file"] = dict(row["file"], value=fedlex.url(new_path))
    report = ingest_language(store, fetch(fedlex, sleeps), "de", tmp_path / "cache", sleep=sleeps)
    [kept] = report.last_good
    assert kept.url == fedlex.url(new_path) and kept.stage == "validate"
    row = store.frame(
        "SELECT stage, file_url, failed_url, n_articles FROM ch_act_version WHERE version_id = ?",
        [version_id_for(DSG_2023, "de")],
    ).row(0)
    assert row == ("parsed", good_url, fedlex.url(new_path), 77)
