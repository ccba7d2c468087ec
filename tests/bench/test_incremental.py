"""The incremental builder: a rebuild after one new edition recomputes one act's changes and one
text pair, and its outputs are byte-identical to a build from scratch of the same corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from chpit_assets.bench.build_report import build_report, write_report
from chpit_assets.bench.changes import update_changes
from chpit_assets.bench.eligibility import update_eligible
from chpit_assets.bench.items import BuildSettings, update_items, write_core
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
        update_items(store, data / "build", lang, SETTINGS, data.parent / "frozen")  # one record for both builds
        write_core(store, data / "build", lang)
        runs[lang] = (changes, eligibility)
    write_report(data / "build" / "build-report.json", build_report(store, "2026-09-04"))
    return runs


def _outputs(data: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((data / "build").iterdir())}


def _tables(data: Path) -> dict[str, list[tuple]]:
    store = Store(data / "chpit.duckdb")
    return {t: store.frame(f"SELECT * FROM {t} ORDER BY ALL").rows() for t in TABLES}


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    """(incremental data dir, from-scratch data dir, the incremental run's per-language results)."""
    tmp = tmp_path_factory.mktemp("incremental")
    corpus = tmp / "synthetic"
    generate(Params(acts=6, editions_per_act=4, langs=LANGS, seed=3, articles=(8, 14)), corpus, SAMPLE)
    first = _build(corpus, tmp / "incremental")
    for changes, eligibility in first.values():  # a first build computes everything
        assert changes.acts_recomputed == changes.acts == 6
        assert eligibility.text_checks_computed == eligibility.text_checks.height > 0
    act = load_sample_catalog(corpus).acts[1]
    last = max(e.date_applicability for e in load_sample_catalog(corpus).editions if e.act_eli == act.eli)
    append_edition(corpus, act.eli, next_month(last), "word_changed")
    runs = _build(corpus, tmp / "incremental")
    _build(corpus, tmp / "scratch")
    return tmp / "incremental", tmp / "scratch", runs


def test_incremental_rebuild_is_byte_identical_to_a_build_from_scratch(rebuilt):
    incremental, scratch, _ = rebuilt
    outputs = _outputs(incremental)
    assert sorted(outputs) == ["bench-de.jsonl", "bench-fr.jsonl", "build-report.json", "core-de.jsonl",
                               "core-fr.jsonl"]
    assert all(outputs.values())
    assert outputs == _outputs(scratch)
    tables = _tables(incremental)
    assert all(tables[t] for t in TABLES)  # no vacuous comparison
    assert tables == _tables(scratch)


def test_incremental_rebuild_recomputes_only_the_new_editions_act_and_text_pair(rebuilt):
    _, _, runs = rebuilt
    for lang, (changes, eligibility) in runs.items():
        assert (changes.acts, changes.acts_recomputed) == (6, 1), lang
        # The appended edition modifies one article: that text pair is new, every other one is reused.
        assert eligibility.text_checks_computed == 1 < eligibility.text_checks.height, lang
