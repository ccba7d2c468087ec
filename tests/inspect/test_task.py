"""The CH-PiT Inspect task (issue 26): `inspect eval` of every registered mode, against Inspect's mock
model and against a loopback OpenAI-compatible server, gives the verdicts our runner gives on the
same answers; the scorer reports the label shares, the date-sensitive share and the coverages."""

from __future__ import annotations

from collections import Counter

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from chpit_assets.inspect.task import LINE_KEY, chpit_task, model_slug, task_name, verdict_of_score
from chpit_assets.pit.tools import PitTools
from chpit_assets.runs.client import ChatClient, EndpointConfig
from chpit_assets.runs.runner import load_log, run_items
from chpit_assets.runs.systems import ALL_MODES, LOOKUP_MODES, MODEL_MODES, build_system, parse_system_key

from .conftest import TODAY, mock_outputs, openai_responder

SLUG = "m"


def _key(mode: str) -> str:
    return mode if mode in LOOKUP_MODES else f"{SLUG}/{mode}"


def _tasks(data_dir, modes):
    return [
        chpit_task(mode, lang="de,fr", data_dir=str(data_dir.root), today=TODAY.isoformat(), slug=SLUG)
        for mode in modes
    ]


def _runner_lines(data_dir, server, mode, tmp_path) -> dict[str, dict]:
    from chpit_assets.corpus.store import Store

    tools = PitTools(Store(data_dir.root / "chpit.duckdb"), today=TODAY, search_dir=data_dir.root / "search")
    client = ChatClient(EndpointConfig(server.base_url, "scripted-model-1"))
    try:
        system = build_system(_key(mode), tools=tools, clients={SLUG: client})
        path = tmp_path / "runner" / _key(mode) / "x.jsonl"
        run_items(system, data_dir.items, path)
    finally:
        client.close()
    return load_log(path)


def _compare(logs, data_dir, server, tmp_path) -> Counter:
    labels: Counter = Counter()
    assert [log.status for log in logs] == ["success"] * len(logs), [log.error.message for log in logs if log.error]
    for log in logs:
        mode = log.eval.metadata["chpit_mode"]
        ours = _runner_lines(data_dir, server, mode, tmp_path)
        assert sorted(s.id for s in log.samples) == sorted(ours)
        for sample in log.samples:
            line, theirs = sample.metadata[LINE_KEY], ours[sample.id]
            assert line["system_key"] == theirs["system_key"] == _key(mode) and "error" not in line
            assert (line["answer"], line["verdict"]) == (theirs["answer"], theirs["verdict"]), (mode, sample.id)
            assert verdict_of_score(sample.scores["chpit_scorer"]) == theirs["verdict"]
            if parse_system_key(_key(mode)).tool_calls:
                strip = lambda calls: [{k: v for k, v in c.items() if k != "latency_s"} for c in calls]  # noqa: E731
                assert strip(line["tool_calls"]) == strip(theirs["tool_calls"])
            labels[line["verdict"]["label"]] += 1
    return labels


def test_every_mode_is_a_task_named_after_it():
    import chpit_assets.inspect_tasks as tasks

    assert set(tasks.MODE_TASKS) == set(ALL_MODES)
    assert all(callable(getattr(tasks, task_name(mode))) for mode in ALL_MODES)
    assert task_name("agentic+search+verify") == "agentic_search_verify" and task_name("cite/pit") == "cite_pit"
    assert model_slug("openai-api/loop/Qwen3-8B") == "qwen3-8b"


@pytest.mark.slow  # 13 Inspect evals
def test_inspect_eval_on_the_mock_model_gives_our_runners_verdicts(data_dir, scripted, tmp_path):
    server = scripted(openai_responder(data_dir.items))
    model = get_model("mockllm/model", custom_outputs=mock_outputs(data_dir.items))
    logs = inspect_eval(_tasks(data_dir, ALL_MODES), model=model, log_dir=str(tmp_path / "logs"), display="none")
    labels = _compare(logs, data_dir, server, tmp_path)
    # The scripted answers reach every label, so agreeing is not agreeing on one trivial verdict.
    assert set(labels) == {"grounded_correct", "grounded_wrong_version", "ungrounded"}
    oracle = next(log for log in logs if log.eval.metadata["chpit_mode"] == "oracle")
    metrics = {name: m.value for name, m in oracle.results.scores[0].metrics.items()}
    assert metrics["correct"] == 1.0 and metrics["date_sensitive_correct"] == 1.0
    recite = next(log for log in logs if log.eval.metadata["chpit_mode"] == "recite")
    metrics = {name: m.value for name, m in recite.results.scores[0].metrics.items()}
    # recite is wrong exactly on the date-sensitive items: the 4 `before` items of 10 (README).
    assert metrics["date_sensitive_share"] == pytest.approx(0.4) and metrics["date_sensitive_correct"] == 0.0
    assert metrics["correct"] == pytest.approx(0.6) and metrics["wrong_version"] == pytest.approx(0.4)


@pytest.mark.slow  # a server and 8 Inspect evals
@pytest.mark.parametrize("modes", [MODEL_MODES[:4], MODEL_MODES[4:]], ids=["published", "variants"])
def test_inspect_eval_against_a_loopback_endpoint_gives_our_runners_verdicts(data_dir, scripted, tmp_path, modes):
    server = scripted(openai_responder(data_dir.items))
    model = get_model("openai-api/loop/scripted-model-1", base_url=server.base_url, api_key="not-a-key")
    logs = inspect_eval(_tasks(data_dir, modes), model=model, log_dir=str(tmp_path / "logs"), display="none")
    asked_by_inspect = len(server.hits)
    assert asked_by_inspect >= len(data_dir.items) * len(modes)  # every answer came over HTTP
    labels = _compare(logs, data_dir, server, tmp_path)
    assert labels["grounded_correct"] and labels["grounded_wrong_version"]
