"""The builder on real Fedlex editions (the shipped sample) and on constructed AKN files, both
going through the real ingestion (parse -> store), so the parser's text layout and e_ids are
what B4, B9 and B12 see."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from chpit_assets.bench.eligibility import TextMemo
from chpit_assets.corpus.ingest import ingest_language
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import (
    ActTitle,
    Catalog,
    CatalogAct,
    CatalogEdition,
    load_sample_catalog,
)
from chpit_scorer import normalise

from ..akn_factory import article, edition_xml
from .conftest import FILLER, run_builder

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"


@pytest.fixture(scope="module")
def sample_build(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sample")
    store = Store(tmp / "chpit.duckdb")
    ingest_language(store, load_sample_catalog(SAMPLE), "de", tmp / "cache")
    eligibility, built = run_builder(store, "de", tmp / "build")
    return store, eligibility, built


def _items(built, sr):
    return {(i["e_id"], i["kind"]): i for i in built.items if i["sr_number"] == sr}


def test_dsg_art_24_pure_addition_gives_only_the_after_item(sample_build):
    _, _, built = sample_build
    art24 = {k: v for k, v in _items(built, "235.1").items() if k[0] == "art_24"}
    assert list(art24) == [("art_24", "after")]
    item = art24[("art_24", "after")]
    assert (item["as_of"], item["change_date"], item["abbreviation"]) == ("2025-04-01", "2025-04-01", "DSG")
    assert item["question"] == (
        "Wie lautet Art. 24 DSG (SR 235.1) in der am 1. April 2025 geltenden Fassung? Zitiere den Wortlaut."
    )
    assert "5bis" in item["gold"]["text"] and "5bis" not in item["distractor"]["text"]
    # The before half: every unit of the old text is contained in the new one (B12).
    assert not TextMemo().discriminates(item["distractor"]["text"], item["gold"]["text"])


def test_dsg_footnote_only_edition_yields_no_modified_article(sample_build):
    store, _, _ = sample_build
    rows = store.frame(
        """SELECT count(*) AS n FROM ch_act_change c JOIN ch_act_version v ON v.version_id = c.new_version_id
           WHERE c.change_type = 'modified' AND v.date_applicability = DATE '2025-07-07'"""
    )
    assert rows["n"][0] == 0


def test_publg_skipped_edition_dates_before_items_by_the_old_edition(sample_build):
    store, eligibility, built = sample_build
    publg = _items(built, "170.512")
    before = [i for (e, k), i in publg.items() if k == "before"]
    assert before and {i["as_of"] for i in before} == {"2022-06-30"}
    assert {i["change_date"] for i in before} == {"2023-09-01"}  # not change_date - 1: the gap is real
    # Art. 1a changes but is under 200 normalised characters (B4).
    assert not any(e == "art_1_a" for e, _ in publg)
    text = store.frame(
        """SELECT a.text FROM ch_act_article a JOIN ch_act_version v USING (version_id)
           JOIN ch_act c USING (act_id) WHERE c.sr_number = '170.512' AND a.e_id = 'art_1_a'"""
    )["text"]
    assert text.len() == 2 and min(len(normalise(t)) for t in text) < 200
    assert eligibility.skips["identical_or_short"] >= 1


def test_sample_counts_add_up(sample_build):
    _, eligibility, built = sample_build
    s = built.stats
    assert eligibility.changes_considered == sum(eligibility.skips.values()) + s["eligible_changes"]
    # No cap is reached on the sample: every selected change is consumed (PROTOCOL §1.7).
    assert s["eligible_changes"] == s["selected"] == s["consumed"] and s["capped"] == 0
    halves = 2 * s["selected"] - s["skips"].get("overlapping_editions", 0) - s["skips"].get("no_discriminating_unit", 0)
    assert s["items"] == halves == len(built.items)


def _write_edition(tmp: Path, act_eli: str, day: date, body: str) -> CatalogEdition:
    path = tmp / f"{day:%Y%m%d}-de.xml"
    path.write_bytes(edition_xml(act_eli=act_eli, date_applicability=day, body=body))
    return CatalogEdition(
        act_eli=act_eli,
        consolidation=f"{act_eli}/{day:%Y%m%d}",
        lang="de",
        date_applicability=day,
        date_end_applicability=None,
        file_url=path.as_uri(),
    )


def test_constructed_akn_nested_article_number_is_ambiguous(tmp_path):
    # B9 through the real parser: a top-level art_7 and a transitional disp_u1/art_7.
    eli = "https://fedlex.data.admin.ch/eli/cc/2099/1"

    def body(figure: str) -> str:
        wording = f"1|{FILLER}", f"2|Die Gebühr beträgt {figure} Franken für jede angefangene Stunde Arbeit."
        return (
            article("art_7", "7", *wording)
            + article("art_8", "8", *wording)
            + f'<hcontainer eId="disp_u1">{article("disp_u1/art_7", "7", *wording)}</hcontainer>'
        )

    old = _write_edition(tmp_path, eli, date(2023, 1, 1), body("100"))
    new = _write_edition(tmp_path, eli, date(2024, 1, 1), body("200"))
    old = replace(old, date_end_applicability=date(2023, 12, 31))
    act = CatalogAct(
        eli=eli,
        sr_number="999.1",
        in_force_status=0,
        date_entry_in_force=None,
        date_no_longer_in_force=None,
        titles={"de": ActTitle("Bundesgesetz über Tests (TG)", "TG")},
    )
    store = Store(tmp_path / "chpit.duckdb")
    report = ingest_language(store, Catalog((act,), (old, new)), "de", tmp_path / "cache")
    assert report.parsed == 2
    eligibility, built = run_builder(store, "de", tmp_path / "build")
    assert eligibility.changes_considered == 3 and eligibility.skips["ambiguous_article"] == 2
    assert {(i["e_id"], i["article_number"]) for i in built.items} == {("art_8", "8")}
    assert {i["kind"] for i in built.items} == {"before", "after"}


def test_french_pair_across_a_missing_edition_gives_the_after_item_of_art_24(tmp_path):
    # The shipped fr SR 235.1 pair 2023-09-01 / 2025-07-07 (the 2025-04-01 file is not shipped, so the
    # change spans it, as act_changes pairs parsed editions). Art. 24 gains para. 5bis: a pure
    # addition, so only `after` has a unit of its own (B12) and the loop counts the other half.
    store = Store(tmp_path / "chpit.duckdb")
    ingest_language(store, load_sample_catalog(SAMPLE), "fr", tmp_path / "cache")
    eligibility, built = run_builder(store, "fr", tmp_path / "build")
    assert eligibility.changes_considered == eligibility.eligible.height == 1
    assert built.stats["skips"] == {"no_discriminating_unit": 1}
    [item] = built.items
    assert (item["sr_number"], item["e_id"], item["kind"], item["as_of"], item["abbreviation"]) == (
        "235.1",
        "art_24",
        "after",
        "2025-07-07",
        "LPD",
    )
    assert item["question"] == (
        "Quel est le texte de l'art. 24 LPD (RS 235.1) en vigueur le 7 juillet 2025 ? Citez-le mot à mot."
    )
    assert item["gold_is_current"] is True and item["gold"]["date_applicability"] == "2025-07-07"
    assert item["distractor"]["date_end_applicability"] == "2025-03-31"
    assert "5bis" in item["gold"]["text"] and "5bis" not in item["distractor"]["text"]
