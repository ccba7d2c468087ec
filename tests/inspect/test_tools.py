"""The point-in-time tools as Inspect tools (issue 26): an Inspect agent of one's own calls them and
reads what our agentic runs read."""

from __future__ import annotations

import json

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import ToolDef

from chpit_assets.corpus.store import Store
from chpit_assets.inspect.task import chpit_scorer, sample_of
from chpit_assets.inspect.tools import chpit_tools
from chpit_assets.pit import SEARCH_TOOL_SPECS, TOOL_SPECS, PitTools, call_tool

from .conftest import TODAY


def _usage(output: ModelOutput) -> ModelOutput:
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)  # no tokenizer download
    return output


def test_an_inspect_agent_reads_what_our_agentic_runs_read(data_dir, tmp_path):
    tools = PitTools(Store(data_dir.root / "chpit.duckdb"), today=TODAY, search_dir=data_dir.root / "search")
    item = next(i for i in data_dir.items if i["kind"] == "before")
    args = {
        "sr_number": item["sr_number"],
        "article": item["article_number"],
        "lang": item["lang"],
        "as_of": item["as_of"],
    }
    calls = iter(
        [
            {"ch_get_act_article": args},
            {"ch_get_act_article": {**args, "article": "99999"}},  # a miss: the tool's error, handed back
            {"ch_search_articles": {"query": "x", "lang": "de"}},  # not offered: Inspect refuses it
        ]
    )

    def outputs(input, tools_offered, tool_choice, config):
        if not any(m.role == "tool" for m in input) or len([m for m in input if m.role == "tool"]) < 3:
            ((name, arguments),) = next(calls).items()
            return _usage(ModelOutput.for_tool_call("mockllm/model", name, arguments, tool_call_id=f"c{len(input)}"))
        first = json.loads(next(m for m in input if m.role == "tool").text)
        return _usage(ModelOutput.from_content("mockllm/model", first["article"]["text"]))

    task = Task(
        dataset=[sample_of(item, True)],
        solver=[use_tools(chpit_tools(tools)), generate()],
        scorer=chpit_scorer(),
    )
    log = inspect_eval(
        task, model=get_model("mockllm/model", custom_outputs=outputs), log_dir=str(tmp_path), display="none"
    )[0]
    sample = log.samples[0]
    replies = [m for m in sample.messages if m.role == "tool"]
    assert json.loads(replies[0].text) == call_tool(tools, "ch_get_act_article", args)
    assert json.loads(replies[1].text) == call_tool(tools, "ch_get_act_article", {**args, "article": "99999"})
    assert "error" in json.loads(replies[1].text) and replies[2].error is not None
    assert sample.scores["chpit_scorer"].explanation == "grounded_correct"  # the dated edition's text
    offered = [ToolDef(t) for t in chpit_tools(tools, SEARCH_TOOL_SPECS)]
    assert [(t.name, t.description) for t in offered] == [
        (s["function"]["name"], s["function"]["description"]) for s in SEARCH_TOOL_SPECS
    ]
    assert len(chpit_tools(tools)) == len(TOOL_SPECS)
