"""Fixtures for the Inspect tests: a data folder laid out as ChpitStore expects (the real sample
build and its search index), and one scripted model that answers both as Inspect's mock model and
as a loopback OpenAI-compatible server, so our runner and `inspect eval` can be given the same answers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.runs.conftest import TODAY, build_sample, completion, scripted, tool_call

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class DataDir:
    root: Path
    items: list[dict]  # the core items of de and fr, in that order


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory) -> DataDir:
    from chpit_assets.search.index import build_index

    root = tmp_path_factory.mktemp("data")
    sample = build_sample(root)
    with sample.store.connect(read_only=True) as con:
        for lang in ("de", "fr"):
            build_index(con, lang, root / "search")
    return DataDir(root, sample.items["de"] + sample.items["fr"])


def scripted_reply(items: list[dict], user: str, offered_tools: bool, tool_results: list[str], last: str):
    """What the scripted model says: ("call", arguments) or ("text", answer).

    agentic: first a `ch_get_act_article` call, with the item's date only for `after` items (so the
    `before` ones get today's edition, the wrong version); then the article text the tool returned.
    current/pit: the text between the context tags. closed: the question back (ungrounded)."""
    item = next(i for i in items if user.startswith(i["question"]))
    if offered_tools and not tool_results:
        args = {"sr_number": item["sr_number"], "article": item["article_number"], "lang": item["lang"]}
        if item["kind"] == "after":
            args["as_of"] = item["as_of"]
        return "call", args
    if tool_results:
        result = json.loads(tool_results[-1])
        return "text", (result.get("article") or {}).get("text") or ""
    if "<context>" in last:
        return "text", last.split("<context>\n", 1)[1].rsplit("\n</context>", 1)[0]
    return "text", item["question"]


def openai_responder(items: list[dict]):
    """`scripted_reply` over OpenAI chat-completions request bodies (for tests.runs' ScriptedServer)."""

    def respond(body: dict):
        messages = body["messages"]
        user = next(m["content"] for m in messages if m["role"] == "user")
        results = [m["content"] for m in messages if m["role"] == "tool"]
        kind, value = scripted_reply(items, user, bool(body.get("tools")), results, messages[-1].get("content") or "")
        if kind == "call":
            return 200, completion(tool_calls=[tool_call("ch_get_act_article", value)], finish_reason="tool_calls")
        return 200, completion(value)

    return respond


def mock_outputs(items: list[dict]):
    """`scripted_reply` as the `custom_outputs` callable of Inspect's mockllm/model."""
    from inspect_ai.model import ModelOutput, ModelUsage

    def outputs(input, tools, tool_choice, config):
        user = next(m.text for m in input if m.role == "user")
        results = [m.text for m in input if m.role == "tool"]
        offered = bool(tools) and tool_choice != "none"
        kind, value = scripted_reply(items, user, offered, results, input[-1].text)
        if kind == "call":
            output = ModelOutput.for_tool_call("mockllm/model", "ch_get_act_article", value, tool_call_id="call_1")
        else:
            output = ModelOutput.from_content("mockllm/model", value)
        # Given, so the mock does not count tokens with a tokenizer it would download.
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return output

    return outputs


__all__ = ["TODAY", "ROOT", "DataDir", "mock_outputs", "openai_responder", "scripted"]  # scripted: a fixture
