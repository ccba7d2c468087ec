"""The tools on the real Fedlex sample, ingested by the pipeline's own code (no network: file:// urls)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from chpit_assets.corpus.ingest import ingest_language
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import load_sample_catalog
from chpit_assets.pit.tools import DateBeforeFirstEdition, NoEditionOnDate, PitTools

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
PARA_5BIS = "5bis Der EDÖB kann die Meldung"


@pytest.fixture(scope="module")
def sample_tools(tmp_path_factory) -> PitTools:
    root = tmp_path_factory.mktemp("sample")
    store = Store(root / "chpit.duckdb")
    catalog = load_sample_catalog(SAMPLE)
    for lang in ("de", "fr"):
        ingest_language(store, catalog, lang, root / "cache")
    return PitTools(store, today=date(2025, 9, 1))


def test_dsg_art_24_gains_para_5bis_on_2025_04_01(sample_tools):
    before = sample_tools.ch_get_act_article("235.1", "24", "de", as_of="2024-01-01")
    after = sample_tools.ch_get_act_article("235.1", "24", "de", as_of="2025-05-01")
    assert (before.act.abbreviation, before.edition.date_applicability) == ("DSG", date(2023, 9, 1))
    assert PARA_5BIS not in before.text
    assert after.edition.date_applicability == date(2025, 4, 1) and PARA_5BIS in after.text
    # Today's edition (2025-07-07) differs from 2025-04-01 only in footnotes, which are not text.
    today = sample_tools.ch_get_act_article("235.1", "24", "de")
    assert today.edition.date_applicability == date(2025, 7, 7) and today.text == after.text
    history = sample_tools.ch_get_act_history("235.1", "de", article_number="24")
    assert [e.change for e in history.editions] == [None, "modified", "unchanged"]


def test_oracle_matches_the_tool_on_the_sample(sample_tools):
    tool = sample_tools.ch_get_act_article("235.1", "24", "de", as_of="2024-01-01")
    oracle = sample_tools.resolve_by_act(tool.act.act_id, "de", "2024-01-01", e_id=tool.e_id)
    assert oracle.to_dict() == {**tool.to_dict(), "other_e_ids": []} and tool.e_id == "art_24"


def test_publg_missing_edition_is_a_gap_not_a_neighbour(sample_tools):
    # The 2022-07-01 edition has no XML in the sample: its days are a gap, the old edition ends 2022-06-30.
    assert sample_tools.ch_get_act_article("170.512", "1", "de", as_of="2022-06-30").edition.date_applicability \
        == date(2018, 11, 26)
    with pytest.raises(NoEditionOnDate):
        sample_tools.ch_get_act_article("170.512", "1", "de", as_of="2022-08-01")


def test_french_has_only_the_current_edition(sample_tools):
    r = sample_tools.ch_get_act_article("235.1", "24", "fr")
    assert (r.act.abbreviation, r.lang, r.edition.date_applicability) == ("LPD", "fr", date(2025, 7, 7))
    assert r.text.startswith("1 ")
    with pytest.raises(DateBeforeFirstEdition):
        sample_tools.ch_get_act_article("235.1", "24", "fr", as_of="2024-01-01")
