"""The data folder's file layout: one definition of every path the pipeline reads or writes (issue 22.8).

Plain data, so domain code resolves paths without the Dagster layer: the `chpit` resource
(`defs/resources.py`, `ChpitStore`) builds a `Layout` from its config and delegates its paths to it,
and the CLIs and the Inspect task build the same one from theirs. Relative folders are the
project's, never the working directory's: the daemon, the webserver, run workers and the CLI agree
wherever they were started (issue 18.3); the record B18 is resolved likewise (issue 23.3).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from chpit_assets.bench.frozen import DEFAULT_FROZEN_DIR
from chpit_assets.corpus.store import Store, release_held

PROJECT_ROOT = Path(__file__).resolve().parents[1]
"""The repository checkout (the package is installed editable, `pip install -e`)."""

DATA_DIR_ENV = "CHPIT_DATA_DIR"
FROZEN_DIR_ENV = "CHPIT_FROZEN_DIR"


def project_path(path: str | Path) -> Path:
    """An absolute path: relative ones are the project's, whatever the current directory."""
    path = Path(path)
    return path if path.is_absolute() else PROJECT_ROOT / path


@dataclass(frozen=True)
class Layout:
    """Where the store, the build, the runs' results, the report and the publication live."""

    root: Path
    frozen_path: Path
    """The frozen record of published items (B18): the build reads it, the gate checks it, an upload grows it."""
    run_dir: str = ""
    """A bounded run's own folder under root/runs/ (issue 23.6); empty = the full run's results and report."""

    @classmethod
    def resolve(cls, data_dir: str = "", frozen_dir: str = "", run_dir: str = "") -> Layout:
        """Empty `data_dir` = $CHPIT_DATA_DIR, else the project's data/; empty `frozen_dir` =
        $CHPIT_FROZEN_DIR, else the project's committed frozen/. Read when called, so a process that
        sets the variables after import is obeyed (issue 14.2)."""
        return cls(
            root=project_path(data_dir or os.environ.get(DATA_DIR_ENV) or "data"),
            frozen_path=project_path(frozen_dir or os.environ.get(FROZEN_DIR_ENV) or DEFAULT_FROZEN_DIR),
            run_dir=run_dir,
        )

    @property
    def store_path(self) -> Path:
        return self.root / "chpit.duckdb"

    def released_store(self) -> Store:
        """The store for work that waits on the network between reads (model runs): what this
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
