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

from chpit_assets.bench.frozen import DEFAULT_FROZEN_DIR
from chpit_assets.corpus.store import Store, release_held
from chpit_assets.fedlex.catalog import Catalog, CatalogError, load_sample_catalog
from chpit_assets.fedlex.sparql import ENDPOINT

PROJECT_ROOT = Path(__file__).resolve().parents[2]
"""The repository checkout (the package is installed editable, `pip install -e`)."""

DATA_DIR_ENV = "CHPIT_DATA_DIR"
FROZEN_DIR_ENV = "CHPIT_FROZEN_DIR"
SAMPLE_DIR_ENV = "CHPIT_SAMPLE_DIR"


def project_path(path: str | Path) -> Path:
    """An absolute path: relative ones are the project's, whatever the current directory."""
    path = Path(path)
    return path if path.is_absolute() else PROJECT_ROOT / path


class ChpitStore(dg.ConfigurableResource):
    """The data folder: the DuckDB store and the stable output paths of ARCHITECTURE.md ("Outputs").

    Empty `data_dir` = $CHPIT_DATA_DIR, else the project's `data/`, read each time it is used."""

    data_dir: str = ""
    # B18's record of published items: the build reads it, the gate checks it, an upload grows it.
    # Empty = $CHPIT_FROZEN_DIR, else the project's committed frozen/; relative = the project's.
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
    def root(self) -> Path:
        return project_path(self.data_dir or os.environ.get(DATA_DIR_ENV) or "data")

    @property
    def frozen_path(self) -> Path:
        """The frozen record (B18), resolved against the project, never the working directory (issue 23.3)."""
        return project_path(self.frozen_dir or os.environ.get(FROZEN_DIR_ENV) or DEFAULT_FROZEN_DIR)

    @property
    def store_path(self) -> Path:
        return self.root / "chpit.duckdb"

    @property
    def store(self) -> Store:
        """The store as the build's steps use it. Where the run owns the writer pool (see
        setup_for_execution), it is kept open in this process from the first step that opens it
        until the run ends (in-process executor; a step, with one process per step), so
        consecutive steps share one warm database and one checkpoint (corpus/store.py)."""
        return Store(self.store_path, hold=self._hold)

    def released_store(self) -> Store:
        """The store for a step that waits on the network between reads (model runs): what this
        process holds is closed first, so other processes are not locked out while it waits."""
        release_held(self.store_path)
        return Store(self.store_path)

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    def built_catalog_path(self, source_id: str) -> Path:
        """The catalog snapshot the last publication was built from, per Fedlex source (the sensor's baseline)."""
        return self.cache_dir / f"built-catalog-{source_id}.snapshot"

    def staged_catalog_path(self, source_id: str, lang: str) -> Path:
        """The catalog snapshot the last build of `lang` read; it becomes the baseline once it is published."""
        return self.cache_dir / f"staged-catalog-{source_id}-{lang}.snapshot"

    @property
    def build_dir(self) -> Path:
        return self.root / "build"

    @property
    def run_root(self) -> Path:
        """Where this run's results and report go: the data folder, or a bounded run's own folder."""
        return self.root / "runs" / self.run_dir if self.run_dir else self.root

    @property
    def results_dir(self) -> Path:
        return self.run_root / "results"

    @property
    def search_dir(self) -> Path:
        """The search_index files, one SQLite FTS5 file per language (chpit_assets/search)."""
        return self.root / "search"

    @property
    def report_dir(self) -> Path:
        return self.run_root / "report"

    @property
    def publish_dir(self) -> Path:
        return self.root / "publish"


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
            catalog = load_sample_catalog(self.sample_path).for_lang(lang)
            source = str(self.sample_path)
        else:
            from chpit_assets.fedlex.sparql import fetch_catalog

            catalog = fetch_catalog(self.sparql_url, sr_numbers=self.sr_numbers or None, langs=[lang]).for_lang(lang)
            source = self.sparql_url
        if not catalog.editions:
            raise CatalogError(f"the {self.mode} catalog ({source}) lists no edition in {lang!r}; refusing to clear it")
        return catalog


# The store and the Fedlex source, for every domain's assets; loaded with the defs folder.
defs = dg.Definitions(resources={"chpit": ChpitStore(), "fedlex": FedlexSource()})
