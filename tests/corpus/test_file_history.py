"""What happens to a stored edition when its file changes: a re-issued file (issue 13.4), a corrected one, a new
file that fails (issue 15.3: the last good parse is kept), and a store written before the article key.

Each test works on a temp copy of the sample whose catalog points one edition at another file, as the
live catalog would after Fedlex regenerated it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from chpit_assets.bench.changes import update_changes
from chpit_assets.corpus.ingest import editions_on_last_good_file, ingest_language, last_good_editions
from chpit_assets.corpus.schema import version_id_for
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import load_sample_catalog
from chpit_assets.fedlex.catalog_diff import Snapshot, diff

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
DSG_2023 = "https://fedlex.data.admin.ch/eli/cc/2022/491/20230901"
FILE = "cc-2022-491/20230901-de.xml"
REISSUED = SAMPLE / "reissued" / FILE


@pytest.fixture()
def sample(tmp_path) -> Path:
    copy = tmp_path / "sample"
    shutil.copytree(SAMPLE, copy)
    return copy


def swap_file(sample: Path, data: bytes) -> None:
    """Put `data` in place of the SR 235.1 de 2023-09-01 file, and its sha256 in the catalog."""
    (sample / FILE).write_bytes(data)
    catalog = json.loads((sample / "catalog.json").read_text(encoding="utf-8"))
    [edition] = [e for a in catalog["acts"] for e in a["editions"] if e.get("file") == FILE]
    edition["sha256"] = hashlib.sha256(data).hexdigest()
    (sample / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")


def build(store: Store, sample: Path, cache: Path):
    catalog = load_sample_catalog(sample)
    report = ingest_language(store, catalog, "de", cache)
    return catalog, report, update_changes(store, "de")


def version_row(store: Store) -> dict:
    return store.frame("SELECT * FROM ch_act_version WHERE version_id = ?", [version_id_for(DSG_2023, "de")]).row(
        0, named=True
    )


def articles(store: Store):
    return store.frame(
        "SELECT * FROM ch_act_article WHERE version_id = ? ORDER BY e_id, occurrence", [version_id_for(DSG_2023, "de")]
    )


def test_a_reissued_file_with_the_same_wording_changes_nothing_downstream(sample, tmp_path):
    store = Store(tmp_path / "chpit.duckdb")
    old_catalog, first, first_changes = build(store, sample, tmp_path / "cache")
    old_sha = version_row(store)["sha256"]
    before = articles(store)
    swap_file(sample, REISSUED.read_bytes())
    catalog, second, second_changes = build(store, sample, tmp_path / "cache")

    # The sensor's view: the act changed (a file hash), but no new edition arrived.
    _, changes = diff(Snapshot.of({"de": old_catalog.for_lang("de")}), {"de": catalog.for_lang("de")})
    assert [(c.kind, c.new_editions) for c in changes] == [("changed", ())]
    # Parsed again (new bytes), found equal: same data version, no change row recomputed, articles untouched.
    assert second.reparsed == 1 and second.data_version == first.data_version
    assert second_changes.acts_recomputed == 0 and second_changes.changes.equals(first_changes.changes)
    assert articles(store).equals(before)
    row = version_row(store)
    assert (row["revision"], row["reissued_from"], row["generator"]) == ("reissued", old_sha, "2024-q4-rel-1.5.26")
    assert row["sha256"] == hashlib.sha256(REISSUED.read_bytes()).hexdigest() != old_sha
    [revision] = second.revisions
    assert (revision.kind, revision.old_sha256, revision.generator) == ("reissued", old_sha, "2024-q4-rel-1.5.26")
    assert "reissued" in second.revisions_markdown()


def test_a_corrected_file_is_visible_as_a_correction(sample, tmp_path):
    store = Store(tmp_path / "chpit.duckdb")
    _, first, first_changes = build(store, sample, tmp_path / "cache")
    data = REISSUED.read_bytes()
    assert data.count(b"Datenschutzgesetz") and b"Personendaten" in data
    swap_file(sample, data.replace(b"Personendaten", b"Personen-Daten", 1))
    _, second, second_changes = build(store, sample, tmp_path / "cache")
    assert second.data_version != first.data_version
    assert [r.kind for r in second.revisions] == ["corrected"] and version_row(store)["revision"] == "corrected"
    assert second_changes.acts_recomputed == 1  # the act's changes are computed again from the new text
    assert articles(store)["text"].str.contains("Personen-Daten").any()


def test_a_new_file_that_fails_keeps_the_last_good_parse_and_says_so(sample, tmp_path):
    store = Store(tmp_path / "chpit.duckdb")
    _, first, first_changes = build(store, sample, tmp_path / "cache")
    before, good = articles(store), version_row(store)
    assert before.height == 77 and editions_on_last_good_file(store) == 0
    swap_file(sample, b"<!DOCTYPE html><html><body>Wartungsarbeiten</body></html>")
    _, second, second_changes = build(store, sample, tmp_path / "cache")

    assert articles(store).equals(before)  # nothing of the edition lost
    row = version_row(store)
    assert (row["stage"], row["sha256"], row["content_sha256"]) == ("parsed", good["sha256"], good["content_sha256"])
    assert row["failed_stage"] == "validate" and "HTML page" in row["failed_error"]
    assert row["failed_url"].endswith(FILE) and row["file_url"] == good["file_url"]
    assert second.data_version == first.data_version and second_changes.changes.equals(first_changes.changes)
    [kept] = second.last_good
    assert kept.url.endswith(FILE) and kept.stage == "validate" and FILE in second.last_good_markdown()
    assert second.failures_by_stage() == first.failures_by_stage()  # not counted as a failed edition
    # The count the publish gate reads, per language and overall.
    assert editions_on_last_good_file(store, "de") == editions_on_last_good_file(store) == 1
    assert editions_on_last_good_file(store, "fr") == 0
    assert last_good_editions(store).select("sr_number", "failed_stage").rows() == [("235.1", "validate")]

    # The good file back: the failure is cleared, nothing was re-parsed (same file as the last good one).
    swap_file(sample, (SAMPLE / FILE).read_bytes())
    _, third, _ = build(store, sample, tmp_path / "cache")
    assert third.reparsed == 0 and editions_on_last_good_file(store) == 0 and version_row(store)["failed_stage"] is None


# The store's DDL before the article key had `occurrence` (commit 17b6720^), for the two tables it keys.
OLD_DDL = """
CREATE TABLE ch_act_article (version_id BIGINT NOT NULL, e_id VARCHAR NOT NULL, article_number VARCHAR,
    heading VARCHAR, text VARCHAR NOT NULL, PRIMARY KEY (version_id, e_id));
