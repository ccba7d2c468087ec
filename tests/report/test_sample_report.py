"""The published report files on the real sample: oracle and recite run through Dagster, then the
report asset writes report-all.json, results-tables.md and summary.md next to our report files.
The expected numbers are derived from the scored lines the runs wrote, not typed in."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from chpit_assets.report import results_tables, summary
from chpit_assets.report.collect import collect_scored
from tests.dagster_defs import defs_for, run_benchmark
from tests.runs.conftest import TODAY, build_sample

RUN_CONFIG = {
    "resources": {"runs": {"config": {"today": TODAY.isoformat()}}},
    "loggers": {"console": {"config": {"log_level": "WARNING"}}},
}
LANGS = ("de", "fr")
PUBLISHED = ("report-all.json", "results-tables.md", "summary.md")


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory) -> tuple[Path, dg.DagsterInstance]:
    root = tmp_path_factory.mktemp("report-sample")
    build_sample(root)
    with dg.instance_for_test() as instance:
        assert run_benchmark(defs_for(root), instance, ("oracle", "recite"), LANGS, RUN_CONFIG, echo=lambda s: None)
        yield root, instance


def test_report_asset_writes_the_published_files_beside_ours(sample_run):
    root, instance = sample_run
    report_dir = root / "report"
    assert {p.name for p in report_dir.iterdir()} >= {"report.md", "report.json", "report.html", *PUBLISHED}
    report = json.loads((report_dir / "report-all.json").read_text(encoding="utf-8"))
    scored = collect_scored(root / "results", root / "build")
    langs_run = sorted({line["lang"] for lines in scored.values() for line in lines})
    assert langs_run and list(report) == [*langs_run, "tools"] and report["tools"] == {}
    for lang in langs_run:
        assert list(report[lang]) == ["oracle/oracle", "recite/recite"]
        oracle = report[lang]["oracle/oracle"]["all"]
        n = sum(line["lang"] == lang for line in scored["oracle"])
        assert (oracle["n"], oracle["errors"], oracle["score"], oracle["share_correct"]) == (n, 0, 1.0, 1.0)
        # recite is wrong exactly on the hard items, by definition of the split
        rec = report[lang]["recite/recite"]["all"]
        labels = [line["verdict"]["label"] for line in scored["recite"] if line["lang"] == lang and "error" not in line]
        assert rec["n_recite_hard"] == sum(label != "grounded_correct" for label in labels)
        assert (rec["correct_recite_hard"], rec["share_correct_recite_easy"]) == (
            0,
            1.0 if rec["n_recite_easy"] else 0.0,
        )
        assert oracle["n_recite_hard"] == rec["n_recite_hard"] and oracle["share_correct_recite_hard"] == (
            1.0 if rec["n_recite_hard"] else 0.0
        )
        after, before = report[lang]["oracle/oracle"]["after"], report[lang]["oracle/oracle"]["before"]
        assert after["n"] + before["n"] == n
    assert (report_dir / "results-tables.md").read_text(encoding="utf-8") == results_tables(report)
    text = (report_dir / "summary.md").read_text(encoding="utf-8")
    assert text == summary(report)
    assert [row.split(" | ")[0] for row in text.splitlines()[2:]] == ["| recite/recite"]  # no oracle row

    [event] = instance.get_latest_materialization_events([dg.AssetKey("report")]).values()
    meta = event.asset_materialization.metadata
    assert meta["summary"].value == text
    assert {meta[f"path_{n.replace('-', '_').replace('.', '_')}"].value for n in PUBLISHED} == {
        str(report_dir / n) for n in PUBLISHED
    }


def test_rematerialising_the_report_gives_the_same_bytes(sample_run):
    root, instance = sample_run
    before = {n: (root / "report" / n).read_bytes() for n in PUBLISHED}
    job = defs_for(root).resolve_implicit_global_asset_job_def()
    assert job.execute_in_process(
        instance=instance,
        asset_selection=[dg.AssetKey("report")],
        run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},
    ).success
    assert {n: (root / "report" / n).read_bytes() for n in PUBLISHED} == before
