"""Benchmarks cannot rot (issue 27.5): every script in benchmarks/ runs in its smoke mode here.

Each is run as `make bench` runs it, in its own process, at a tiny scale, given a folder relative
to where it runs (`make bench` names data/synthetic: a relative folder once broke bench_scale at
full scale, never in its smoke run, which was given an absolute one), and its last stdout line must
be its figures (`benchmarks/common.py`): named after the script, and
well-formed (finite numbers). No time is asserted: on 2 shared cores a timing proves nothing; that
the script still completes against today's code is what this guards (the `--dagster-only` path of
bench_scale.py once failed on main for weeks because nothing ran it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.common import FIGURES_KEYS, well_formed

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.name for p in (ROOT / "benchmarks").glob("bench_*.py"))


def test_the_figures_check_refuses_what_is_not_a_figure() -> None:
    assert well_formed({"s": 1.5, "nested": {"n": 3}})
    assert not well_formed({"s": float("nan")})
    assert not well_formed({"note": "no number at all"})
    assert not well_formed({"s": None})


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_benchmark_completes_at_smoke_scale_with_well_formed_figures(script: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--smoke", "smoke"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"{script} failed in smoke mode:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    last = done.stdout.strip().splitlines()[-1]
    line = json.loads(last)
    assert tuple(sorted(line)) == FIGURES_KEYS
    assert line["benchmark"] == script.removesuffix(".py")
    assert well_formed(line["figures"]), line
