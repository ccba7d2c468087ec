"""chpit-score CLI, run as a subprocess like a user would."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from chpit_scorer import score
from chpit_scorer.cli import MAX_DEPTH, _Progress
from tests.scorer.fedlex_text import articles

ROOT = Path(__file__).resolve().parents[2]
GOLD = articles("cc-2022-491/20250707-de.xml")["art_25"]
DISTRACTOR = GOLD.replace("30 Tagen", "180 Tagen")


def _run(args: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chpit_scorer.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def _items() -> list[dict]:
    return [
        # a benchmark item: nested gold/distractor objects with extra fields
        {
            "id": "a1",
            "lang": "de",
            "answer": GOLD,
            "gold": {"text": GOLD, "eli": "x"},
            "distractor": {"text": DISTRACTOR},
        },
        # flat strings, no id
        {"answer": DISTRACTOR, "gold": GOLD, "distractor": DISTRACTOR},
        # a null answer scores as empty
        {"id": 7, "answer": None, "gold": GOLD, "distractor": DISTRACTOR},
    ]


def test_cli_streams_one_verdict_per_line_with_ids(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(i, ensure_ascii=False) for i in _items()) + "\n\n", encoding="utf-8")
    proc = _run([str(src)])
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no progress bar when stderr is not a terminal
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o.get("id") for o in out] == ["a1", None, 7]
    assert "id" not in out[1]
    assert [o["label"] for o in out] == ["grounded_correct", "grounded_wrong_version", "ungrounded"]
    expected = score(GOLD, GOLD, DISTRACTOR)
    assert out[0]["gold_coverage"] == expected.gold_coverage
    assert out[0]["distractor_all_coverage"] == expected.distractor_all_coverage


def test_cli_reads_stdin_and_writes_out_file(tmp_path):
    dest = tmp_path / "verdicts.jsonl"
    stdin = "".join(json.dumps(i) + "\n" for i in _items())
    proc = _run(["--out", str(dest)], stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    labels = [json.loads(line)["label"] for line in dest.read_text(encoding="utf-8").splitlines()]
    assert labels == ["grounded_correct", "grounded_wrong_version", "ungrounded"]


def test_cli_reference_path_gives_identical_output(tmp_path):
    stdin = "".join(json.dumps(i) + "\n" for i in _items())
    fast, slow = _run([], stdin=stdin), _run(["--reference"], stdin=stdin)
    assert fast.returncode == slow.returncode == 0
    assert fast.stdout == slow.stdout


@pytest.mark.parametrize(
    "bad, reason",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"gold": "a", "distractor": "b"}', "missing 'answer'"),
        ('{"answer": "x", "distractor": "b"}', "missing 'gold'"),
        ('{"answer": "x", "gold": {"eli": "e"}, "distractor": "b"}', "'gold' is an object without 'text'"),
        ('{"answer": 3, "gold": "a", "distractor": "b"}', "'answer' must be a string or null, got int"),
        ('{"answer": "x", "gold": "a", "distractor": {"text": null}}', "'distractor' text must be a string"),
    ],
)
def test_cli_bad_line_names_its_line_number(bad, reason):
    good = json.dumps(_items()[1])
    proc = _run([], stdin=f"{good}\n\n{bad}\n{good}\n")
    assert proc.returncode == 2
    assert "line 3:" in proc.stderr and reason in proc.stderr
    # the line before the bad one was already written: output streams
    assert len(proc.stdout.splitlines()) == 1


def test_cli_missing_input_file_is_a_clear_error(tmp_path):
    proc = _run([str(tmp_path / "nope.jsonl")])
    assert proc.returncode == 2
    assert "cannot read" in proc.stderr and "nope.jsonl" in proc.stderr


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_draws_only_on_a_terminal():
    tty, pipe = _Tty(), io.StringIO()
    for stream in (tty, pipe):
        bar = _Progress(stream, total=4)
        for _ in range(4):
            bar.step()
        bar.close()
    assert pipe.getvalue() == ""
    assert tty.getvalue().startswith("\r[") and "4/4" in tty.getvalue() and tty.getvalue().endswith("\n")


def test_bad_input_leaves_no_output_file_and_non_utf8_is_a_clear_error(tmp_path):
    good = json.dumps(
        {
            "answer": "x",
            "gold": "Der Bundesrat regelt die Einzelheiten der Publikation.",
            "distractor": "Der Bundesrat regelt die Einzelheiten der Veröffentlichung.",
        }
    )
    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_text(good + "\n{not json\n", encoding="utf-8")
    out = tmp_path / "verdicts.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "chpit_scorer.cli", str(bad_json), "-o", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 2 and "line 2" in done.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == [bad_json]
    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes(good.replace("ö", "\\u00f6").encode() + b"\n" + '{"answer": "\xe9"}'.encode("latin-1"))
    done = subprocess.run(
        [sys.executable, "-m", "chpit_scorer.cli", str(latin1), "-o", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 2 and "not UTF-8" in done.stderr and not out.exists()


def _run_bytes(args: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "chpit_scorer.cli", *args], input=stdin, capture_output=True, cwd=ROOT, timeout=120
    )


GOOD_LINE = json.dumps(_items()[1], ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("via", ["stdin", "file"])
def test_invalid_utf8_is_refused_the_same_on_stdin_and_from_a_file(via, tmp_path):
    """Issue 15.5: stdin accepted bad bytes while a file refused them; now one decoder serves both."""
    bad = b'{"answer": "Gr\xfcezi", "gold": "a", "distractor": "b"}'
    data = GOOD_LINE + b"\n" + bad + b"\n"
    src = tmp_path / "in.jsonl"
    src.write_bytes(data)
    proc = _run_bytes([str(src)]) if via == "file" else _run_bytes([], stdin=data)
    err = proc.stderr.decode()
    assert proc.returncode == 2
    where = str(src) if via == "file" else "stdin"
    offset = bad.index(b"\xfc")
    assert err.startswith(f"chpit-score: {where}: line 2: not UTF-8 text (invalid start byte at byte {offset} ")
    assert f"byte {len(GOOD_LINE) + 1 + offset} of the input" in err
    assert len(proc.stdout.splitlines()) == 1  # the good first line was scored before the bad one


@pytest.mark.parametrize("via", ["stdin", "file"])
def test_deep_nesting_is_a_clear_error_not_a_recursion_error(via, tmp_path):
    deep = b'{"answer": "x", "gold": "a", "distractor": "b", "extra": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    src = tmp_path / "deep.jsonl"
    src.write_bytes(GOOD_LINE + b"\n" + deep + b"\n")
    proc = _run_bytes([str(src)]) if via == "file" else _run_bytes([], stdin=src.read_bytes())
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "RecursionError" not in err and "Traceback" not in err
    assert f"line 2: JSON nested deeper than {MAX_DEPTH} levels" in err


def test_brackets_inside_texts_do_not_count_as_nesting():
    gold = GOLD + " [" * 40 + '" {\\"' + "]" * 3
    line = json.dumps({"answer": gold, "gold": gold, "distractor": DISTRACTOR, "meta": [[[1]]]})
    proc = _run([], stdin=line + "\n")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["label"] == score(gold, gold, DISTRACTOR).label == "grounded_correct"


@pytest.mark.parametrize("stdin", ["", "\n\n  \n"])
def test_empty_input_says_so_on_stderr(stdin, tmp_path):
    out = tmp_path / "verdicts.jsonl"
    proc = _run(["-o", str(out)], stdin=stdin)
    assert proc.returncode == 0
    assert proc.stderr == "chpit-score: stdin: empty input, no JSON lines to score; 0 verdicts written\n"
    assert out.read_bytes() == b""
