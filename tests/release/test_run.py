"""Issue 24 items 2 and 3: run oracle, recite and a scripted-endpoint model on a release's core with
the published contexts, and report beside the published rows."""

from __future__ import annotations

import json

import pytest

from chpit_assets.release import ReleaseError, open_release, pull
from chpit_assets.release.report import rescore_check, write_release_report
from chpit_assets.release.run import CHPIT, PUBLISHED_CACHE, run_release
from chpit_assets.runs.client import EndpointConfig
from chpit_assets.runs.runner import read_log

from .conftest import REPO, completion
from .factory import REVISION, build_release


def _context(body: dict) -> str:
    user = body["messages"][-1]["content"]
    return user.split("<context>\n", 1)[1].rsplit("\n</context>", 1)[0] if "<context>" in user else ""


def test_oracle_recite_and_a_model_on_a_pulled_release_then_one_report(hub, root, scripted):
    release = pull(REPO, REVISION, root)
    # The scripted model copies its context: pit then scores exactly as well as the context is right.
    server = scripted(lambda body: (200, completion(_context(body) or "Keine Ahnung.")))
    endpoints = {"echo": EndpointConfig(server.base_url, "vendor/echo-1")}
    run = run_release(f"release:{REVISION}", ["oracle", "recite", "echo/pit"], root, endpoints=endpoints)
    assert run.release == release and {s.items for s in run.summaries} == {4}

    oracle = read_log(release.results_dir / "oracle" / "de.jsonl")
    assert {l["verdict"]["label"] for l in oracle} == {"grounded_correct"} and len(oracle) == 4
    recite = read_log(release.results_dir / "recite" / "de.jsonl")
    pit = read_log(release.results_dir / "echo" / "pit" / "de.jsonl")
    # 2 of the 4 core items per language have their calls in the published cache; without a
    # corpus of ours the other two are errors that name the call.
    for lines in (recite, pit):
        assert [l["context_source"] for l in lines] == [PUBLISHED_CACHE] * 2 + [CHPIT] * 2
        assert ["error" in l for l in lines] == [False, False, True, True]
        assert "no published result for ch_get_act_article" in lines[2]["error"]
    assert [l["verdict"]["label"] for l in pit[:2]] == ["grounded_correct"] * 2
    assert pit[0]["system"] == "echo-1/pit" and len(server.hits) == 3 * 2  # the misses never reach the model
    assert not (root / "results").exists()  # apart from our build's results
    run_report = json.loads((release.report_dir / "run-report-pit.json").read_text())
    assert list(run_report["actual"]) == ["vendor/echo-1"]  # PROTOCOL §8: keyed by the model slug
    assert (run_report["actual"]["vendor/echo-1"]["answered"], run_report["actual"]["vendor/echo-1"]["errors"]) == (
        6,
        6,
    )
    assert json.loads((release.report_dir / "run-report-recite.json").read_text())["actual"]["recite"]["items"] == 12

    paths = write_release_report(release)
    report = json.loads(paths["report-all.json"].read_text())
    assert list(report["de"]) == ["echo-1/pit", "oracle/oracle", "recite/recite"]  # published rows kept
    summary = paths["summary.md"].read_text().splitlines()
    assert [row.split(" | ")[0].lstrip("| ") for row in summary[2:]] == ["recite/recite", "echo-1/pit"]
    assert json.loads(paths["rescore.json"].read_text()) == {
        "reproduced": True,
        "differing_numbers": [],
        "differing_items": [],
        "not_in_published": ["de/oracle/oracle", "fr/oracle/oracle", "it/oracle/oracle"],
    }
    versus = json.loads(paths["ours-vs-published.json"].read_text())
    assert set(versus) == {"oracle", "recite"} and versus["oracle"] == []
    assert [d["ours"] for d in versus["recite"]] == ["ungrounded"] * 6  # the two errored items per language


def test_a_tampered_release_is_refused_before_anything_is_asked(tmp_path, root, scripted):
    folder = tmp_path / "other"
    build_release(folder)
    (folder / "data/it/full-00000.parquet").unlink()
    server = scripted(lambda body: (200, completion("x")))
    endpoints = {"echo": EndpointConfig(server.base_url, "vendor/echo-1")}
    with pytest.raises(ReleaseError) as err:
        run_release(f"release-dir:{folder}", ["oracle", "echo/closed"], root, endpoints=endpoints)
    assert err.value.file == "data/it/full-00000.parquet"
    assert not server.hits and not (open_release(f"release-dir:{folder}", root).results_dir).exists()


