"""Issue 23 item 8: `make clean` removes outputs only, never a file the repository commits.

data/search/*.sqlite were committed by mistake (data/search/ is in .gitignore: the search_index
asset builds them); `make clean` deleted them from every clone. They are no longer committed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _clean_paths() -> list[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^clean:\n((?:\t.*\n?)+)", makefile, re.MULTILINE)
    assert recipe, "the Makefile has a clean target"
    paths = [p for line in recipe.group(1).splitlines() for p in line.split()[2:] if line.split()[:2] == ["rm", "-rf"]]
    assert paths, recipe.group(1)
    return paths


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_make_clean_deletes_no_committed_file():
    paths = _clean_paths()
    assert "data/search" in paths and "data/fedlex-sample" not in paths
    committed = subprocess.run(
        ["git", "ls-files", "--", *paths], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert committed == []
