"""The edition downloader against real sample files served from 127.0.0.1 (see conftest)."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import sqlite3
import time
from dataclasses import replace
from datetime import date
from pathlib import Path
from urllib.parse import quote, urlsplit
from urllib.request import url2pathname

import pytest

from chpit_assets.fedlex.catalog import Catalog, CatalogEdition, CatalogError, load_sample_catalog
from chpit_assets.fedlex.download import (
    EditionCache,
    EditionDownloader,
    download_editions,
)
from chpit_assets.retry import RetryPolicy

from .conftest import FAST_RETRY, HTML_SHELL, SAMPLE, FakeFedlex, Reply

DSG = "https://fedlex.data.admin.ch/eli/cc/2022/491"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def downloader(tmp_path: Path, sleeps, **options) -> EditionDownloader:
    options.setdefault("retry", FAST_RETRY)
    options.setdefault("timeout", 5.0)
    return EditionDownloader(tmp_path / "cache", sleep=sleeps, **options)


def only(catalog: Catalog, consolidation: str, lang: str) -> Catalog:
    """The catalog cut down to one edition."""
    editions = tuple(e for e in catalog.editions if e.consolidation == consolidation and e.lang == lang)
    assert len(editions) == 1
    return Catalog(catalog.acts, editions)


def path_of(fedlex: FakeFedlex, edition) -> str:
    return edition.file_url.removeprefix(fedlex.base_url)


def with_file(catalog: Catalog) -> int:
    return sum(1 for e in catalog.editions if e.file_url)


def cache_files(tmp_path: Path) -> list[str]:
    """What the cache holds: its content files and its index rows."""
    files = sorted(str(p) for p in (tmp_path / "cache" / "sha256").rglob("*") if p.is_file())
    index = tmp_path / "cache" / "index.sqlite"
    rows = sqlite3.connect(index).execute("SELECT url FROM entry").fetchall() if index.exists() else []
    return files + sorted(url for (url,) in rows)


def test_downloads_validates_and_stores_by_content_hash(fedlex, served, tmp_path, sleeps):
    with downloader(tmp_path, sleeps) as d:
        results = d.download(served)
    assert [r.edition for r in results] == list(served.editions)  # one result each, in catalog order
    stages = [r.stage for r in results]
    n = with_file(served)
    assert stages.count("downloaded") == n and stages.count("no_file") == len(stages) - n
    assert n == len(fedlex.files) == 19  # every real file of the sample but the re-issued and gazette ones
    de = next(r for r in results if r.edition.consolidation == DSG + "/20250707" and r.edition.lang == "de")
    real = SAMPLE / "cc-2022-491" / "20250707-de.xml"
    assert de.sha256 == sha(real) == de.path.stem
    assert de.path == tmp_path / "cache" / "sha256" / de.sha256[:2] / f"{de.sha256}.xml"
    assert de.path.read_bytes() == real.read_bytes() and de.error is None and de.ok
    assert all(r.path is None and r.sha256 is None and r.error is None for r in results if r.stage == "no_file")
    assert sum(fedlex.hits.values()) == n  # one GET per file, none for "no file"


def test_second_run_downloads_nothing(fedlex, served, tmp_path, sleeps):
    first = download_editions(served, tmp_path / "cache", sleep=sleeps)
    hits = sum(fedlex.hits.values())
    second = download_editions(served, tmp_path / "cache", sleep=sleeps)
    assert sum(fedlex.hits.values()) == hits == with_file(served)
    assert [r.stage for r in second] == ["cached" if r.stage == "downloaded" else r.stage for r in first]
    assert [(r.path, r.sha256) for r in second] == [(r.path, r.sha256) for r in first]


def test_an_indexed_file_that_is_gone_is_fetched_again(fedlex, served, tmp_path, sleeps):
    first = download_editions(served, tmp_path / "cache", sleep=sleeps)
    gone = next(r for r in first if r.ok)
    gone.path.unlink()
    hits = fedlex.hits.copy()
    second = download_editions(served, tmp_path / "cache", sleep=sleeps)
    (again,) = [r for r in second if r.edition == gone.edition]
    assert (again.stage, again.path, again.path.is_file()) == ("downloaded", gone.path, True)
    assert fedlex.hits[path_of(fedlex, gone.edition)] == hits[path_of(fedlex, gone.edition)] + 1
    assert all(r.stage == "cached" for r in second if r.edition != gone.edition and r.ok)


def test_html_shell_with_200_is_rejected(fedlex, served, tmp_path, sleeps):
    catalog = only(served, DSG + "/20250707", "fr")
    fedlex.files[path_of(fedlex, catalog.editions[0])] = HTML_SHELL
    (result,) = download_editions(catalog, tmp_path / "cache", sleep=sleeps)
    assert result.stage == "validate" and result.path is None and result.sha256 is None
    assert "an HTML page, not AKN XML" in result.error
    # the message names act, SR, edition, language and url
    for part in (DSG, "SR 235.1", DSG + "/20250707", "[fr]", catalog.editions[0].file_url):
        assert part in result.error
    assert cache_files(tmp_path) == []  # nothing accepted, no index entry either


def test_truncated_xml_is_rejected(fedlex, served, tmp_path, sleeps):
    catalog = only(served, DSG + "/20250707", "it")
    path = path_of(fedlex, catalog.editions[0])
    fedlex.files[path] = fedlex.files[path][:50_000]  # a whole response, but of a cut file
    (result,) = download_editions(catalog, tmp_path / "cache", sleep=sleeps)
    assert result.stage == "validate" and "not well-formed XML" in result.error
    assert cache_files(tmp_path) == []


def test_connection_dropped_mid_body_is_retried(fedlex, served, tmp_path, sleeps):
    catalog = only(served, DSG + "/20250707", "it")
    path = path_of(fedlex, catalog.editions[0])
    fedlex.script(path, Reply(200, fedlex.files[path], truncate_to=10_000))
    (result,) = download_editions(catalog, tmp_path / "cache", sleep=sleeps, retry=FAST_RETRY)
    assert result.stage == "downloaded" and fedlex.hits[path] == 2 and sleeps == [0.5]
    assert result.path.read_bytes() == fedlex.files[path]


def test_expected_sha256_mismatch_is_a_validate_failure(fedlex, served, tmp_path, sleeps):
    catalog = only(served, DSG + "/20250707", "de")
    wrong = "0" * 64
    catalog = Catalog(catalog.acts, (replace(catalog.editions[0], sha256=wrong),))
    (result,) = download_editions(catalog, tmp_path / "cache", sleep=sleeps)
    actual = hashlib.sha256(fedlex.files[path_of(fedlex, catalog.editions[0])]).hexdigest()
    assert result.stage == "validate" and f"sha256 {actual} != catalog {wrong}" in result.error
    assert cache_files(tmp_path) == []


def test_a_real_file_served_for_the_wrong_edition_is_rejected(fedlex, served, tmp_path, sleeps):
    july = DSG + "/20250707"
    catalog = only(served, july, "de")
    april_bytes = (SAMPLE / "cc-2022-491" / "20250401-de.xml").read_bytes()
    fedlex.files[path_of(fedlex, catalog.editions[0])] = april_bytes
    (result,) = download_editions(catalog, tmp_path / "cache", sleep=sleeps)
    assert result.stage == "validate"
    assert "edition date 2025-04-01 != catalog 2025-07-07" in result.error and f"edition {july} [de]" in result.error


def test_a_file_in_the_wrong_language_is_rejected(fedlex, served, tmp_path, sleeps):
    catalog = only(served, DSG + "/20250707", "de")
    fedlex.files[path_of(fedlex, catalog.editions[0])] = (SAMPLE / "cc-2022-491" / "20250707-fr.xml").read_bytes()
    (result,) = download_editions(catalog, tmp_path / "cache", sleep=sleeps)
    assert result.stage == "validate" and "language 'fr' != catalog 'de'" in result.error


def test_a_federal_gazette_text_is_not_a_consolidation(fedlex, served, tmp_path, sleeps):
    catalog = only(served, DSG + "/20250707", "de")
    fedlex.files[path_of(fedlex, catalog.editions[0])] = (SAMPLE / "not-sr" / "fga-2025-2900-de.xml").read_bytes()
    (result,) = download_editions(catalog, tmp_path / "cache", sleep=sleeps)
    assert result.stage == "validate" and "not a consolidation" in result.error


def test_404_is_a_download_failure_and_the_batch_goes_on(fedlex, served, tmp_path, sleeps):
    broken = next(e for e in served.editions if e.consolidation == DSG + "/20250707" and e.lang == "en")
    del fedlex.files[path_of(fedlex, broken)]
    results = download_editions(served, tmp_path / "cache", sleep=sleeps)
    failed = [r for r in results if not r.ok and r.stage != "no_file"]
    assert [(r.edition, r.stage) for r in failed] == [(broken, "download")]
    assert "HTTP 404" in failed[0].error and "[en]" in failed[0].error and broken.file_url in failed[0].error
    assert sum(r.stage == "downloaded" for r in results) == with_file(served) - 1
    assert sleeps == []  # a 404 is not retried


def test_503_then_success_and_429_with_retry_after(fedlex, served, tmp_path, sleeps):
    catalog = only(served, DSG + "/20250707", "de")
    path = path_of(fedlex, catalog.editions[0])
    fedlex.script(path, Reply(503, b"busy"), Reply(429, b"", {"Retry-After": "3"}))
    (result,) = download_editions(catalog, tmp_path / "cache", sleep=sleeps, retry=FAST_RETRY)
    assert result.stage == "downloaded" and fedlex.hits[path] == 3
    assert sleeps == [0.5, 3.0]  # backoff, then the server's own wish (longer than our 1.0)


def test_persistent_5xx_gives_up_after_the_bounded_tries(fedlex, served, tmp_path, sleeps):
    catalog = only(served, DSG + "/20250707", "de")
    path = path_of(fedlex, catalog.editions[0])
    fedlex.script(path, *[Reply(500, b"oops")] * 10)
    (result,) = download_editions(catalog, tmp_path / "cache", sleep=sleeps, retry=FAST_RETRY)
    assert result.stage == "download" and "HTTP 500" in result.error and "gave up after 3 tries" in result.error
    assert fedlex.hits[path] == 3


def test_timeouts_are_bounded(fedlex, served, tmp_path, sleeps):
    catalog = only(served, DSG + "/20250707", "de")
    path = path_of(fedlex, catalog.editions[0])
    fedlex.script(path, *[Reply(200, b"late", delay=1.0)] * 2)
    (result,) = download_editions(
        catalog, tmp_path / "cache", sleep=sleeps, timeout=0.1, retry=RetryPolicy(attempts=2, base_delay=0.5, jitter=0)
    )
    assert result.stage == "download" and "ReadTimeout" in result.error
    assert fedlex.hits[path] == 2 and sleeps == [0.5]


@pytest.mark.parametrize("concurrency", [1, 3])
def test_interrupted_run_leaves_only_whole_files_and_resumes(fedlex, served, tmp_path, sleeps, concurrency):
    files = [e for e in served.editions if e.file_url]
    victim = files[4]
    # The connection for the fifth file dies mid-body; the operator presses Ctrl-C during the backoff.
    fedlex.script(path_of(fedlex, victim), Reply(200, fedlex.files[path_of(fedlex, victim)], truncate_to=20_000))

    def interrupt(seconds):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        download_editions(served, tmp_path / "cache", sleep=interrupt, concurrency=concurrency)
    cache = EditionCache(tmp_path / "cache")
    assert cache.temp_files() == []
    kept = [p for p in (tmp_path / "cache" / "sha256").rglob("*") if p.is_file()]
    assert all(p.suffix == ".xml" and p.stem == sha(p) for p in kept)  # whole files only: each named by its digest
    stored = {p.stem for p in kept}
    assert hashlib.sha256(fedlex.files[path_of(fedlex, victim)]).hexdigest() not in stored
    if concurrency == 1:
        assert len(stored) == 4  # exactly the four before the victim
    before = fedlex.hits.copy()

    results = download_editions(served, tmp_path / "cache", sleep=sleeps, concurrency=concurrency)
    assert all(r.ok for r in results if r.edition.file_url)
    assert {r.sha256 for r in results if r.stage == "cached"} == stored
    for r in results:
        if r.edition.file_url:
            again = fedlex.hits[path_of(fedlex, r.edition)] - before[path_of(fedlex, r.edition)]
            assert again == (0 if r.sha256 in stored else 1)  # nothing fetched twice


def test_a_partial_temp_file_from_a_dead_run_is_swept_and_never_used(fedlex, served, tmp_path, sleeps):
    catalog = only(served, DSG + "/20250707", "de")
    real_sha = hashlib.sha256(fedlex.files[path_of(fedlex, catalog.editions[0])]).hexdigest()
    final = tmp_path / "cache" / "sha256" / real_sha[:2] / f"{real_sha}.xml"
    final.parent.mkdir(parents=True)
    stale = final.with_name(f".{final.name}.99999.deadbeef.tmp")
    young = final.with_name(f".{final.name}.99998.cafebabe.tmp")
    stale.write_bytes(b"<akomaNtoso")
    young.write_bytes(b"<akomaNtoso")
    old = time.time() - 2 * EditionCache.TEMP_STALE_AFTER
    os.utime(stale, (old, old))
    (result,) = download_editions(catalog, tmp_path / "cache", sleep=sleeps)
    assert (
        result.stage == "downloaded"
        and result.path == final
        and final.read_bytes() == fedlex.files[path_of(fedlex, catalog.editions[0])]
    )
    assert not stale.exists() and young.exists()  # a young one may belong to a running process


def test_stale_temp_files_are_swept_at_most_once_per_interval(tmp_path):
    cache = EditionCache(tmp_path / "cache")
    folder = tmp_path / "cache" / "sha256" / "ab"
    folder.mkdir(parents=True)
    old = time.time() - 2 * EditionCache.TEMP_STALE_AFTER

    def stale(name: str) -> Path:
        path = folder / f".{name}.xml.1.tmp"
        path.write_bytes(b"<akomaNtoso")
        os.utime(path, (old, old))
        return path

    first = stale("first")
    cache.sweep_stale_temp()
    assert not first.exists()
    second = stale("second")
    cache.sweep_stale_temp()  # within the interval of the last sweep: no walk over the cache
    assert second.exists()
    mark = tmp_path / "cache" / "last-sweep"
    os.utime(mark, (old, old))
    cache.sweep_stale_temp()
    assert not second.exists()


def test_a_cached_url_claimed_by_another_edition_is_checked_again(fedlex, served, tmp_path, sleeps):
    catalog = only(served, DSG + "/20250707", "de")
    download_editions(catalog, tmp_path / "cache", sleep=sleeps)
    # Same URL, now listed for the April edition: the cached file is not trusted for it.
    april = Catalog(
        catalog.acts,
        (
            replace(
                catalog.editions[0],
                consolidation=DSG + "/20250401",
                date_applicability=catalog.editions[0].date_applicability.replace(month=4, day=1),
            ),
        ),
    )
    (result,) = download_editions(april, tmp_path / "cache", sleep=sleeps)
    assert result.stage == "validate" and "edition date 2025-07-07 != catalog 2025-04-01" in result.error
    assert fedlex.hits[path_of(fedlex, catalog.editions[0])] == 2


def test_bounded_concurrency(fedlex, served, tmp_path, sleeps):
    for path, body in list(fedlex.files.items()):
        fedlex.script(path, Reply(200, body, {"Content-Type": "application/xml"}, delay=0.05))
    results = download_editions(served, tmp_path / "cache", sleep=sleeps, concurrency=2)
    assert sum(r.stage == "downloaded" for r in results) == with_file(served)
    assert fedlex.max_in_flight <= 2


def test_the_offline_sample_through_file_urls(sample_catalog, tmp_path, sleeps):
    results = download_editions(sample_catalog, tmp_path / "cache", sleep=sleeps)
    accepted = [r for r in results if r.ok]
    assert len(accepted) == with_file(sample_catalog) and {r.stage for r in results} == {"downloaded", "no_file"}
    assert all(r.sha256 == r.edition.sha256 for r in accepted)  # the sample's own digests
    again = download_editions(sample_catalog, tmp_path / "cache", sleep=sleeps)
    assert sum(r.stage == "cached" for r in again) == with_file(sample_catalog)


def test_a_missing_local_file_is_a_download_failure(sample_catalog, tmp_path, sleeps):
    e = next(e for e in sample_catalog.editions if e.file_url)
    catalog = Catalog(sample_catalog.acts, (replace(e, file_url=e.file_url + ".missing"),))
    (result,) = download_editions(catalog, tmp_path / "cache", sleep=sleeps)
    assert result.stage == "download" and "cannot read file" in result.error


def test_an_edition_whose_act_is_not_in_the_catalog(served, tmp_path, sleeps):
    e = next(e for e in served.editions if e.file_url)
    (result,) = download_editions(Catalog((), (e,)), tmp_path / "cache", sleep=sleeps)
    assert result.stage == "validate" and "act is not in the catalog" in result.error


def _one_file_catalog(folder: Path, name: str) -> None:
    (folder / "catalog.json").write_text(
        json.dumps(
            {
                "acts": [
                    {
                        "eli": "https://fedlex.data.admin.ch/eli/cc/1/1",
                        "sr_number": "1",
                        "in_force_status": 0,
                        "editions": [
                            {
                                "consolidation": "https://fedlex.data.admin.ch/eli/cc/1/1/20200101",
                                "lang": "de",
                                "date_applicability": "2020-01-01",
                                "file": name,
                            }
                        ],
                    }
                ]
            }
        ),
        encoding="utf-8",
    )


@pytest.mark.parametrize(
    "name", ["../outside.xml", "/etc/passwd", "cc-1/./x.xml", "cc-1//x.xml", "cc-1/../../x.xml", "cc-1/", "cc-1/.."]
)
def test_a_sample_catalog_file_outside_its_folder_is_refused(tmp_path, name):
    _one_file_catalog(tmp_path, name)
    with pytest.raises(CatalogError, match=r"cc/1/1/20200101 \[de\]: file .* is not a plain relative path"):
        load_sample_catalog(tmp_path)


@pytest.mark.parametrize("name", ["cc-1/x.xml", "cc 1/x ä.xml", "cc-1/x%20y.xml", "cc-1/.x~_-.xml", "cc-1/x?#.xml"])
def test_a_sample_file_url_quotes_what_needs_quoting(tmp_path, name):
    _one_file_catalog(tmp_path, name)
    (edition,) = load_sample_catalog(tmp_path).editions
    assert edition.file_url == f"{tmp_path.resolve().as_uri()}/{quote(name)}"
    assert url2pathname(urlsplit(edition.file_url).path) == str(tmp_path.resolve() / name)


def test_sample_file_urls_are_the_files_uris(sample_catalog):
    files = [e for e in sample_catalog.editions if e.file_url]
    assert files and all(Path(url2pathname(urlsplit(e.file_url).path)).is_file() for e in files)


def test_entries_of_the_earlier_json_index_are_imported_once(sample_catalog, tmp_path, sleeps):
    """A cache filled before index.sqlite (one JSON file per URL) is not fetched again."""
    first = download_editions(sample_catalog, tmp_path / "cache", sleep=sleeps)
    cache = tmp_path / "cache"
    legacy = []
    for r in first:
        if r.ok:
            key = hashlib.sha256(r.edition.file_url.encode()).hexdigest()
            path = cache / "index" / key[:2] / f"{key}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                json.dumps(
                    {
                        "url": r.edition.file_url,
                        "sha256": r.sha256,
                        "lang": r.edition.lang,
                        "consolidation": r.edition.consolidation,
                    }
                )
            )
            legacy.append(path)
    (cache / "index.sqlite").unlink()
    again = download_editions(sample_catalog, cache, sleep=sleeps)
    n = with_file(sample_catalog)
    assert len(legacy) == n and sum(r.stage == "cached" for r in again) == n
    for path in legacy:  # imported once: the JSON files are not read any more
        path.unlink()
    assert sum(r.stage == "cached" for r in download_editions(sample_catalog, cache, sleep=sleeps)) == n


def _put_many(cache_dir: str, prefix: str, n: int) -> None:
    cache = EditionCache(Path(cache_dir))
    edition = CatalogEdition(
        "https://fedlex.data.admin.ch/eli/cc/1/1",
        "https://fedlex.data.admin.ch/eli/cc/1/1/20200101",
        "de",
        date(2020, 1, 1),
        None,
        None,
    )
    for i in range(n):
        cache.put(f"https://example.invalid/{prefix}/{i}.xml", b"<akomaNtoso/>", "ab" * 32, edition)
        if i % 7 == 0:  # many small transactions, so that the processes contend
            cache.flush()
    cache.flush()


def test_processes_writing_the_index_at_the_same_time_lose_no_row(tmp_path):
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_put_many, args=(str(tmp_path / "cache"), name, 60)) for name in ("a", "b", "c")]
    for w in writers:
        w.start()
    for w in writers:
        w.join(60)
        assert w.exitcode == 0
    urls = [f"https://example.invalid/{name}/{i}.xml" for name in ("a", "b", "c") for i in range(60)]
    cache = EditionCache(tmp_path / "cache")
    assert set(cache.lookup_many(urls)) == set(cache.lookup_many(urls, langs=["de"])) == set(urls)
    assert cache.lookup_many(urls, langs=["fr"]) == {}  # every row was written for a German edition


# -- issue 23 item 2: catalogs refused by name --------------------------------------------------


def _one_act_catalog(tmp_path: Path, editions: list[dict]) -> Path:
    act = {"eli": "https://fedlex.data.admin.ch/eli/cc/1/1", "sr_number": "1", "in_force_status": 0}
    (tmp_path / "catalog.json").write_text(json.dumps({"acts": [{**act, "editions": editions}]}), encoding="utf-8")
    return tmp_path


def _edition(day: str, end: str | None = None, lang: str = "de") -> dict:
    return {
        "consolidation": f"https://fedlex.data.admin.ch/eli/cc/1/1/{day.replace('-', '')}",
        "lang": lang,
        "date_applicability": day,
        "date_end_applicability": end,
        "file": None,
    }


def test_a_catalog_with_two_editions_of_one_act_language_and_day_is_refused_naming_them(tmp_path):
    twice = {**_edition("2020-01-01"), "consolidation": "https://fedlex.data.admin.ch/eli/cc/1/1/20200101-bis"}
    folder = _one_act_catalog(tmp_path, [_edition("2020-01-01"), _edition("2020-01-01", lang="fr"), twice])
    with pytest.raises(CatalogError, match=r"act SR 1 \(.*cc/1/1\) \[de\] has two editions applicable from 2020-01-01"):
        load_sample_catalog(folder)


@pytest.mark.parametrize("lang", ["de", "fr", "it", "en", "rm"])
def test_reading_one_language_gives_that_language_of_the_whole_catalog(lang):
    """What a language partition reads (FedlexSource.load_catalog): the same acts and editions, in the
    same order, as the whole sample's catalog restricted to it."""
    assert load_sample_catalog(SAMPLE, langs=[lang]).for_lang(lang) == load_sample_catalog(SAMPLE).for_lang(lang)


