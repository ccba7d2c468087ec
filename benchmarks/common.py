"""What every benchmark script shares: its smoke mode's figures line, repeated timings, the record.

Two ways to run a script (issue 27.5):
  --smoke DIR   a tiny scale, every file under DIR; the script's last stdout line is one JSON object
                `{"benchmark": NAME, "figures": {...}}` whose figures are finite numbers (or nested
                objects of them). `make test` runs every script so and checks that line, never a time:
                a script that no check runs rots (the --dagster-only path once failed on main unseen).
  full scale    `make bench` runs each script with `--write docs/benchmarks.md`, which appends the
                figures under a heading with the date, the machine and the command that measured them.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIGURES_KEYS = ("benchmark", "figures")


def machine() -> str:
    """The line every figure is written down with: date, machine, cores, CPU model and load."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"{when}; {platform.machine()}, {os.cpu_count()} cores, {cpu or 'cpu unknown'}; Python {platform.python_version()}; load {load}"


def absolute(path: str) -> Path:
    """A path argument as every script parses it: made absolute where it is given. `make bench` names
    folders relative to the project (data/synthetic); a script hands them on to the processes it
    starts, and Dagster refuses a relative $DAGSTER_HOME (bench_scale failed so at full scale while
    its smoke run, given an absolute folder, passed)."""
    return Path(path).resolve()


def spread(values: list[float]) -> dict[str, float]:
    """Median with min and max: on 2 shared, noisy cores one time means little, three bound it."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def spread_text(values: list[float], unit: str = "s", digits: int = 2) -> str:
    s = spread(values)
    return f"{s['median']:.{digits}f} {unit} (min {s['min']:.{digits}f}, max {s['max']:.{digits}f}, n={len(values)})"


def well_formed(figures: Any) -> bool:
    """Finite numbers, or objects/lists of them, and at least one number in all."""

    def numbers(value: Any) -> list[float]:
        if isinstance(value, bool):
            return []
        if isinstance(value, int | float):
            if not math.isfinite(value):
                raise ValueError(value)
            return [float(value)]
        if isinstance(value, Mapping):
            return [n for v in value.values() for n in numbers(v)]
        if isinstance(value, list):
            return [n for v in value for n in numbers(v)]
        if isinstance(value, str):
            return []
        raise ValueError(value)

    try:
        return bool(numbers(figures))
    except ValueError:
        return False


def emit(name: str, figures: Mapping[str, Any]) -> None:
    """The smoke line: the last line the script prints."""
    if not well_formed(figures):
        raise ValueError(f"{name}: figures not well-formed: {figures!r}")
    sys.stdout.write(json.dumps({"benchmark": name, "figures": figures}, sort_keys=True) + "\n")
    sys.stdout.flush()


def record(path: Path, title: str, body: str) -> None:
    """Append one measured section to a markdown record, with when, where and how it was measured."""
    command = " ".join([Path(sys.executable).name, *(a for a in sys.argv if a)])
    section = f"\n## {title}\n\n{machine()}\n\n`{command}`\n\n{body.rstrip()}\n"
    with path.open("a", encoding="utf-8") as f:
        f.write(section)
