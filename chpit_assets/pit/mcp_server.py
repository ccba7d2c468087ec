"""The point-in-time tools as an MCP server (`chpit-mcp`, mcp v2 `MCPServer`), over stdio or
streamable HTTP.

    chpit-mcp --transport stdio --store data/chpit.duckdb
    chpit-mcp --transport http --port 8765      # http://127.0.0.1:8765/mcp

The server lists exactly `TOOL_SPECS` (the published names, descriptions and argument schema,
PROTOCOL §5) and answers every call through `call_tool`, the function the agentic runner uses:
the same validation (unknown arguments refused, bounds from the schema), the same response
dict (returned as structured content and as JSON text). A call the store cannot answer
(`{"error": "no_edition_for_date" | "article_not_found", ...}`) and a malformed call (a typed
`BadCall` message) both come back with `is_error`; neither quotes a caller's value beyond a few
dozen characters, and each call logs one line of bounded length (issue 15).

Each call opens its own short read-only connection: holding one for the server's lifetime would
lock the DuckDB file against the pipeline's writers. HTTP is stateless (no MCP session is kept
between requests): the tools hold no state, and the SDK's sessions, capped at 10,000 and idle for
30 minutes before they expire, let clients that never close theirs lock every other client out. HTTP binds 127.0.0.1 unless `--host` says
otherwise; the server has no authentication, so only expose it beyond loopback behind one.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from datetime import date
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, Tool, ToolAnnotations

from chpit_assets.corpus.store import Store

from .errors import BadCall, UnknownTool, clip
from .schema import DESCRIPTIONS, PARAMETERS, SEARCH_ARGUMENTS, TOOL_NAMES
from .tools import PitTools, call_tool

SERVER_NAME = "chpit-pit"
INSTRUCTIONS = (
    "Swiss federal law from Fedlex's consolidated editions, by date. ch_get_act_article returns the "
    "edition in force today unless given as_of (YYYY-MM-DD); ch_get_act_text needs as_of; "
    "ch_get_act_history lists every edition and the per-article changes. Results name the act and the "
    "edition (validity dates) they come from."
)
LOG_ARGUMENTS = 200  # characters of a call's arguments in its log line
LOG_LINE = 1000  # characters of any log line, the SDK's included

log = logging.getLogger("chpit.mcp")
_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


class PitServer(MCPServer):
    """MCPServer whose tool list and calls are `TOOL_SPECS` and `call_tool`: the SDK's own tool
    registry would derive a second schema from function signatures and ignore unknown arguments."""

    def __init__(self, tools: PitTools, names: tuple[str, ...] = TOOL_NAMES):
        super().__init__(SERVER_NAME, instructions=INSTRUCTIONS)
        self.tools = tools
        self.names = names  # the published three; with a search index, ch_search_articles too

    async def list_tools(self) -> list[Tool]:
        return [
            Tool(name=name, description=DESCRIPTIONS[name], input_schema=PARAMETERS[name], annotations=_READ_ONLY)
            for name in self.names
        ]

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        return PARAMETERS.get(name) if name in self.names else None

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> CallToolResult:
        said = clip(arguments, LOG_ARGUMENTS)
        try:
            if name not in self.names:
                raise UnknownTool(f"unknown tool {clip(name)}; tools are {', '.join(self.names)}")
            # DuckDB calls block; a worker thread keeps the event loop serving other requests.
            result = await anyio.to_thread.run_sync(call_tool, self.tools, name, arguments)
        except BadCall as exc:
            log.info("tool %s refused: %s; arguments %s", clip(name), exc.message, said)
            # ToolError reaches the client as is_error with this text (already bounded).
            raise ToolError(f"{type(exc).__name__}: {exc.message}") from None
        miss = "error" in result
        log.info("tool %s %s; arguments %s", name, f"miss: {result['code']}" if miss else "ok", said)
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
            structured_content=result,
            is_error=miss,
        )


class _BoundedLines(logging.Filter):
    """Cuts every record to LOG_LINE characters: the SDK logs a refused call's tool name and error
    text as the caller sent them, and a caller can send a megabyte."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if len(message) > LOG_LINE:
            record.msg, record.args = f"{message[:LOG_LINE]}…({len(message)} chars)", None
        return True


def build_server(tools: PitTools, search: bool = False) -> PitServer:
    return PitServer(tools, TOOL_NAMES + (tuple(SEARCH_ARGUMENTS) if search else ()))


def main(argv: list[str] | None = None) -> None:
    # The docstring's whole first sentence (its first line alone stopped mid-sentence).
    parser = argparse.ArgumentParser(prog="chpit-mcp", description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--store", type=Path, default=Path("data/chpit.duckdb"), help="the DuckDB store")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default loopback only)")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port")
    parser.add_argument(
        "--search-dir",
        type=Path,
        default=None,
        help="the search_index folder (data/search): also serve ch_search_articles (issue 16)",
    )
    parser.add_argument(
        "--today",
        type=date.fromisoformat,
        default=None,
        help="fix the date calls without as_of use (reproducible runs); default: today in Zurich",
    )
    args = parser.parse_args(argv)
    if not args.store.exists():
        # Opening a missing path would silently create an empty store and answer "unknown act" forever.
        parser.exit(2, f"no store at {args.store}; build it first (make run) or pass --store\n")
    # Installed before the server is built, so the SDK's own logging setup (a no-op once the root
    # logger has a handler) leaves this bounded one in place.
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_BoundedLines())
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    server = build_server(
        PitTools(Store(args.store), today=args.today, search_dir=args.search_dir), search=args.search_dir is not None
    )
    if args.transport == "stdio":
        server.run("stdio")
    else:
        print(f"MCP endpoint: http://{args.host}:{args.port}/mcp", file=sys.stderr, flush=True)
        server.run("streamable-http", host=args.host, port=args.port, stateless_http=True)


if __name__ == "__main__":
    main()