def test_a_language_is_failed_by_its_own_editions_only(tmp_path):
    """As the live query asks for one language: a bad Italian edition fails the Italian read, naming
    it, not the German one; a language Fedlex does not have fails every read."""
    folder = _one_act_catalog(tmp_path, [_edition("2020-01-01"), _edition("2020-01-01", end="2019-12-31", lang="it")])
    assert [e.lang for e in load_sample_catalog(folder, langs=["de"]).editions] == ["de"]
    with pytest.raises(CatalogError, match=r"\[it\] edition of 2020-01-01: it ends on 2019-12-31"):
        load_sample_catalog(folder, langs=["it"])
    with pytest.raises(CatalogError, match=r"\[it\] edition of 2020-01-01"):
        load_sample_catalog(folder)
    misspelt = _one_act_catalog(tmp_path, [_edition("2020-01-01"), _edition("2020-02-01", lang="xx")])
    with pytest.raises(CatalogError, match="unknown language 'xx'"):
        load_sample_catalog(misspelt, langs=["de"])


def test_an_edition_ending_before_it_starts_is_refused_naming_it(tmp_path):
    folder = _one_act_catalog(tmp_path, [_edition("2020-01-01", end="2019-12-31")])
    with pytest.raises(CatalogError, match=r"act SR 1 .*\[de\] edition of 2020-01-01: it ends on 2019-12-31, before"):
        load_sample_catalog(folder)
    # A one-day edition (ends the day it starts; the end is inclusive) is fine.
    assert load_sample_catalog(_one_act_catalog(tmp_path, [_edition("2020-01-01", end="2020-01-01")])).editions


