"""The incremental builder: a rebuild after one new edition recomputes one act's changes and one
text pair, renders only the item lines that changed, and its outputs are byte-identical to a
build from scratch of the same corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chpit_assets.bench.build_report import build_report, write_report
from chpit_assets.bench.changes import update_changes
from chpit_assets.bench.eligibility import evaluate, update_eligible
from chpit_assets.bench.items import (
    BuildSettings,
    ItemsError,
    bench_path,
    load_items,
    stamp_core,
    update_items,
    write_core,
)
from chpit_assets.bench.tables import BENCH_DDL
from chpit_assets.corpus.ingest import ingest_language
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import load_sample_catalog
from chpit_assets.synthetic.generator import (
    Params,
    append_edition,
    generate,
    next_month,
)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
LANGS = ("de", "fr")
# Small caps so that sampling and the core split are exercised: a reshuffled pool must still give
# the same items as a fresh build.
SETTINGS = BuildSettings(build="v-inc", item_cap=40, per_act_cap=6, core_size=15)
TABLES = ["ch_act_change", *(line.split()[5] for line in BENCH_DDL.splitlines() if line.startswith("CREATE TABLE"))]


def _build(corpus: Path, data: Path) -> dict:
    """Ingest every language, then the builder's steps as the assets run them (one transaction each)."""
    store = Store(data / "chpit.duckdb")
    catalog = load_sample_catalog(corpus)
    runs = {}
    for lang in LANGS:
        ingest_language(store, catalog, lang, data / "cache")
        changes = update_changes(store, lang)
        eligibility = update_eligible(store, lang)
        items, _ = update_items(store, data / "build", lang, SETTINGS, data.parent / "frozen")  # one record for both
        write_core(store, data / "build", lang)
        runs[lang] = (changes, eligibility, items)
    write_report(data / "build" / "build-report.json", build_report(store, "2026-09-04"))
    return runs


def _outputs(data: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((data / "build").iterdir())}


def _tables(data: Path) -> dict[str, list[tuple]]:
    store = Store(data / "chpit.duckdb")
    # A rebuild leaves the lines it replaced in bench_line until they are collected: compare the used ones.
    used = {
        "bench_line": "SELECT * FROM bench_line WHERE fingerprint IN (SELECT fingerprint FROM bench_item) ORDER BY ALL"
    }
    return {t: store.frame(used.get(t, f"SELECT * FROM {t} ORDER BY ALL")).rows() for t in TABLES}


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    """(incremental data dir, from-scratch data dir, the incremental run's per-language results)."""
    tmp = tmp_path_factory.mktemp("incremental")
    corpus = tmp / "synthetic"
    generate(Params(acts=6, editions_per_act=4, langs=LANGS, seed=3, articles=(8, 14)), corpus, SAMPLE)
    first = _build(corpus, tmp / "incremental")
    for changes, eligibility, items in first.values():  # a first build computes everything
        assert changes.acts_recomputed == changes.acts == 6
        assert eligibility.acts_recomputed == eligibility.act_outcomes.height == 6
        assert set(items.fresh) == set(items.ids)
    before = {lang: _lines_by_id(tmp / "incremental", lang) for lang in LANGS}
    act = load_sample_catalog(corpus).acts[1]
    last = max(e.date_applicability for e in load_sample_catalog(corpus).editions if e.act_eli == act.eli)
    append_edition(corpus, act.eli, next_month(last), "word_changed")
    runs = _build(corpus, tmp / "incremental")
    _build(corpus, tmp / "scratch")
    return tmp / "incremental", tmp / "scratch", runs, before


def test_incremental_rebuild_is_byte_identical_to_a_build_from_scratch(rebuilt):
    incremental, scratch, _, _ = rebuilt
    outputs = _outputs(incremental)
    assert sorted(outputs) == [
        "bench-de.jsonl",
        "bench-fr.jsonl",
        "build-report.json",
        "core-de.jsonl",
        "core-fr.jsonl",
    ]
    assert all(outputs.values())
    assert outputs == _outputs(scratch)
    tables = _tables(incremental)
    assert all(tables[t] for t in TABLES)  # no vacuous comparison
    assert tables == _tables(scratch)