def test_rescoring_lists_the_item_whose_published_verdict_our_scorer_does_not_give(tmp_path, root):
    folder = tmp_path / "other"
    build_release(folder)
    path = folder / f"results/{REVISION}/results-recite-recite.jsonl"
    lines = [json.loads(l) for l in path.read_text().splitlines()]
    lines[0]["verdict"]["label"] = "grounded_wrong_version"  # what the published file says
    path.write_text("".join(json.dumps(l, ensure_ascii=False) + "\n" for l in lines))
    check = rescore_check(open_release(f"release-dir:{folder}", root))
    assert check["differing_items"] == [
        {
            "system": "recite/recite",
            "id": lines[0]["id"],
            "published": "grounded_wrong_version",
            "ours": "grounded_correct",
        }
    ]
    assert check["reproduced"] is True  # report-all.json was written from the untouched verdicts


def test_rescoring_names_every_number_our_scorer_does_not_reproduce(tmp_path, root):
    folder = tmp_path / "other"
    build_release(folder)
    path = folder / f"results/{REVISION}/report-all.json"
    report = json.loads(path.read_text())
    report["fr"]["recite/recite"]["all"]["grounded_correct"] += 1
    path.write_text(json.dumps(report))
    check = rescore_check(open_release(f"release-dir:{folder}", root))
    assert (check["reproduced"], check["differing_numbers"], check["differing_items"]) == (
        False,
        ["/fr/recite/recite/all/grounded_correct"],
        [],
    )


def test_a_closed_run_on_a_release_asks_the_item_text(tmp_path, root, scripted):
    folder = tmp_path / "other"
    cores = build_release(folder)
    server = scripted(lambda body: (200, completion("1 Nichts.")))
    run_release(
        f"release-dir:{folder}",
        ["echo/closed"],
        root,
        endpoints={"echo": EndpointConfig(server.base_url, "vendor/echo-1")},
        limit=1,
    )
    asked = [hit["messages"][-1]["content"] for hit in server.hits]
    assert asked == [cores[lang][0]["question"] for lang in ("de", "fr", "it")]


def test_means_are_summed_in_the_published_logs_order_so_they_reproduce_bit_for_bit():
    """Three coverages whose float sum depends on the order: the file order's bits are kept."""
    from chpit_assets.report.published import report_all

    def line(i: str, cov: float) -> dict:
        verdict = {"label": "ungrounded", "gold_coverage": cov, "distractor_coverage": 0.0}
        return {"id": i, "lang": "de", "kind": "after", "gold_is_current": True, "verdict": verdict}

    lines = [line("c", 0.1), line("a", 0.2), line("b", 0.3)]
    in_file = report_all({"recite": lines}, file_order=True)["de"]["recite/recite"]["all"]["mean_gold_coverage"]
    by_id = report_all({"recite": lines})["de"]["recite/recite"]["all"]["mean_gold_coverage"]
    assert in_file == (0.1 + 0.2 + 0.3) / 3 and by_id == (0.2 + 0.3 + 0.1) / 3 and in_file != by_id


def test_the_cache_finds_a_call_whatever_the_key_s_json_escaping(tmp_path, root):
    from chpit_assets.release.run import PublishedContexts

    folder = tmp_path / "other"
    build_release(folder, cached=0)
    arguments = {"sr_number": "220", "article": "336a", "lang": "fr", "as_of": "2020-01-01"}
    key = json.dumps(["ch_get_act_article", {**arguments, "article": "336a — bis"}], sort_keys=True)  # \\u2014
    (folder / f"results/{REVISION}/mcp-cache.jsonl").write_text(json.dumps({"key": key, "result": {"x": 1}}) + "\n")
    contexts = PublishedContexts(open_release(f"release-dir:{folder}", root))
    assert contexts.call_tool(None, "ch_get_act_article", {**arguments, "article": "336a — bis"}) == {"x": 1}
    assert contexts.take_source() == PUBLISHED_CACHE
    with pytest.raises(ReleaseError, match="no published result for ch_get_act_article"):
        contexts.call_tool(None, "ch_get_act_article", arguments)


def test_a_published_report_without_the_hard_from_split_is_still_reproduced(tmp_path, root):
    folder = tmp_path / "other"
    build_release(folder)
    path = folder / f"results/{REVISION}/report-all.json"
    report = json.loads(path.read_text())
    for systems in (v for k, v in report.items() if k != "tools"):
        for parts in systems.values():
            for stats in parts.values():
                for key in [k for k in stats if "recite_" in k]:
                    del stats[key]
    path.write_text(json.dumps(report))
    assert rescore_check(open_release(f"release-dir:{folder}", root))["reproduced"] is True