def test_a_catalog_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from chpit_assets.fedlex import catalog

    folder = _one_act_catalog(tmp_path, [_edition("2020-01-01")])
    monkeypatch.setattr(catalog, "MAX_CATALOG_BYTES", 10)
    with pytest.raises(CatalogError, match=r"catalog\.json: \d+ bytes, over the limit of 10 bytes"):
        load_sample_catalog(folder)


def test_a_downloaded_file_with_an_entity_is_rejected_at_validate(tmp_path, sleeps):
    from tests.akn_factory import article, edition_xml

    doc = edition_xml(
        body=article("art_1", "1", "1|Frist &frist;."), sr_number="1", date_applicability=date(2020, 1, 1)
    )
    doc = doc.replace(b"?>", b'?><!DOCTYPE akomaNtoso [<!ENTITY frist "30 Tage">]>', 1)
    (tmp_path / "f.xml").write_bytes(doc)
    edition = CatalogEdition(
        "https://fedlex.data.admin.ch/eli/cc/2099/1",
        "https://fedlex.data.admin.ch/eli/cc/2099/1/20200101",
        "de",
        date(2020, 1, 1),
        None,
        (tmp_path / "f.xml").as_uri(),
    )
    from chpit_assets.fedlex.catalog import CatalogAct

    act = CatalogAct("https://fedlex.data.admin.ch/eli/cc/2099/1", "1", 0, None, None)
    (result,) = download_editions(Catalog((act,), (edition,)), tmp_path / "cache", sleep=sleeps)
    assert result.stage == "validate" and "DOCTYPE" in result.error and "entities frist" in result.error
