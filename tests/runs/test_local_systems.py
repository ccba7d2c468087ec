"""closed / current / pit against the REAL local SmolLM2-135M server (R1, R1b), offline.

A 135M model does not quote Swiss law; what is tested is the run itself: the verbatim prompts, the
context each mode hands over (by hash), what the line records, and that every answer gets scored.
The answer budget is small to keep the tests quick (the runs' default is 8192)."""

from __future__ import annotations

import pytest

from chpit_assets.runs.client import ChatClient, EndpointConfig
from chpit_assets.runs.errors import ToolCallsUnsupportedError
from chpit_assets.runs.receipts import sha256_json
from chpit_assets.runs.runner import load_log, prepare_system, run_items
from chpit_assets.runs.systems import (
    CLOSED_SYSTEM_PROMPT,
    CONTEXT_SYSTEM_PROMPT,
    build_system,
)

LABELS = {"grounded_correct", "grounded_wrong_version", "ungrounded"}


@pytest.fixture
def client(local_model):
    config = EndpointConfig(f"{local_model.base_url}/v1", local_model.model, max_tokens=16, retry_max_tokens=16)
    with ChatClient(config) as c:
        yield c


def _before_item(sample):
    """PublG Art. 14 as of 2022-06-30: gold = the 2018 edition, today's edition = the distractor."""
    return next(i for i in sample.items["de"] if i["e_id"] == "art_14" and i["kind"] == "before")


@pytest.mark.parametrize("mode, context_side", [("closed", None), ("current", "distractor"), ("pit", "gold")])
def test_model_modes_run_for_real(mode, context_side, sample, tools, client, local_model, tmp_path):
    item = _before_item(sample)
    system = build_system(f"smollm2-135m/{mode}", tools=tools, clients={"smollm2-135m": client})
    summary = run_items(system, [item], tmp_path / f"{mode}.jsonl")
    line = load_log(tmp_path / f"{mode}.jsonl")[item["id"]]
    assert summary.errors == 0 and "error" not in line, line.get("error")
    assert isinstance(line["answer"], str) and line["verdict"]["label"] in LABELS
    assert line["model"] == local_model.model and line["provider"] == "127.0.0.1"
    assert line["output_tokens"] > 0 and line["call_log"][0]["max_tokens"] == 16
    receipt = line["receipt"]
    if context_side is None:
        expected = [{"role": "system", "content": CLOSED_SYSTEM_PROMPT}, {"role": "user", "content": item["question"]}]
        assert receipt["context_sha256"] == []
    else:
        text = item[context_side]["text"]
        expected = [
            {"role": "system", "content": CONTEXT_SYSTEM_PROMPT},
            {"role": "user", "content": f"{item['question']}\n\n<context>\n{text}\n</context>"},
        ]
        assert receipt["context_sha256"] == [receipt[f"{context_side}_sha256"]]
    assert receipt["prompt_sha256"] == sha256_json(expected)
    assert receipt["settings"]["model"] == local_model.model and receipt["settings"]["temperature"] == 0


def test_two_workers_answer_every_item_once(sample, tools, client, tmp_path):
    items = sample.items["de"][:3]
    system = build_system("smollm2-135m/closed", tools=tools, clients={"smollm2-135m": client})
    summary = run_items(system, items, tmp_path / "c.jsonl", workers=2)
    assert summary.asked == 3 and summary.errors == 0
    assert len((tmp_path / "c.jsonl").read_text().splitlines()) == 3


def test_an_agentic_run_on_the_local_model_is_refused_by_the_tool_call_probe(sample, tools, local_model):
    """Issue 14 item 5: llama.cpp's SmolLM2 template drops `tools`, so the probe finds no tool call
    and the run is refused before any item is asked, saying why."""
    config = EndpointConfig(f"{local_model.base_url}/v1", local_model.model, max_tokens=16, retry_max_tokens=16)
    with pytest.raises(ToolCallsUnsupportedError, match="returned no tool call for a trivial tool"):
        prepare_system("smollm2-135m/agentic", sample.items["de"][:1], tools=tools, endpoints={"smollm2-135m": config})
