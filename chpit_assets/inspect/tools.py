"""The point-in-time tools as Inspect tools, for agents of one's own (`use_tools(chpit_tools(tools))`,
`react(tools=chpit_tools(tools))`): the published names, descriptions and schemas (R2, PROTOCOL §5),
executed by `call_tool` and answered as our agentic runs answer them (errors handed back as
`{"error": ...}`, results cut at 12,000 characters). CH-PiT's own tasks run our agentic loop instead,
which offers the same definitions (bridge.tool_infos)."""

from __future__ import annotations

import anyio.to_thread
from inspect_ai.tool import Tool, ToolDef, ToolParams

from chpit_assets.pit import TOOL_SPECS, call_tool
from chpit_assets.runs.systems import run_tool


def chpit_tools(tools, specs: list[dict] = TOOL_SPECS) -> list[Tool]:
    """One Inspect tool per spec (the published three; `SEARCH_TOOL_SPECS` adds `ch_search_articles`)."""
    offered = [spec["function"]["name"] for spec in specs]
    return [_tool(tools, spec["function"], offered) for spec in specs]


def _tool(tools, function: dict, offered: list[str]) -> Tool:
    name = function["name"]

    async def execute(**arguments) -> str:
        _, content = await anyio.to_thread.run_sync(lambda: run_tool(call_tool, tools, name, arguments, offered))
        return content

    parameters = ToolParams.model_validate(function["parameters"])
    return ToolDef(execute, name=name, description=function["description"], parameters=parameters).as_tool()
