"""A Catalog and a list of DownloadResult survive pickling exactly (issue 27.2): the handover IO
manager writes both for every language run, in rows of plain values rather than dataclass states,
and still reads what the earlier code wrote."""

from __future__ import annotations

import pickle
import typing
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chpit_assets.fedlex.catalog import ActTitle, Catalog, CatalogAct, CatalogEdition, load_sample_catalog
from chpit_assets.fedlex.download import DownloadResult, Stage, download_editions

from .conftest import SAMPLE

ELI = "https://fedlex.data.admin.ch/eli/cc/2022/491"

texts = st.text(max_size=12)
maybe_texts = st.none() | texts
days = st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31))
maybe_days = st.none() | days
titles = st.dictionaries(st.sampled_from(["de", "fr", "it", "en", "rm"]), st.builds(ActTitle, texts, maybe_texts))
acts = st.builds(CatalogAct, texts, texts, st.integers(-(2**70), 2**70), maybe_days, maybe_days, titles)
editions = st.builds(CatalogEdition, texts, texts, texts, days, maybe_days, maybe_texts, maybe_texts)
catalogs = st.builds(Catalog, st.lists(acts, max_size=4).map(tuple), st.lists(editions, max_size=6).map(tuple))
results = st.builds(
    DownloadResult, editions, maybe_texts, maybe_texts, st.sampled_from(typing.get_args(Stage)), maybe_texts
)
protocols = st.integers(2, pickle.HIGHEST_PROTOCOL)


@given(catalogs, protocols)
def test_every_catalog_field_comes_back_equal_for_every_protocol(catalog: Catalog, protocol: int) -> None:
    assert pickle.loads(pickle.dumps(catalog, protocol)) == catalog


@given(st.lists(results, max_size=6), protocols)
def test_every_download_result_field_comes_back_equal_for_every_protocol(found: list, protocol: int) -> None:
    assert pickle.loads(pickle.dumps(found, protocol)) == found


@pytest.fixture(scope="module")
def sample_results(tmp_path_factory) -> tuple[Catalog, list[DownloadResult]]:
    catalog = load_sample_catalog(SAMPLE)
    return catalog, download_editions(catalog, tmp_path_factory.mktemp("cache"))


def test_the_shipped_sample_round_trips_and_the_catalogs_lookup_is_rebuilt_not_pickled(sample_results) -> None:
    catalog, found = sample_results
    assert {r.stage for r in found} == {"downloaded", "no_file"}  # results with and without a file
    catalog.act(ELI)  # fills the cached eli -> act lookup
    data = pickle.dumps(catalog, 4)
    assert b"_acts_by_eli" not in data
    back = pickle.loads(data)
    assert back == catalog and back.act(ELI) == catalog.act(ELI)
    assert all(isinstance(a.titles["de"], ActTitle) for a in back.acts)
    assert pickle.loads(pickle.dumps(found, 4)) == found


class _DataclassStatePickler(pickle.Pickler):
    """Pickles as the code before issue 27.2 did: Python's default for a dataclass."""

    def reducer_override(self, obj):
        return object.__reduce_ex__(obj, 4) if type(obj) in (Catalog, DownloadResult) else NotImplemented


def test_values_pickled_by_the_earlier_code_still_load(sample_results, tmp_path: Path) -> None:
    for value in sample_results:
        with (tmp_path / "de").open("wb") as out:
            _DataclassStatePickler(out, 4).dump(value)
        assert pickle.loads((tmp_path / "de").read_bytes()) == value
