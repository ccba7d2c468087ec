"""Fedlex as a timeline: the loopback server of tests/fedlex/conftest.py serving the real sample, before and
after DSG's German 2025-04-01 edition appeared.

The server and its SPARQL/filestore builders are imported from tests/fedlex/conftest.py (not copied, not
edited); only the fixture is ours, because that conftest's fixtures apply to its own folder.

Why 2025-04-01 and not 2025-07-07: in German, DSG's 2025-07-07 edition changes no article against
2025-04-01, so it would leave act_changes and the items as they were; 2025-04-01 modifies two articles.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from chpit_assets.fedlex.catalog import Catalog, load_sample_catalog
from tests.fedlex.conftest import SAMPLE, FakeFedlex, filestore_path, sample_graph

DSG = "https://fedlex.data.admin.ch/eli/cc/2022/491"
NEW_EDITION = f"{DSG}/20250401"  # arrives between the two states, in German
LATER_EDITION = f"{DSG}/20250707"  # after it; absent in German in both states
NEW_FILE = filestore_path(NEW_EDITION, "de", 1)


def _german_dsg_until(catalog: Catalog, *, with_new_edition: bool) -> Catalog:
    """The sample with DSG's German history cut where it stood before/after NEW_EDITION was published."""
    editions = []
    for e in catalog.editions:
        if e.lang == "de" and e.act_eli == DSG:
            if e.consolidation == LATER_EDITION or (e.consolidation == NEW_EDITION and not with_new_edition):
                continue
            # The latest German edition known at that moment is the current one: no end date yet.
            latest = NEW_EDITION if with_new_edition else f"{DSG}/20230901"
            if e.consolidation == latest:
                e = replace(e, date_end_applicability=None)
        editions.append(e)
    return Catalog(catalog.acts, tuple(editions))


@pytest.fixture(scope="session")
def sample() -> Catalog:
    return load_sample_catalog(SAMPLE)


@pytest.fixture
def before(sample: Catalog) -> Catalog:
    return _german_dsg_until(sample, with_new_edition=False)


@pytest.fixture
def after(sample: Catalog) -> Catalog:
    return _german_dsg_until(sample, with_new_edition=True)


def serve(fake: FakeFedlex, catalog: Catalog) -> None:
    """From now on the fake answers SPARQL with `catalog` and serves its files."""
    graph, files = sample_graph(catalog, fake.base_url)
    fake.graph = graph
    fake.files = {path: src.read_bytes() for path, src in files.items()}


@pytest.fixture
def fake_fedlex() -> Iterator[FakeFedlex]:
    fake = FakeFedlex()
    try:
        yield fake
    finally:
        fake.close()


def file_hits(fake: FakeFedlex) -> dict[str, int]:
    """Requests per filestore path (the SPARQL endpoint's requests left out)."""
    return {path: n for path, n in fake.hits.items() if path.startswith("/filestore/")}
