"""The synthetic corpus (issue 7): parses and ingests with the real code, builds with the real builder,
is deterministic, is labelled synthetic, and every amendment shape its manifest claims shows in
ch_act_change (or, for the catalog-only shapes, in the catalog and the store)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

from chpit_assets.akn.parser import parse_edition
from chpit_assets.bench.build_report import build_report
from chpit_assets.bench.changes import build_changes
from chpit_assets.bench.eligibility import evaluate, write_eligible
from chpit_assets.bench.items import BuildSettings, build_items, write_core, write_items
from chpit_assets.corpus.ingest import ingest_language
from chpit_assets.corpus.schema import act_id_for, version_id_for
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import load_sample_catalog
from chpit_assets.synthetic import is_synthetic_eli, is_synthetic_sr
from chpit_assets.synthetic.amendments import CATALOG_SHAPES, EXPECTED_CHANGE
from chpit_assets.synthetic.generator import (
    MARKER,
    Params,
    SyntheticError,
    append_edition,
    generate,
)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
LANGS = ("de", "fr", "it")
# Small but with every shape: 8 acts cover the index-assigned catalog shapes, 6 editions give each act
# enough amendments to go round the shape rotation.
PARAMS = Params(acts=8, editions_per_act=6, langs=LANGS, seed=11, articles=(6, 14))


def _manifest(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "synthetic"
    generate(PARAMS, out, SAMPLE, workers=1)
    return out


@pytest.fixture(scope="module")
def built(corpus, tmp_path_factory):
    """The corpus through the real ingest, change table and builder, every language."""
    work = tmp_path_factory.mktemp("build")
    store = Store(work / "chpit.duckdb")
    catalog = load_sample_catalog(corpus)
    reports, eligibility = {}, {}
    for lang in LANGS:
        reports[lang] = ingest_language(store, catalog, lang, work / "cache")
        build_changes(store, lang)
        eligibility[lang] = evaluate(store, lang)
        write_eligible(store, eligibility[lang])
        write_items(store, work / "build", build_items(store, lang, BuildSettings(), []))
        write_core(store, work / "build", lang)
    return store, reports, eligibility, build_report(store, None), work / "build"


def test_every_file_parses_with_the_real_parser_and_says_it_is_synthetic(corpus):
    catalog = json.loads((corpus / "catalog.json").read_text(encoding="utf-8"))
    assert catalog["synthetic"] is True
    files = 0
    for act in catalog["acts"]:
        assert act["synthetic"] is True and is_synthetic_eli(act["eli"]) and is_synthetic_sr(act["sr_number"])
        for edition in act["editions"]:
            if edition["file"] is None:
                continue
            parsed = parse_edition((corpus / edition["file"]).read_bytes(), edition["file"])
            ident = parsed.identity
            assert (ident.consolidation, ident.lang, ident.sr_number) == (
                edition["consolidation"],
                edition["lang"],
                act["sr_number"],
            )
            assert ident.date_applicability.isoformat() == edition["date_applicability"]
            assert parsed.articles and all(a.text for a in parsed.articles)
            files += 1
    # Only the skipped editions (catalog shape) lack a file.
    skipped = sum(1 for m in _manifest(corpus) if m["shape"] == "skipped_edition")
    assert files == PARAMS.acts * PARAMS.editions_per_act * len(LANGS) - skipped * len(LANGS)


def test_load_sample_catalog_reads_it_and_every_url_is_synthetic(corpus):
    catalog = load_sample_catalog(corpus)
    assert len(catalog.acts) == PARAMS.acts
    assert all(is_synthetic_eli(e.consolidation) and is_synthetic_eli(e.act_eli) for e in catalog.editions)
    assert {e.lang for e in catalog.editions} == set(LANGS)


def test_ingest_parses_every_file_and_records_skipped_editions_as_no_file(corpus, built):
    store, reports, *_ = built
    skipped = {m["edition"] for m in _manifest(corpus) if m["shape"] == "skipped_edition"}
    for lang, report in reports.items():
        assert report.failures_by_stage() == {"no_file": len(skipped)}, report.failures_markdown()
        stages = store.frame("SELECT eli, stage FROM ch_act_version WHERE lang = ?", [lang])
        assert {e for e, s in stages.iter_rows() if s != "parsed"} == skipped


def test_every_claimed_shape_shows_in_the_change_table_and_nothing_else_changed(corpus, built):
    store = built[0]
    manifest = _manifest(corpus)
    # The small corpus must claim every shape, or this test would prove less than it says.
    assert {m["shape"] for m in manifest} == set(EXPECTED_CHANGE) | set(CATALOG_SHAPES)
    rows = {
        (r["act_id"], r["e_id"], r["lang"], r["new_version_id"]): r["change_type"]
        for r in store.frame("SELECT * FROM ch_act_change").iter_rows(named=True)
    }
    claimed = set()
    for m in manifest:
        if m["expect"] == "catalog":
            continue
        key = (act_id_for(m["act"]), m["e_id"], m["lang"], version_id_for(m["observed_in"], m["lang"]))
        claimed.add(key)
        assert rows.get(key, "none") == m["expect"], m
    # Conversely, no row the manifest does not explain: serialising an unchanged article changes nothing.
    assert set(rows) - claimed == set()


def test_catalog_shapes_are_in_the_catalog(corpus):
    catalog = load_sample_catalog(corpus)
    by_cons = {(e.consolidation, e.lang): e for e in catalog.editions}
    following = {}
    for act in catalog.acts:
        editions = sorted(
            (e for e in catalog.editions if e.act_eli == act.eli and e.lang == "de"), key=lambda e: e.date_applicability
        )
        following.update({a.consolidation: b for a, b in zip(editions, editions[1:])})
    for m in _manifest(corpus):
        if m["expect"] != "catalog":
            continue
        edition = by_cons[(m["edition"], "de")]
        if m["shape"] == "skipped_edition":
            assert all(by_cons[(m["edition"], lang)].file_url is None for lang in LANGS)
        elif m["shape"] == "overlapping_end_date":
            assert edition.date_end_applicability >= following[m["edition"]].date_applicability
        else:
            assert m["shape"] == "future_dated"
            assert edition.date_applicability > PARAMS.today and edition.date_end_applicability is None


def test_the_real_builder_builds_it(corpus, built):
    store, _, _, report, build_dir = built
    overlapping = {
        version_id_for(m["edition"], lang)
        for m in _manifest(corpus)
        if m["shape"] == "overlapping_end_date"
        for lang in LANGS
    }
    for lang in LANGS:
        section = report[lang]
        assert section["items"] > 0 and section["core"]["items"] > 0
        items = [json.loads(line) for line in (build_dir / f"bench-{lang}.jsonl").read_text("utf-8").splitlines()]
        assert len(items) == section["items"]
        assert all(is_synthetic_sr(i["sr_number"]) and is_synthetic_eli(i["gold"]["eli"]) for i in items)
        # B11 (decided in the item loop, PROTOCOL §1.7): no item spans an overlapping pair.
        old_editions = {(i["gold"] if i["kind"] == "before" else i["distractor"])["version_id"] for i in items}
        assert not old_editions & overlapping
        # B9: the nested transitional provisions (disp_u1/art_N) never become items.
        assert all("/" not in i["e_id"] for i in items)


def test_same_parameters_give_byte_identical_output_whatever_the_workers(corpus, tmp_path):
    again = tmp_path / "synthetic"
    generate(PARAMS, again, SAMPLE, workers=2)

    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    first, second = files(corpus), files(again)
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []


def test_another_seed_gives_another_corpus(corpus, tmp_path):
    other = tmp_path / "synthetic"
    generate(replace(PARAMS, seed=PARAMS.seed + 1), other, SAMPLE)
    assert (other / "catalog.json").read_bytes() != (corpus / "catalog.json").read_bytes()


def test_refuses_folders_that_are_not_synthetic(tmp_path):
    with pytest.raises(SyntheticError, match="named"):
        generate(PARAMS, tmp_path / "data", SAMPLE)
    foreign = tmp_path / "synthetic"
    foreign.mkdir()
    (foreign / "catalog.json").write_text("{}")
    with pytest.raises(SyntheticError, match=MARKER):
        generate(PARAMS, foreign, SAMPLE)
    assert (foreign / "catalog.json").read_text() == "{}"


@pytest.mark.parametrize(
    "bad",
    [dict(acts=0), dict(langs=("de", "xx")), dict(articles=(5, 2)), dict(editions_per_act=10_000)],
)
def test_bad_parameters_are_refused(bad, tmp_path):
    with pytest.raises(SyntheticError):
        generate(replace(PARAMS, **bad), tmp_path / "synthetic", SAMPLE)


def test_is_synthetic_eli():
    assert is_synthetic_eli("https://synthetic.chpit.invalid/eli/cc/2001/2")
    assert is_synthetic_eli("https://synthetic.chpit.invalid/eli/cc/2001/2/20200101")
    assert not is_synthetic_eli("https://fedlex.data.admin.ch/eli/cc/2022/491")
    # A look-alike path on a real host is not synthetic; neither is nothing.
    assert not is_synthetic_eli("https://fedlex.data.admin.ch/synthetic.chpit.invalid/eli/cc/1")
    assert not is_synthetic_eli(None) and not is_synthetic_eli("")
    assert is_synthetic_sr("9999.12") and not is_synthetic_sr("235.1") and not is_synthetic_sr(None)


def test_append_edition_adds_exactly_one_modified_article(corpus, tmp_path):
    out = tmp_path / "synthetic"
    shutil.copytree(corpus, out)
    act_eli = load_sample_catalog(out).acts[0].eli
    line = append_edition(out, act_eli, PARAMS.today, "word_changed")
    catalog = load_sample_catalog(out)
    new = version_id_for(line["edition"], "fr")
    editions = sorted(
        (e for e in catalog.editions if e.act_eli == act_eli and e.lang == "fr"), key=lambda e: e.date_applicability
    )
    assert editions[-1].consolidation == line["edition"] and editions[-1].date_end_applicability is None
    assert editions[-2].date_end_applicability == PARAMS.today - timedelta(days=1)
    store = Store(tmp_path / "chpit.duckdb")
    assert ingest_language(store, catalog, "fr", tmp_path / "cache").failures_by_stage().get("validate") is None
    changes = build_changes(store, "fr").filter(pl.col("new_version_id") == new)
    assert changes.select("e_id", "change_type").rows() == [(line["e_id"], "modified")]
    with pytest.raises(SyntheticError, match="on or after"):
        append_edition(out, act_eli, PARAMS.today, "word_changed")
