"""A Catalog survives pickling exactly (issue 27.2): the handover IO manager writes each language's
catalog for the runs that load it from disk, in rows of plain values rather than dataclass states."""

from __future__ import annotations

import pickle
from datetime import date

from hypothesis import given
from hypothesis import strategies as st

from chpit_assets.fedlex.catalog import ActTitle, Catalog, CatalogAct, CatalogEdition, load_sample_catalog

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


@given(catalogs, st.integers(2, pickle.HIGHEST_PROTOCOL))
def test_every_field_comes_back_equal_for_every_protocol(catalog: Catalog, protocol: int) -> None:
    assert pickle.loads(pickle.dumps(catalog, protocol)) == catalog


def test_the_shipped_sample_round_trips_and_its_lookup_is_rebuilt_not_pickled() -> None:
    catalog = load_sample_catalog(SAMPLE)
    catalog.act(ELI)  # fills the cached eli -> act lookup
    data = pickle.dumps(catalog, 4)
    assert b"_acts_by_eli" not in data
    back = pickle.loads(data)
    assert back == catalog and back.act(ELI) == catalog.act(ELI)
    assert all(isinstance(a.titles["de"], ActTitle) for a in back.acts)


class _DataclassStatePickler(pickle.Pickler):
    """Pickles a Catalog as the code before issue 27.2 did: Python's default for a dataclass."""

    def reducer_override(self, obj):
        return object.__reduce_ex__(obj, 4) if type(obj) is Catalog else NotImplemented


def test_a_catalog_pickled_by_the_earlier_code_still_loads(tmp_path) -> None:
    catalog = load_sample_catalog(SAMPLE)
    with (tmp_path / "de").open("wb") as out:
        _DataclassStatePickler(out, 4).dump(catalog)
    assert pickle.loads((tmp_path / "de").read_bytes()) == catalog