CREATE TABLE ch_act_change (act_id BIGINT NOT NULL, e_id VARCHAR NOT NULL, lang VARCHAR NOT NULL,
    change_type VARCHAR NOT NULL, old_version_id BIGINT NOT NULL, new_version_id BIGINT NOT NULL,
    date_applicability DATE NOT NULL, PRIMARY KEY (act_id, e_id, lang, new_version_id));
INSERT INTO ch_act_article VALUES (1, 'art_1', '1', NULL, '1 Alt.'), (1, 'art_2', '2', 'H', '1 Zwei.');
INSERT INTO ch_act_change VALUES (9, 'art_1', 'de', 'modified', 1, 2, DATE '2024-01-01');
"""


def test_a_store_written_before_the_article_key_is_rebuilt_to_it(tmp_path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(OLD_DDL)
    con.close()
    store = Store(path)
    with store.connect():  # the first writable open (a build's first writing step) brings the store up to date
        pass
    assert store.frame("SELECT version_id, e_id, occurrence, text FROM ch_act_article ORDER BY e_id").rows() == [
        (1, "art_1", 1, "1 Alt."),
        (1, "art_2", 1, "1 Zwei."),
    ]
    assert store.frame("SELECT e_id, occurrence, change_type FROM ch_act_change").rows() == [("art_1", 1, "modified")]
    with store.transaction() as con:  # the new key: a repeated e_id is a second occurrence, not a conflict
        con.execute("INSERT INTO ch_act_article (version_id, e_id, occurrence, text) VALUES (1, 'art_1', 2, 'x')")
        with pytest.raises(duckdb.ConstraintException):
            con.execute("INSERT INTO ch_act_article (version_id, e_id, occurrence, text) VALUES (1, 'art_1', 2, 'y')")
    tables = set(store.frame("SELECT table_name FROM information_schema.tables")["table_name"])
    assert not any(t.endswith("_before_occurrence") for t in tables)
    assert {"n_repeated_eids", "content_sha256", "failed_stage"} <= set(
        store.frame("SELECT column_name FROM information_schema.columns WHERE table_name = 'ch_act_version'")[
            "column_name"
        ]
    )


def test_editions_parsed_by_the_previous_parser_are_reparsed_and_their_articles_kept_when_equal(sample, tmp_path):
    store = Store(tmp_path / "chpit.duckdb")
    build(store, sample, tmp_path / "cache")
    before = store.frame("SELECT * FROM ch_act_article ORDER BY version_id, e_id, occurrence")
    with store.transaction() as con:  # what a PARSER_VERSION 2 store looks like after the migration
        con.execute(
            "UPDATE ch_act_version SET parser_version = '2', content_sha256 = NULL, n_repeated_eids = NULL, "
            "generator = NULL"
        )
        con.execute("UPDATE ch_act_article SET heading = 'edited' WHERE e_id = 'art_1'")  # one edition differs
    _, report, _ = build(store, sample, tmp_path / "cache")
    assert report.reparsed == 10 and report.revisions == []  # a new parser is not a re-issued file
    assert store.frame("SELECT * FROM ch_act_article ORDER BY version_id, e_id, occurrence").equals(before)
    assert (
        store.frame(
            "SELECT count(*) FROM ch_act_version WHERE lang = 'de' AND stage = 'parsed' "
            "AND (content_sha256 IS NULL OR generator IS NULL)"
        ).item()
        == 0
    )