def test_incremental_rebuild_recomputes_only_the_new_editions_act(rebuilt):
    _, _, runs, _ = rebuilt
    for lang, (changes, eligibility, _) in runs.items():
        assert (changes.acts, changes.acts_recomputed) == (6, 1), lang
        assert (eligibility.act_outcomes.height, eligibility.acts_recomputed) == (6, 1), lang


def _lines_by_id(data: Path, lang: str) -> dict[str, str]:
    lines = bench_path(data / "build", lang).read_text(encoding="utf-8").splitlines()
    return {json.loads(line)["id"]: line for line in lines}


def test_incremental_rebuild_renders_exactly_the_lines_that_changed(rebuilt):
    incremental, _, runs, before = rebuilt
    for lang, (_, _, items) in runs.items():
        after = _lines_by_id(incremental, lang)
        changed = {i for i, line in after.items() if before[lang].get(i) != line}
        # New items and items whose edition was closed by the new one are rendered; a line whose core
        # flag alone the B16 redraw moved is the stored line, stamped.
        rendered = {i for i in changed if i not in before[lang] or _unflagged(before[lang][i]) != _unflagged(after[i])}
        assert changed, lang
        assert set(items.fresh) == rendered, lang
        assert len(items.fresh) < len(items.ids), lang


def _unflagged(line: str) -> bytes:
    return stamp_core(line.encode("utf-8"), False)


@pytest.fixture
def built_once(tmp_path):
    """A small corpus built once in German: (store, data dir)."""
    corpus = tmp_path / "synthetic"
    generate(Params(acts=3, editions_per_act=3, langs=("de",), seed=5, articles=(8, 12)), corpus, SAMPLE)
    store = Store(tmp_path / "data" / "chpit.duckdb")
    ingest_language(store, load_sample_catalog(corpus), "de", tmp_path / "data" / "cache")
    update_changes(store, "de")
    update_eligible(store, "de")
    first, _ = update_items(store, tmp_path / "data" / "build", "de", SETTINGS, tmp_path / "frozen")
    assert first.ids
    return store, tmp_path / "data"


def _rebuild(store: Store, data: Path):
    return update_items(store, data / "build", "de", SETTINGS, data.parent / "frozen")[0]


def test_an_unchanged_store_renders_nothing_and_writes_the_same_file(built_once):
    store, data = built_once
    path = bench_path(data / "build", "de")
    first = path.read_bytes()
    again = _rebuild(store, data)
    assert again.fresh == {}
    assert path.read_bytes() == first


def test_new_content_for_an_edition_re_renders_its_items_only(built_once):
    """The fingerprint vouches for the texts through the editions' content digest: new stored
    content for an edition (here with the same articles) re-renders every item that shows that
    edition, and no other."""
    store, data = built_once
    rows = store.frame("SELECT id, gold_version_id, distractor_version_id FROM bench_item WHERE lang = 'de'")
    version = rows["gold_version_id"][0]
    with store.transaction() as con:
        con.execute("UPDATE ch_act_version SET content_sha256 = repeat('e', 64) WHERE version_id = ?", [version])
    again = _rebuild(store, data)
    showing = {
        r["id"] for r in rows.iter_rows(named=True) if version in (r["gold_version_id"], r["distractor_version_id"])
    }
    assert set(again.fresh) == showing


def test_a_re_issued_file_with_the_same_content_re_renders_nothing(built_once):
    """Issue 13: a re-issued file (new bytes, new sha256 and generator) whose stored articles are the
    same leaves the content digest alone, so nothing downstream is evaluated or rendered again."""
    store, data = built_once
    path = bench_path(data / "build", "de")
    first = path.read_bytes()
    with store.transaction() as con:
        con.execute("UPDATE ch_act_version SET sha256 = repeat('f', 64), parser_version = 'next'")
    assert evaluate(store, "de").acts_recomputed == 0
    again = _rebuild(store, data)
    assert again.fresh == {} and path.read_bytes() == first


