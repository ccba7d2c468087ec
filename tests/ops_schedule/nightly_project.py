"""A throw-away copy of the project for the nightly's end-to-end tests: its own code, sample, data/
and instance, run from a plain shell, so nothing of the user's checkout is read or written."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DSG_FR_2023 = ("https://fedlex.data.admin.ch/eli/cc/2022/491/20230901", "fr")
"""The real SR 235.1 French 2023-09-01 edition: with fr 2025-07-07 it makes the sample's French pair."""

# Imported by every Python process that has the folder on PYTHONPATH: run workers the daemon starts
# included. The oracle then answers a wrong text, which its blocking check (R1) must catch.
FAILING_ORACLE = """
from chpit_assets.runs import systems

_answer = systems.OracleSystem.answer


def _wrong(self, item):
    answer = _answer(self, item)
    answer.text = "not the gold text"
    return answer


systems.OracleSystem.answer = _wrong
"""


def copy_project(dest: Path) -> Path:
    """dest/ with the code, the instance file, the workspace, the project file (its [tool.dg]) and the sample;
    .venv is this interpreter's."""
    for name in ("chpit_assets", "chpit_scorer"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("dagster.yaml", "workspace.yaml", "pyproject.toml"):
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(ROOT / "data" / "fedlex-sample", dest / "data" / "fedlex-sample")
    (dest / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return dest


def set_edition(project: Path, edition: tuple[str, str], present: bool) -> None:
    """Add or take out one edition of the copy's catalog (the file stays in the folder either way)."""
    original = json.loads((ROOT / "data" / "fedlex-sample" / "catalog.json").read_text())
    path = project / "data" / "fedlex-sample" / "catalog.json"
    catalog = json.loads(path.read_text())
    for act, source in zip(catalog["acts"], original["acts"]):
        wanted = [e for e in source["editions"] if (e["consolidation"], e["lang"]) == edition]
        act["editions"] = [e for e in act["editions"] if (e["consolidation"], e["lang"]) != edition]
        if present and wanted:
            act["editions"] = [e for e in source["editions"] if e in act["editions"] or e in wanted]
    path.write_text(json.dumps(catalog, ensure_ascii=False, indent=1))


def plain_env(**extra: str) -> dict[str, str]:
    """A shell's environment without anything chpit or Dagster would read (issue 14.1)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DAGSTER", "CHPIT_")) and k not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    return {**env, **extra}


def run(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`.venv/bin/python -m chpit_assets ...`, as the README writes it, from the project folder."""
    return subprocess.run(
        [".venv/bin/python", "-m", "chpit_assets", *args],
        cwd=project,
        env=env or plain_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )


def failing_oracle_env(project: Path, tmp: Path) -> dict[str, str]:
    patch = tmp / "failing-oracle"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text(FAILING_ORACLE)
    # sitecustomize is imported before the current folder joins sys.path: name the copy explicitly.
    return plain_env(PYTHONPATH=f"{patch}{os.pathsep}{project}")


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def items(project: Path, lang: str, sr_number: str) -> list[dict]:
    path = project / "data" / "build" / f"bench-{lang}.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [i for i in map(json.loads, lines) if i["sr_number"] == sr_number]


def published_ids(project: Path, lang: str) -> set[str]:
    import polars as pl

    folder = project / "data" / "publish" / "data" / lang
    return {i for p in sorted(folder.glob("full-*.parquet")) for i in pl.read_parquet(p)["id"].to_list()}
