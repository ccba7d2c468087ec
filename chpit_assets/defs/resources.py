"""Resources: where the data lives, and where Fedlex comes from."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import dagster as dg

from chpit_assets.corpus.store import Store


class ChpitStore(dg.ConfigurableResource):
    """The data folder: the DuckDB store and the stable output paths of ARCHITECTURE.md ("Outputs")."""

    data_dir: str = "data"

    @property
    def root(self) -> Path:
        return Path(self.data_dir)

    @property
    def store(self) -> Store:
        return Store(self.root / "chpit.duckdb")

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    @property
    def build_dir(self) -> Path:
        return self.root / "build"

    @property
    def results_dir(self) -> Path:
        return self.root / "results"

    @property
    def report_dir(self) -> Path:
        return self.root / "report"

    @property
    def publish_dir(self) -> Path:
        return self.root / "publish"


class FedlexSource(dg.ConfigurableResource):
    """Where the catalog and files come from: the shipped sample (default, offline) or live Fedlex."""

    mode: Literal["sample", "live"] = "sample"
    sample_dir: str = "data/fedlex-sample"
    sparql_url: str = "https://fedlex.data.admin.ch/sparqlendpoint"
    sr_numbers: list[str] = []          # live only: restrict to these SR numbers (empty = all)
    download_concurrency: int = 4
