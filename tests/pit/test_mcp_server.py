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
from mcp.client.stdio import stdio_client

from chpit_assets.pit import TOOL_NAMES, TOOL_SPECS, call_tool

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
    proc = subprocess.Popen(
        [sys.executable, *_server_args(store, "--transport", "http", "--port", str(port))],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
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
        return StdioServerParameters(
            command=sys.executable, args=_server_args(store, "--transport", "stdio"), cwd=str(ROOT)
        )
    return request.getfixturevalue("http_url")


def _run(target, body):
    async def main():
        async with Client(target) as client:
            return await body(client)

    return asyncio.run(main())


def _error(result) -> dict:
    assert result.is_error
    return json.loads(result.content[0].text)


def test_lists_the_published_tools_exactly(target):
    """The served schema is TOOL_SPECS' (the one the agentic runner offers), so no drift is possible."""
    listed = _run(target, lambda c: c.list_tools()).tools
    assert tuple(t.name for t in listed) == TOOL_NAMES
    for tool, spec in zip(listed, TOOL_SPECS):
        fn = spec["function"]
        assert tool.description == fn["description"]
        assert tool.input_schema == fn["parameters"]
        assert tool.annotations.read_only_hint is True


def test_calls_each_tool_and_gets_the_call_tool_answer(target, tools):
    calls = [
        ("ch_get_act_article", {"sr_number": "999.1", "article": "1", "lang": "de", "as_of": "2020-05-05"}),
        ("ch_get_act_article", {"sr_number": "999.1", "article": "1"}),
        ("ch_get_act_article", {"sr_number": "777", "article": "178", "as_of": "2024-01-01"}),
        ("ch_get_act_history", {"sr_number": "999.1", "article": "5a"}),
        ("ch_get_act_text", {"sr_number": "999.1", "as_of": "2021-03-01", "offset": 10, "max_chars": 30}),
    ]

    async def body(c):
        return [await c.call_tool(name, arguments) for name, arguments in calls]

    results = _run(target, body)
    for (name, arguments), result in zip(calls, results):
        assert not result.is_error, result.content[0].text
        # Exactly what the in-process runner gets for the same call.
        expected = call_tool(tools, name, arguments)
        assert result.structured_content == expected
        assert json.loads(result.content[0].text) == expected
    assert results[1].structured_content["as_of"] == TODAY.isoformat()
    assert results[2].structured_content["article"]["also_carried_by"][0]["occurrence"] == 2
    assert len(results[4].structured_content["text"]) == 30


def test_a_miss_is_the_published_error(target):
    async def body(c):
        return (
            await c.call_tool("ch_get_act_article", {"sr_number": "999.1", "article": "1", "as_of": "2021-09-01"}),
            await c.call_tool("ch_get_act_article", {"sr_number": "999.1", "article": "404"}),
        )

    gap, missing = _run(target, body)
    error = _error(gap)
    assert (error["error"], error["code"], error["next_edition_start"]) == (
        "no_edition_for_date",
        "no_edition_on_date",
        "2022-01-01",
    )
    assert _error(missing)["error"] == "article_not_found"


@pytest.mark.parametrize(
    "name, arguments, says",
    [
        (
            "ch_get_act_text",
            {"sr_number": "999.1", "as_of": "2022-01-01", "max_chars": 10**30},
            "max_chars: Input should be less than or equal to 200000",
        ),
        (
            "ch_get_act_article",
            {"sr_number": "999.1", "article": "1", "article_number": "1"},
            "unknown argument 'article_number'",
        ),
        ("ch_get_act_article", {"sr_number": "999.1", "article": "1", "lang": "xx"}, "lang"),
        ("ch_get_act_history", {"sr_number": "999.1", "as_of": "2022-01-01"}, "unknown argument 'as_of'"),
        ("ch_get_law", {}, "UnknownTool: unknown tool 'ch_get_law'"),
    ],
)
def test_bad_calls_are_refused_with_a_typed_readable_error(target, name, arguments, says):
    result = _run(target, lambda c: c.call_tool(name, arguments))
    assert result.is_error and says in result.content[0].text
    assert result.content[0].text.count("Error") <= 2  # one readable message, not a dump


def test_a_megabyte_argument_is_neither_echoed_nor_logged(store, tmp_path):
    huge = "7" * 1_000_000
    errlog = tmp_path / "stderr.log"
    params = StdioServerParameters(
        command=sys.executable, args=_server_args(store, "--transport", "stdio"), cwd=str(ROOT)
    )

    async def main():
        with errlog.open("w") as err:
            async with Client(stdio_client(params, errlog=err)) as client:
                return [
                    await client.call_tool("ch_get_act_article", arguments)
                    for arguments in (
                        {"sr_number": "999.1", "article": huge},
                        {"sr_number": "999.1", "article": "1", huge: huge},
                        {"sr_number": "999.1", "article": "1", "as_of": huge},
                    )
                ] + [await client.call_tool("ch_" + huge, {})]  # the SDK logs a tool's name itself

    results = asyncio.run(main())
    for result in results:
        assert result.is_error and len(result.content[0].text) < 1000
    log = errlog.read_text()
    assert "refused" in log and len(log) < 10_000  # one bounded line per call
    assert "UnknownTool" in results[-1].content[0].text


def test_refuses_a_missing_store(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "chpit_assets.pit.mcp_server", "--store", str(tmp_path / "no.duckdb")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "no store at" in done.stderr
    assert not (tmp_path / "no.duckdb").exists()


def test_with_a_search_index_the_server_also_serves_ch_search_articles(store, tmp_path):
    """`--search-dir` adds the fourth tool with its schema; without it the published three only, and a
    call to ch_search_articles is refused as an unknown tool."""
    from chpit_assets.pit.schema import SEARCH_TOOL_SPECS
    from chpit_assets.search.index import build_index

    with store.connect(read_only=True) as con:
        build_index(con, "de", tmp_path / "search")
    with_search = StdioServerParameters(
        command=sys.executable,
        cwd=str(ROOT),
        args=_server_args(store, "--transport", "stdio", "--search-dir", str(tmp_path / "search")),
    )

    async def body(c):
        listed = (await c.list_tools()).tools
        found = await c.call_tool("ch_search_articles", {"query": "Art. 1 TG", "as_of": "2020-05-05"})
        return listed, found

    listed, found = _run(with_search, body)
    assert [t.name for t in listed] == [s["function"]["name"] for s in SEARCH_TOOL_SPECS]
    assert listed[-1].input_schema == SEARCH_TOOL_SPECS[-1]["function"]["parameters"]
    hit = json.loads(found.content[0].text)["hits"][0]
    assert (hit["sr_number"], hit["article_number"], hit["version"]["date_applicability"]) == (
        "999.1",
        "1",
        "2020-01-01",
    )
    plain = StdioServerParameters(
        command=sys.executable, args=_server_args(store, "--transport", "stdio"), cwd=str(ROOT)
    )
    refused = _run(plain, lambda c: c.call_tool("ch_search_articles", {"query": "x"}))
    assert refused.is_error and "unknown tool" in refused.content[0].text


def test_help_says_its_whole_first_sentence():
    done = subprocess.run(
        [sys.executable, "-m", "chpit_assets.pit.mcp_server", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert " ".join(done.stdout.split()).count("over stdio or streamable HTTP.") == 1


def test_unclosed_http_sessions_lock_no_client_out(http_url):
    """Issue 23 item 8: clients that initialise and never close used to each hold a session (up to
    10,000, for 30 minutes), after which every client was refused. Stateless: none is kept."""
    import httpx

    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(timeout=10) as http:
        for _ in range(200):
            response = http.post(http_url, json=hello, headers=headers)
            assert response.status_code == 200
            assert "mcp-session-id" not in response.headers  # nothing is held for this client
    assert tuple(t.name for t in _run(http_url, lambda c: c.list_tools()).tools) == TOOL_NAMES
