"""Repeats and the training cutoff (issue 25): every item asked N times against a loopback endpoint
that varies its answers, resumed per (id, repeat) after kill -9; the report's agreement and
cutoff split; the published report files read repeat 0 only and keep their bytes."""

from __future__ import annotations

import json
from collections import Counter

import dagster as dg
import pytest

from chpit_assets.defs.runs.resources import ModelEndpoint
from chpit_assets.report.compare import main as compare
from chpit_assets.runs.runner import load_repeats, log_status, read_log, run_items
from tests.dagster_defs import defs_for, run_benchmark

from .conftest import completion
from .test_assets import _copy, _model_config
from .test_runner import _closed, _items, _question_id, kill_during_request

PUBLISHED = ("report-all.json", "results-tables.md", "summary.md", "run-report-closed.json")


def _varying(sample):
    """A model that quotes the gold edition, except that on every second ask of every other item it
    quotes the distractor: answers that differ between repeats."""
    by_question = {item["question"]: (i, item) for i, item in enumerate(sample.items["de"])}
    asked: Counter = Counter()

    def respond(body):
        i, item = by_question[body["messages"][-1]["content"]]
        asked[i] += 1
        side = "distractor" if i % 2 and asked[i] % 2 == 0 else "gold"
        return 200, completion(item[side]["text"])

    return respond


def test_repeats_vary_the_report_agrees_less_than_one_and_the_published_files_keep_their_bytes(
    sample, tmp_path, scripted
):
    data = _copy(sample, tmp_path)
    server = scripted(_varying(sample))
    systems = ("oracle", "recite", "scripted/closed")
    config = _model_config(server, runs={"repeats": 3}, cutoff="2024-06-30")
    with dg.instance_for_test() as instance:
        assert run_benchmark(defs_for(data), instance, systems, ("de",), config, echo=lambda s: None)
    n = len(sample.items["de"])
    log = data / "results/scripted/closed/de.jsonl"
    lines = read_log(log)
    assert len(server.hits) == 3 * n and Counter(l["repeat"] for l in lines) == {0: n, 1: n, 2: n}
    assert {l["receipt"]["cutoff"] for l in lines} == {"2024-06-30"}
    assert {r: len(w) for r, w in load_repeats(log).items()} == {0: n, 1: n, 2: n}
    assert log_status(sample.items["de"], log, 3) == {
        "items": 3 * n,
        "answered": 3 * n,
        "errored": 0,
        "not_asked": 0,
        "commonest_error": None,
    }

    report = json.loads((data / "report/report.json").read_text(encoding="utf-8"))
    [row] = report["repeats"]
    varying = n // 2  # the odd-numbered items got the distractor on their second ask
    assert (row["system"], row["repeats"], row["n"]) == ("scripted/closed", 3, n)
    assert row["agreement"] == n - varying and row["agreement_pct"] < 100.0
    assert row["correct_pct_by_repeat"][0] == row["correct_pct_by_repeat"][2] > row["correct_pct_by_repeat"][1]
    assert row["correct_sd"] > 0
    cutoff = [r for r in report["cutoff"] if r["system"] == "scripted/closed"]
    assert {(r["cutoff"], r["split"], r["side"]) for r in cutoff} == {
        ("2024-06-30", split, side) for split in ("as_of", "change_date") for side in ("on or before", "after")
    }
    sensitive = report["date_sensitive"]["de"]["date_sensitive"]
    assert all(sum(r["n"] for r in cutoff if r["split"] == s) == sensitive for s in ("as_of", "change_date"))
    html = (data / "report/report.html").read_text(encoding="utf-8")
    assert "before and after the cutoff" in html and "<h2>Repeats</h2>" in html
    three = {name: (data / "report" / name).read_bytes() for name in PUBLISHED}

    # The same run without its repeats 1 and 2: the published files are the same bytes.
    log.write_text("".join(json.dumps(l, ensure_ascii=False) + "\n" for l in lines if l["repeat"] == 0))
    with dg.instance_for_test() as instance:
        assert run_benchmark(
            defs_for(data), instance, systems, ("de",), _model_config(server, cutoff="2024-06-30"), echo=lambda s: None
        )
    assert len(server.hits) == 3 * n  # nothing asked again
    assert {name: (data / "report" / name).read_bytes() for name in PUBLISHED} == three
    assert not (data / "results/scripted/closed/de.repeats.jsonl").exists()
    assert json.loads((data / "report/report.json").read_text(encoding="utf-8"))["repeats"] == []


def test_compare_prints_the_paired_difference_and_refuses_an_unknown_system(sample, tmp_path, scripted, capsys):
    data = _copy(sample, tmp_path)
    server = scripted(_varying(sample))
    with dg.instance_for_test() as instance:
        assert run_benchmark(
            defs_for(data),
            instance,
            ("oracle", "recite", "scripted/closed"),
            ("de",),
            _model_config(server),
            echo=lambda s: None,
        )
    capsys.readouterr()
    assert compare(["scripted/closed", "recite", "--items", "date-sensitive", "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    report = json.loads((data / "report/report.json").read_text(encoding="utf-8"))
    [row] = [r for r in report["comparisons"] if (r["a"], r["b"]) == ("scripted/closed", "recite")]
    assert f"scripted/closed vs recite on {row['n']} shared date-sensitive items" in out
    assert f"exact McNemar p = {row['p_value']:.4g}" in out and row["verdict"] in out
    assert row["b_correct"] == 0 and row["a_only"] == row["a_correct"]  # recite is wrong on every date-sensitive item
    assert compare(["scripted/pit", "recite", "--data-dir", str(data)]) == 2
    assert "no scored results for system 'scripted/pit'" in capsys.readouterr().err


def test_a_killed_run_with_repeats_resumes_per_id_and_repeat(sample, tmp_path, scripted):
    """kill -9 while the 5th of 3 x 3 requests is in flight (repeat 1 of the second item): the restart
    asks that pair again and the four after it, nothing answered before."""
    items = _items(sample, 3)
    server, out = kill_during_request(scripted, tmp_path, items, 5, ", repeats=3")
    assert sorted((l["id"], l["repeat"]) for l in read_log(out)) == sorted(
        [(i["id"], 0) for i in items] + [(items[0]["id"], 1)]
    )
    summary = run_items(_closed(server), items, out, repeats=3)
    assert (summary.items, summary.skipped, summary.asked) == (9, 4, 5)
    asked = [_question_id(h) for h in server.hits]
    assert asked == ["Q0", "Q1", "Q2", "Q0", "Q1", "Q1", "Q2", "Q0", "Q1", "Q2"]  # only the in-flight pair twice
    by_repeat = load_repeats(out)
    assert sorted(by_repeat) == [0, 1, 2] and all(len(w) == 3 for w in by_repeat.values())
    answers = {line["answer"] for w in by_repeat.values() for line in w.values()}
    assert len(answers) == 9  # each (id, repeat) its own answer


def test_a_cutoff_that_is_not_a_date_fails_naming_the_field():
    assert ModelEndpoint(cutoff="2025-06-30").checked_cutoff() == "2025-06-30"
    assert ModelEndpoint().checked_cutoff() is None
    with pytest.raises(dg.Failure, match="cutoff '30.6.2025' is not an ISO date"):
        ModelEndpoint(cutoff="30.6.2025").checked_cutoff()
