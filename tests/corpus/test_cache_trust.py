"""Issue 23 item 1: a cached edition file is trusted for its bytes, never for its index row.

Real sample files through the real downloader (file:// urls) into a temp cache, then the cache is
damaged on disk the way bit rot or an edit would."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from chpit_assets.corpus.ingest import store_editions
from chpit_assets.corpus.schema import version_id_for
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import Catalog, load_sample_catalog
from chpit_assets.fedlex.download import EditionDownloader, download_editions

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
DSG = "https://fedlex.data.admin.ch/eli/cc/2022/491"
APRIL = f"{DSG}/20250401"
WORD, EDITED = "Der EDÖB kann die Meldung".encode(), "Der EDÖB kann die MELDUNG".encode()


@pytest.fixture()
def catalog() -> Catalog:
    return load_sample_catalog(SAMPLE).for_lang("de")


def _art_24(store: Store) -> str:
    return store.frame(
        "SELECT text FROM ch_act_article WHERE version_id = ? AND e_id = 'art_24'", [version_id_for(APRIL, "de")]
    ).item()


def _edit_cached_april(cache: Path, fetched) -> Path:
    (got,) = [f for f in fetched if f.edition.consolidation == APRIL]
    data = got.path.read_bytes()
    assert data.count(WORD) == 1
    got.path.write_bytes(data.replace(WORD, EDITED))  # same length: only the bytes tell
    return got.path


def test_an_edited_cached_file_is_refused_naming_it_never_parsed(catalog, tmp_path):
    cache = tmp_path / "cache"
    fetched = download_editions(catalog, cache)
    edited = _edit_cached_april(cache, fetched)
    store = Store(tmp_path / "chpit.duckdb")  # a re-parse: a deleted store (a parser bump does the same)
    report = store_editions(store, catalog, "de", download_editions(catalog, cache))
    (failure,) = [f for f in report.failures if f.stage != "no_file"]
    assert failure.stage == "cache" and failure.consolidation == APRIL
    assert str(edited) in failure.error and "changed on disk" in failure.error
    row = store.frame(
        "SELECT stage, n_articles FROM ch_act_version WHERE version_id = ?", [version_id_for(APRIL, "de")]
    )
    assert row.rows() == [("cache", None)]
    assert "MELDUNG" not in "".join(store.frame("SELECT text FROM ch_act_article").to_series().to_list())
    # The file was moved aside: the next run copies the sample file again and parses the real text.
    assert not edited.exists() and Path(f"{edited}.corrupt").exists()
    again = store_editions(store, catalog, "de", download_editions(catalog, cache))
    assert [f.stage for f in again.failures] == ["no_file"]
    assert "5bis Der EDÖB kann die Meldung" in _art_24(store)


def test_with_a_refetch_the_edited_file_is_fetched_again_and_the_real_text_stored(catalog, tmp_path):
    cache = tmp_path / "cache"
    _edit_cached_april(cache, download_editions(catalog, cache))
    store = Store(tmp_path / "chpit.duckdb")
    with EditionDownloader(cache) as downloader:
        report = store_editions(
            store, catalog, "de", downloader.download(catalog), refetch=lambda e: downloader.refetch(catalog, e)
        )
    assert [f.stage for f in report.failures] == ["no_file"]
    assert "5bis Der EDÖB kann die Meldung" in _art_24(store)


def test_an_unreadable_index_is_set_aside_and_rebuilt_from_the_files_without_refetching(catalog, tmp_path):
    cache = tmp_path / "cache"
    first = download_editions(catalog, cache)
    index = cache / "index.sqlite"
    index.write_bytes(b"this is not an SQLite database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    second = download_editions(catalog, cache)
    assert [(r.stage, r.sha256) for r in second] == [("cached" if r.ok else r.stage, r.sha256) for r in first], (
        "every file found again by its own identity, none downloaded"
    )
    assert Path(f"{index}.corrupt").read_bytes().startswith(b"this is not")
    rows = sqlite3.connect(index).execute("SELECT count(*) FROM entry").fetchone()[0]
    assert rows == sum(1 for r in first if r.ok)  # the URL rows are back: the next look-up is by URL again


def test_a_rebuild_skips_a_corrupt_file_and_that_edition_is_fetched_again(catalog, tmp_path):
    cache = tmp_path / "cache"
    edited = _edit_cached_april(cache, download_editions(catalog, cache))
    (cache / "index.sqlite").write_bytes(b"\0" * 4096)
    results = {r.edition.consolidation: r for r in download_editions(catalog, cache)}
    assert results[APRIL].stage == "downloaded" and WORD in results[APRIL].path.read_bytes()
    assert Path(f"{edited}.corrupt").exists()
