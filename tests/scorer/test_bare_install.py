"""Issue 17.6: the scorer works where nothing but rapidfuzz is installed.

A virtual environment without pip, without site packages, holding only the installed rapidfuzz
and a copy of `chpit_scorer`, runs in isolated mode (`-I`: no PYTHONPATH, no user site). There
the package imports, scores the three labels as the rules say, streams the CLI, and loads no
module outside the standard library, rapidfuzz and itself.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import venv
from pathlib import Path

import rapidfuzz

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import json, sys
import chpit_scorer
from chpit_scorer import score, GROUNDED_CORRECT, GROUNDED_WRONG_VERSION, UNGROUNDED
from chpit_scorer.cli import main

gold = "Der Verantwortliche meldet dem Beauftragten eine Verletzung der Datensicherheit innert 72 Stunden."
distractor = "Der Verantwortliche meldet dem Beauftragten eine Verletzung der Datensicherheit so rasch als moeglich."
labels = [score(answer, gold, distractor).label for answer in (gold, distractor, "Keine Ahnung.")]
assert labels == [GROUNDED_CORRECT, GROUNDED_WRONG_VERSION, UNGROUNDED], labels
sys.argv = ["chpit-score", sys.argv[1]]
main()
# rapidfuzz's compiled extensions register Cython's in-memory runtime modules (no files behind them).
foreign = sorted({name.split(".")[0] for name in sys.modules if not name.startswith(("_cython_", "cython_runtime"))}
                 - set(sys.stdlib_module_names) - {"chpit_scorer", "rapidfuzz", "__main__"})
assert not foreign, foreign
"""


def test_the_scorer_runs_with_only_rapidfuzz_installed(tmp_path):
    env_dir = tmp_path / "bare"
    venv.create(env_dir, with_pip=False, system_site_packages=False)
    [site] = (env_dir / "lib").glob("python3*/site-packages")
    assert sorted(p.name for p in site.iterdir()) == []  # bare: nothing installed
    shutil.copytree(Path(rapidfuzz.__file__).parent, site / "rapidfuzz")
    shutil.copytree(ROOT / "chpit_scorer", site / "chpit_scorer", ignore=shutil.ignore_patterns("__pycache__"))
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        json.dumps(
            {
                "id": "a1",
                "gold": "Art. 1 Dieses Gesetz gilt ab 2023.",
                "distractor": "Art. 1 Dieses Gesetz galt bis 2022.",
                "answer": "Art. 1 Dieses Gesetz gilt ab 2023.",
            }
        )
        + "\n"
    )
    done = subprocess.run(
        [str(env_dir / "bin" / "python"), "-I", "-c", PROBE, str(answers)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    [verdict] = [json.loads(line) for line in done.stdout.splitlines()]
    assert (verdict["id"], verdict["label"]) == ("a1", "grounded_correct")
