"""Resources: where the data lives, and where Fedlex comes from.

Paths resolve late (when a step or sensor uses them, not when the code location loads) and
relative to the project, not to the process's working directory: the daemon, the webserver,
run workers and the CLI then agree wherever they were started (issue 18.3), and a test that
sets CHPIT_DATA_DIR after `chpit_assets.definitions` was imported is still obeyed (issue 14.2).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Literal

import dagster as dg
from pydantic import PrivateAttr

from chpit_assets.corpus.store import Store, release_held
from chpit_assets.fedlex.catalog import Catalog, CatalogError, load_sample_catalog
from chpit_assets.fedlex.sparql import ENDPOINT
from chpit_assets.layout import DATA_DIR_ENV as DATA_DIR_ENV
from chpit_assets.layout import FROZEN_DIR_ENV as FROZEN_DIR_ENV
from chpit_assets.layout import PROJECT_ROOT as PROJECT_ROOT
from chpit_assets.layout import Layout, project_path

from .handover import HandoverIOManagerFactory

SAMPLE_DIR_ENV = "CHPIT_SAMPLE_DIR"


class ChpitStore(dg.ConfigurableResource):
    """The data folder: the DuckDB store and the stable output paths of ARCHITECTURE.md ("Outputs").

    Its paths are its `layout`'s (chpit_assets/layout.py), resolved from this config each time they
    are used. Empty `data_dir` = $CHPIT_DATA_DIR, else the project's `data/`."""

    data_dir: str = ""
    # B18's record of published items. Empty = $CHPIT_FROZEN_DIR, else the project's committed
    # frozen/; relative = the project's.
    frozen_dir: str = ""
    # A bounded run's own folder under data/runs/ (issue 23.6): its results and report live there,
    # never beside the full core's. Empty = the full run's data/results/ and data/report/.
    run_dir: str = ""
    # Whether this execution keeps the store open between steps (set up per run or per step process).
    _hold: bool = PrivateAttr(default=False)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        # Only where the instance gives a run the writer pool for the whole run (pool granularity
        # `run`, dagster.yaml). With per-step slots, a run holding the file between its steps while
        # another run's step holds the slot and waits for the file would stall both until the
        # lock wait runs out.
        from chpit_assets.instance import pool_granularity

        self._hold = context.instance is not None and pool_granularity(context.instance) == "run"

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        release_held(self.store_path)

    @property
    def layout(self) -> Layout:
        return Layout.resolve(self.data_dir, self.frozen_dir, self.run_dir)

    @property
    def root(self) -> Path:
        return self.layout.root

    @property
    def frozen_path(self) -> Path:
        return self.layout.frozen_path

    @property
    def store_path(self) -> Path:
        return self.layout.store_path

    @property
    def store(self) -> Store:
        """The store as the build's steps use it. Where the run owns the writer pool (see
        setup_for_execution), it is kept open in this process from the first step that opens it
        until the run ends (in-process executor; a step, with one process per step), so
        consecutive steps share one warm database and one checkpoint (corpus/store.py)."""
        return Store(self.store_path, hold=self._hold)

    def released_store(self) -> Store:
        return self.layout.released_store()

    @property
    def cache_dir(self) -> Path:
        return self.layout.cache_dir

    def built_catalog_path(self, source_id: str) -> Path:
        return self.layout.built_catalog_path(source_id)

    def staged_catalog_path(self, source_id: str, lang: str) -> Path:
        return self.layout.staged_catalog_path(source_id, lang)

    @property
    def build_dir(self) -> Path:
        return self.layout.build_dir

    @property
    def run_root(self) -> Path:
        return self.layout.run_root

    @property
    def results_dir(self) -> Path:
        return self.layout.results_dir

    @property
    def search_dir(self) -> Path:
        return self.layout.search_dir

    @property
    def report_dir(self) -> Path:
        return self.layout.report_dir

    @property
    def publish_dir(self) -> Path:
        return self.layout.publish_dir


class FedlexSource(dg.ConfigurableResource):
    """Where the catalog and files come from: the shipped sample (default, offline) or live Fedlex."""

    mode: Literal["sample", "live"] = "sample"
    sample_dir: str = ""  # empty = $CHPIT_SAMPLE_DIR, else the project's data/fedlex-sample
    sparql_url: str = ENDPOINT
    sr_numbers: list[str] = []  # live only: restrict to these SR numbers (empty = all)
    download_concurrency: int = 4

    @property
    def source_id(self) -> str:
        """12 hex naming where catalogs come from (mode, folder or endpoint, SR restriction)."""
        where = str(self.sample_path) if self.mode == "sample" else f"{self.sparql_url}|{','.join(self.sr_numbers)}"
        return hashlib.sha256(f"{self.mode}|{where}".encode()).hexdigest()[:12]

    @property
    def sample_path(self) -> Path:
        return project_path(self.sample_dir or os.environ.get(SAMPLE_DIR_ENV) or "data/fedlex-sample")

    def load_catalog(self, lang: str) -> Catalog:
        """The catalog restricted to one language, from the configured source.

        An empty answer is refused: downstream it would read as "every edition withdrawn" and
        clear the language from the store, while it nearly always means a source or query fault.
        """
        if self.mode == "sample":
            catalog = load_sample_catalog(self.sample_path, langs=[lang]).for_lang(lang)
            source = str(self.sample_path)
        else:
            from chpit_assets.fedlex.sparql import fetch_catalog

            catalog = fetch_catalog(self.sparql_url, sr_numbers=self.sr_numbers or None, langs=[lang]).for_lang(lang)
            source = self.sparql_url
        if not catalog.editions:
            raise CatalogError(f"the {self.mode} catalog ({source}) lists no edition in {lang!r}; refusing to clear it")
        return catalog


# The store, the Fedlex source and the values handed from step to step, for every domain's assets;
# loaded with the defs folder.
defs = dg.Definitions(
    resources={"chpit": ChpitStore(), "fedlex": FedlexSource(), "io_manager": HandoverIOManagerFactory()}
)
