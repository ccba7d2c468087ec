"""chpit run logs <-> Inspect `.eval` logs (issue 26): an export imported back is the same file byte
for byte (re-asked items included); an `inspect eval` log of our task imports into data/results/."""

from __future__ import annotations

import json

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import get_model

from chpit_assets.cli import main
from chpit_assets.corpus.store import Store
from chpit_assets.defs.report.assets import collect_scored
from chpit_assets.inspect.logs import InspectLogError, export_run, import_log
from chpit_assets.inspect.task import chpit_task
from chpit_assets.pit.tools import PitTools
from chpit_assets.report.published import report_all
from chpit_assets.runs.client import ChatClient, EndpointConfig
from chpit_assets.runs.runner import load_log, results_path, run_items
from chpit_assets.runs.systems import build_system

from .conftest import TODAY, mock_outputs, openai_responder


def _agentic_run(data_dir, scripted, results_dir) -> tuple:
    """A de agentic+verify run whose first item errored once (HTTP 400) and was asked again."""
    respond, failed = openai_responder(data_dir.items), []
    first = data_dir.items[0]["question"]

    def flaky(body):
        if body["messages"][1]["content"] == first and not failed:
            failed.append(1)
            return 400, {"error": {"message": "bad request"}}
        return respond(body)

    server = scripted(flaky)
    tools = PitTools(Store(data_dir.root / "chpit.duckdb"), today=TODAY, search_dir=data_dir.root / "search")
    path = results_path(results_dir, "m/agentic+verify", "de")
    items = [item for item in data_dir.items if item["lang"] == "de"]
    with ChatClient(EndpointConfig(server.base_url, "scripted-model-1")) as client:
        system = build_system("m/agentic+verify", tools=tools, clients={"m": client})
        run_items(system, items, path)
        run_items(system, items, path)  # resumes: only the errored item is asked again
    run_items(build_system("recite", tools=tools), items, results_path(results_dir, "recite", "de"))
    return path, items


def test_export_then_import_is_identical_line_for_line(data_dir, scripted, tmp_path):
    path, items = _agentic_run(data_dir, scripted, tmp_path / "results")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(items) + 1 and json.loads(lines[0])["error"]  # the re-ask is in the log
    recite = results_path(tmp_path / "results", "recite", "de")
    out = export_run(path, data_dir.root / "build", tmp_path / "x.eval", recite_log=recite)
    log = read_eval_log(str(out))
    first = [s for s in log.samples if s.id == items[0]["id"]]
    assert sorted(s.epoch for s in first) == [1, 2]  # the re-asked item: two epochs
    sample = next(s for s in log.samples if s.id == items[1]["id"])
    assert sample.input == items[1]["question"] and sample.target == items[1]["gold"]["text"]
    assert sample.scores["chpit_scorer"].explanation == json.loads(lines[1])["verdict"]["label"]
    assert any(m.role == "assistant" and m.tool_calls for m in sample.messages)  # the tool calls show
    # The results count each item's winning line (the re-asked item's error-free second line).
    won, recited = load_log(path), load_log(recite)
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert metrics["correct"] == pytest.approx(
        sum(line["verdict"]["label"] == "grounded_correct" for line in won.values()) / len(items)
    )
    hard = [i for i in won if recited[i]["verdict"]["label"] != "grounded_correct"]
    assert len(hard) == 4 and metrics["date_sensitive_share"] == pytest.approx(4 / len(items))
    assert metrics["date_sensitive_correct"] == pytest.approx(
        sum(won[i]["verdict"]["label"] == "grounded_correct" for i in hard) / len(hard)
    )
    written = import_log(out, tmp_path / "back")
    assert written == [results_path(tmp_path / "back", "m/agentic+verify", "de")]
    assert written[0].read_bytes() == path.read_bytes()
    import_log(out, tmp_path / "back")  # twice: nothing changes
    assert written[0].read_bytes() == path.read_bytes()
    # A run without a model crosses the same way.
    out = export_run(recite, data_dir.root / "build", tmp_path / "recite.eval", recite_log=recite)
    assert import_log(out, tmp_path / "back")[0].read_bytes() == recite.read_bytes()


def test_an_import_never_overwrites_other_lines_unasked(data_dir, scripted, tmp_path):
    path, _ = _agentic_run(data_dir, scripted, tmp_path / "results")
    out = export_run(path, data_dir.root / "build", tmp_path / "x.eval")
    target = results_path(tmp_path / "back", "m/agentic+verify", "de")
    target.parent.mkdir(parents=True)
    target.write_text("{}\n", encoding="utf-8")
    with pytest.raises(InspectLogError, match="exists with other lines"):
        import_log(out, tmp_path / "back")
    assert target.read_text(encoding="utf-8") == "{}\n"
    import_log(out, tmp_path / "back", replace=True)
    assert target.read_bytes() == path.read_bytes()


def test_a_log_of_another_task_is_refused_naming_the_sample(tmp_path):
    from inspect_ai import Task
    from inspect_ai.dataset import Sample

    log = inspect_eval(
        Task(dataset=[Sample(id="s1", input="hi", target="x")]),
        model="mockllm/model",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )[0]
    with pytest.raises(InspectLogError, match="sample s1 .*not a CH-PiT task's log"):
        import_log(log.location, tmp_path / "results")


def test_an_inspect_eval_of_our_task_lands_in_our_results(data_dir, tmp_path):
    model = get_model("mockllm/model", custom_outputs=mock_outputs(data_dir.items))
    task = chpit_task("pit", lang="de,fr", data_dir=str(data_dir.root), today=TODAY.isoformat(), slug="m")
    log = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")[0]
    data = tmp_path / "data"
    data.mkdir()
    (data / "build").symlink_to(data_dir.root / "build")
    assert main(["inspect", "import", log.location, "--data-dir", str(data)]) == 0
    by_id = {s.id: s for s in log.samples}
    for lang in ("de", "fr"):
        lines = load_log(results_path(data / "results", "m/pit", lang))
        items = [item for item in data_dir.items if item["lang"] == lang]
        assert sorted(lines) == sorted(item["id"] for item in items)
        assert all(lines[i]["verdict"] == by_id[i].scores["chpit_scorer"].metadata["verdict"] for i in lines)
    # ... and in our report and the published report files, as the report asset collects them.
    scored = collect_scored(data / "results", data / "build")
    assert sorted(line["id"] for line in scored["m/pit"]) == sorted(item["id"] for item in data_dir.items)
    published = report_all(scored)
    de = [s for s in log.samples if s.metadata["item"]["lang"] == "de"]
    correct = sum(s.scores["chpit_scorer"].explanation == "grounded_correct" for s in de)
    assert published["fr"]["m/pit"]["all"]["n"] == 1 and published["de"]["m/pit"]["all"]["n"] == len(de)
    assert published["de"]["m/pit"]["all"]["grounded_correct"] == correct > 0


def test_the_cli_exports_next_to_the_data(data_dir, scripted, tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    (data / "build").symlink_to(data_dir.root / "build")
    path, _ = _agentic_run(data_dir, scripted, data / "results")
    assert main(["inspect", "export", str(path), "--data-dir", str(data)]) == 0
    out = data / "inspect" / "m" / "agentic+verify" / "de.eval"
    assert capsys.readouterr().out.strip() == str(out) and read_eval_log(str(out)).samples
    assert main(["inspect", "export", str(tmp_path / "none.jsonl"), "--data-dir", str(data)]) == 1
