"""The MCP server through the `mcp` client, as an outside agent uses it: a stdio subprocess and a
streamable-HTTP subprocess on a free loopback port, both over the constructed store (R2)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from chpit_assets.pit.tools import TOOL_NAMES, TOOL_SPECS

from .conftest import TODAY

ROOT = Path(__file__).resolve().parents[2]


def _server_args(store, *extra: str) -> list[str]:
    return ["-m", "chpit_assets.pit.mcp_server", "--store", str(store.path), "--today", TODAY.isoformat(), *extra]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def http_url(store) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, *_server_args(store, "--transport", "http", "--port", str(port))],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                pytest.fail(f"MCP HTTP server exited: {proc.stderr.read()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("MCP HTTP server did not listen within 30 s")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(params=["stdio", "http"])
def target(request, store):
    if request.param == "stdio":
        return StdioServerParameters(command=sys.executable, args=_server_args(store, "--transport", "stdio"),
                                     cwd=str(ROOT))
    return request.getfixturevalue("http_url")


def _run(target, body):
    async def main():
        async with Client(target) as client:
            return await body(client)
    return asyncio.run(main())


def _error(result) -> dict:
    assert result.is_error
    text = result.content[0].text
    return json.loads(text[text.index("{"):])["error"]


def test_lists_the_vendored_tools_without_schema_drift(target):
    listed = _run(target, lambda c: c.list_tools()).tools
    assert tuple(t.name for t in listed) == TOOL_NAMES
    for tool, spec in zip(listed, TOOL_SPECS):
        fn = spec["function"]
        assert tool.description == fn["description"]
        assert set(tool.input_schema["properties"]) == set(fn["parameters"]["properties"])
        assert sorted(tool.input_schema.get("required", [])) == sorted(fn["parameters"]["required"])
        for name, prop in fn["parameters"]["properties"].items():
            assert tool.input_schema["properties"][name]["description"] == prop["description"]
        assert tool.output_schema is not None and "act" in tool.output_schema["properties"]
        assert tool.annotations.read_only_hint is True


def test_calls_each_tool_and_gets_the_library_answer(target, tools):
    async def body(c):
        return (
            await c.call_tool("ch_get_act_article", {"sr_number": "999.1", "article_number": "1", "lang": "de",
                                                     "as_of": "2020-05-05"}),
            await c.call_tool("ch_get_act_article", {"sr_number": "999.1", "article_number": "1", "lang": "de"}),
            await c.call_tool("ch_get_act_history", {"sr_number": "999.1", "lang": "de", "article_number": "5a"}),
            await c.call_tool("ch_get_act_text", {"sr_number": "999.1", "lang": "de", "offset": 1, "limit": 2}),
        )
    dated, today, history, text = _run(target, body)
    assert not any(r.is_error for r in (dated, today, history, text))
    # Structured content is exactly what the in-process library returns (the runners' path).
    assert dated.structured_content == tools.ch_get_act_article("999.1", "1", "de", as_of="2020-05-05").to_dict()
    assert dated.structured_content["edition"]["version_id"] == 11
    assert today.structured_content["as_of"] == TODAY.isoformat() and today.structured_content["as_of_defaulted"]
    assert history.structured_content == tools.ch_get_act_history("999.1", "de", "5a").to_dict()
    assert [a["e_id"] for a in text.structured_content["articles"]] == ["art_2", "art_5_a"]   # today: the 2022 edition


def test_errors_come_back_as_structured_tool_errors(target):
    async def body(c):
        return (
            await c.call_tool("ch_get_act_article", {"sr_number": "999.1", "article_number": "1", "lang": "de",
                                                     "as_of": "2021-09-01"}),
            await c.call_tool("ch_get_act_article", {"sr_number": "999.1", "article_number": "1", "lang": "xx"}),
        )
    gap, bad_lang = _run(target, body)
    error = _error(gap)
    assert error["code"] == "no_edition_on_date" and error["next_edition_start"] == "2022-01-01"
    assert bad_lang.is_error and "lang" in bad_lang.content[0].text


def test_refuses_a_missing_store(tmp_path):
    done = subprocess.run([sys.executable, "-m", "chpit_assets.pit.mcp_server", "--store", str(tmp_path / "no.duckdb")],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "no store at" in done.stderr
    assert not (tmp_path / "no.duckdb").exists()
