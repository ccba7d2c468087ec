"""The real sample, built, run and reported once per session; each test publishes from a copy of it.

The chain is the one `make run` drives: the builder's domain functions (as tests/runs builds the
sample), build-report.json, then oracle gate -> oracle and recite runs -> report through Dagster.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

from chpit_assets.bench.build_report import build_report, write_report
from tests.dagster_defs import defs_for, run_benchmark
from tests.runs.conftest import TODAY, build_sample

RUN_CONFIG = {
    "resources": {"runs": {"config": {"today": TODAY.isoformat()}}},
    "loggers": {"console": {"config": {"log_level": "WARNING"}}},
}
PUBLISH = [dg.AssetKey("publish_gate"), dg.AssetKey("hf_dataset")]


@pytest.fixture(scope="session")
def sample_data(tmp_path_factory) -> Path:
    """data/ of a full sample run: store, build/ (with build-report.json), results/ (oracle, recite), report/."""
    root = tmp_path_factory.mktemp("publish-sample")
    sample = build_sample(root)
    write_report(sample.build_dir / "build-report.json", build_report(sample.store, None))
    with dg.instance_for_test() as instance:
        assert run_benchmark(
            defs_for(root), instance, ("oracle", "recite"), ("de", "fr"), RUN_CONFIG, echo=lambda s: None
        )
    return root


def copy_data(sample_data: Path, out: Path) -> Path:
    """What publishing reads: build/, results/, report/ and the store (the gate's oracle looks every item up)."""
    for part in ("build", "results", "report"):
        shutil.copytree(sample_data / part, out / part)
    for store_file in sample_data.glob("chpit.duckdb*"):
        shutil.copy2(store_file, out / store_file.name)
    return out


@pytest.fixture
def data(sample_data, tmp_path) -> Path:
    """A private copy of the sample's data folder."""
    return copy_data(sample_data, tmp_path / "data")


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """No test may find a real token and reach the Hub, nor let `datasets` write to ~ (the frozen
    record is the test's own: tests/conftest.py sets $CHPIT_FROZEN_DIR). Not HF_HUB_OFFLINE:
    huggingface_hub reads it once, when first imported, which is now at the first upload or pull
    (issue 27.2), so setting it here would turn the loopback Hub of every later test in this
    process away; every upload and pull of the tests names that loopback Hub's endpoint."""
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)


def publish_run(
    data_dir: Path,
    instance: dg.DagsterInstance,
    publication: dict | None = None,
    selection: list[dg.AssetKey] = PUBLISH,
) -> dg.ExecuteInProcessResult:
    """publish_gate + its CRITICAL checks + hf_dataset in one Dagster run, as `make run` would."""
    job = defs_for(data_dir).resolve_implicit_global_asset_job_def()
    config = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
    if publication:
        config["resources"] = {"publication": {"config": publication}}
    return job.execute_in_process(instance=instance, asset_selection=selection, raise_on_error=False, run_config=config)
