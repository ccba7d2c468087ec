"""`python -m chpit_assets run`, the command behind `make run`: the whole chain from live Fedlex (a
loopback server serving the real sample) gives the same benchmark as the shipped sample read offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from chpit_assets.fedlex.catalog import load_sample_catalog
from tests.fedlex.conftest import SAMPLE, FakeFedlex, sample_graph

ROOT = Path(__file__).resolve().parents[1]


def run_cli(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp / "home").mkdir(parents=True)
    (tmp / "home" / "dagster.yaml").write_bytes((ROOT / "dagster.yaml").read_bytes())
    env = dict(os.environ, DAGSTER_HOME=str(tmp / "home"), CHPIT_DATA_DIR=str(tmp / "data"))
    env.pop("CHPIT_PG_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "chpit_assets", "run", "--langs", "de", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )


def test_live_fedlex_and_the_offline_sample_build_the_same_benchmark(tmp_path):
    fake = FakeFedlex()
    try:
        fake.graph, files = sample_graph(load_sample_catalog(SAMPLE), fake.base_url)
        fake.files = {path: src.read_bytes() for path, src in files.items()}
        live = run_cli(tmp_path / "live", "--source", "live", "--sparql-url", fake.endpoint)
    finally:
        fake.close()
    assert live.returncode == 0, live.stdout + live.stderr
    german = [p for p in files if "/de/xml/" in p]
    assert len(german) == 6 and all(fake.hits[p] == 1 for p in german)  # each German file once, over HTTP
    assert not any(fake.hits[p] for p in files if p not in german)
    offline = run_cli(tmp_path / "offline")
    assert offline.returncode == 0, offline.stdout + offline.stderr

    for name in ("bench-de.jsonl", "core-de.jsonl", "build-report.json"):
        assert (tmp_path / "live/data/build" / name).read_bytes() == (tmp_path / "offline/data/build" / name).read_bytes()
    items = [json.loads(line) for line in (tmp_path / "offline/data/build/bench-de.jsonl").read_text().splitlines()]
    assert len(items) == 9 and {i["sr_number"] for i in items} == {"235.1", "170.512"}
    report = (tmp_path / "offline/data/report/report.md").read_text()
    assert "| oracle | 9 | 100.0 |" in report
    assert (tmp_path / "offline/data/publish/data/de/core-00000-of-00001.parquet").is_file()
    assert "hf_dataset: ok" in offline.stdout and "local only" in offline.stdout + offline.stderr