def test_a_store_without_file_digests_renders_every_line_known_by_its_digest(built_once):
    store, data = built_once
    with store.transaction() as con:
        con.execute("UPDATE ch_act_version SET content_sha256 = NULL")
    first = _rebuild(store, data)
    assert set(first.fresh) == set(first.ids)
    before = store.frame("SELECT id, fingerprint FROM bench_item ORDER BY id").rows()
    second = _rebuild(store, data)
    assert set(second.fresh) == set(second.ids)
    # Nothing vouches for the texts, so each line is known by its own digest (the write compares those).
    assert all(fp.startswith("line:") for _, fp in before)
    assert store.frame("SELECT id, fingerprint FROM bench_item ORDER BY id").rows() == before


def test_an_eligible_change_whose_article_is_gone_names_the_item_and_edition(built_once):
    store, data = built_once
    row = store.frame("SELECT id, e_id, gold_version_id FROM bench_item LIMIT 1").row(0, named=True)
    with store.transaction() as con:
        con.execute("DELETE FROM bench_item")  # nothing to reuse: the line must be rendered
        con.execute(
            "DELETE FROM ch_act_article WHERE version_id = ? AND e_id = ?", [row["gold_version_id"], row["e_id"]]
        )
        eli = con.execute("SELECT eli FROM ch_act_version WHERE version_id = ?", [row["gold_version_id"]]).fetchone()[0]
    with pytest.raises(ItemsError, match=f"{eli} has no article {row['e_id']}"):
        _rebuild(store, data)


def test_replaced_lines_are_collected_once_they_outnumber_the_lines_in_use(built_once):
    store, data = built_once

    def counts() -> tuple[int, int]:
        lines = store.frame("SELECT count(*) AS n FROM bench_line")["n"][0]
        return lines, store.frame("SELECT count(*) AS n FROM bench_item")["n"][0]

    lines, items = counts()
    assert lines == items
    # A new build name changes every fingerprint: each rebuild replaces every line.
    first = update_items(
        store, data / "build", "de", BuildSettings(**{**SETTINGS.__dict__, "build": "v-a"}), data.parent / "frozen"
    )[0]
    assert counts() == (2 * items, items)  # as many unused as used: kept
    update_items(
        store, data / "build", "de", BuildSettings(**{**SETTINGS.__dict__, "build": "v-b"}), data.parent / "frozen"
    )
    assert counts() == (items, items)  # more unused than used: collected, and only those
    assert all(i["build"] == "v-b" for i in load_items(store, "de"))
    assert first.ids == [i["id"] for i in load_items(store, "de")]


def test_a_line_missing_from_the_store_is_rendered_and_stored_again(built_once):
    store, data = built_once
    path = bench_path(data / "build", "de")
    first = path.read_bytes()
    with store.transaction() as con:
        con.execute("DELETE FROM bench_line WHERE fingerprint = (SELECT min(fingerprint) FROM bench_item)")
    again = _rebuild(store, data)
    assert len(again.fresh) == 1
    assert path.read_bytes() == first
    assert [
        json.dumps(i, ensure_ascii=False, separators=(", ", ": ")).encode() for i in load_items(store, "de")
    ] == first.splitlines()


OLDER_LAYOUTS = {  # how earlier versions kept item lines
    "line in bench_item": ["DROP TABLE bench_line", "ALTER TABLE bench_item ADD COLUMN line VARCHAR"],
    "text lines": ["DROP TABLE bench_line", "CREATE TABLE bench_line (fingerprint VARCHAR, line VARCHAR)"],
    "keyed lines": ["DROP TABLE bench_line", "CREATE TABLE bench_line (fingerprint VARCHAR PRIMARY KEY, line BLOB)"],
}


@pytest.mark.parametrize("layout", OLDER_LAYOUTS)
def test_items_from_an_older_store_layout_are_rebuilt(built_once, layout):
    store, data = built_once
    first = bench_path(data / "build", "de").read_bytes()
    with store.transaction() as con:
        for statement in OLDER_LAYOUTS[layout]:
            con.execute(statement)
        con.execute("DELETE FROM chpit_schema WHERE name = 'bench'")  # older versions kept no record
    update_changes(store, "de")  # the first writing step brings the builder's tables up to date
    again = _rebuild(store, data)
    assert set(again.fresh) == set(again.ids)
    assert bench_path(data / "build", "de").read_bytes() == first
