"""The point-in-time tools as an MCP server (mcp v2 `MCPServer`), over stdio or streamable HTTP.

    python -m chpit_assets.pit.mcp_server --transport stdio --store data/chpit.duckdb
    python -m chpit_assets.pit.mcp_server --transport http --port 8765      # http://127.0.0.1:8765/mcp

The tools are `PitTools`' own methods behind thin typed wrappers: descriptions come from
`TOOL_SPECS` (the vendored English text the agentic runner offers models), results are the
library's dataclasses (published as each tool's output schema, returned as structured content),
and a call that cannot be answered returns `is_error` with the library's structured error as JSON
text. So an outside agent and the in-process runner see the same tool.

Each call opens its own short read-only connection: holding one for the server's lifetime would
lock the DuckDB file against the pipeline's writers. HTTP binds 127.0.0.1 unless `--host` says
otherwise; the server has no authentication, so only expose it beyond loopback behind one.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from chpit_assets.corpus.store import Store

from .tools import (
    TOOL_SPECS,
    ActTextResult,
    ArticleResult,
    HistoryResult,
    PitError,
    PitTools,
)

SERVER_NAME = "chpit-pit"
INSTRUCTIONS = (
    "Swiss federal law from Fedlex's consolidated editions, by date. Every tool defaults to the edition "
    "in force today; pass as_of (YYYY-MM-DD) for the wording in force on another date. Results name the "
    "act (act_id, abbreviation, ELI) and the edition (validity dates) they come from."
)

_PARAMS = {s["function"]["name"]: s["function"]["parameters"]["properties"] for s in TOOL_SPECS}
_DESCRIPTIONS = {s["function"]["name"]: s["function"]["description"] for s in TOOL_SPECS}
Lang = Literal["de", "fr", "it", "en", "rm"]
T = TypeVar("T")


def _doc(tool: str, param: str) -> Any:
    return Field(description=_PARAMS[tool][param]["description"])


def _answer(fn: Callable[..., T], **arguments: Any) -> T:
    try:
        return fn(**{k: v for k, v in arguments.items() if v is not None})
    except PitError as exc:
        # ToolError reaches the client as is_error with this text; the JSON keeps it machine-readable.
        raise ToolError(json.dumps(exc.to_dict(), ensure_ascii=False)) from exc


def build_server(tools: PitTools) -> MCPServer:
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS)
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

    def ch_get_act_article(
        sr_number: Annotated[str, _doc("ch_get_act_article", "sr_number")],
        article_number: Annotated[str, _doc("ch_get_act_article", "article_number")],
        lang: Annotated[Lang, _doc("ch_get_act_article", "lang")],
        as_of: Annotated[date | None, _doc("ch_get_act_article", "as_of")] = None,
    ) -> ArticleResult:
        return _answer(tools.ch_get_act_article, sr_number=sr_number, article_number=article_number, lang=lang,
                       as_of=as_of)

    def ch_get_act_history(
        sr_number: Annotated[str, _doc("ch_get_act_history", "sr_number")],
        lang: Annotated[Lang, _doc("ch_get_act_history", "lang")],
        article_number: Annotated[str | None, _doc("ch_get_act_history", "article_number")] = None,
    ) -> HistoryResult:
        return _answer(tools.ch_get_act_history, sr_number=sr_number, lang=lang, article_number=article_number)

    def ch_get_act_text(
        sr_number: Annotated[str, _doc("ch_get_act_text", "sr_number")],
        lang: Annotated[Lang, _doc("ch_get_act_text", "lang")],
        as_of: Annotated[date | None, _doc("ch_get_act_text", "as_of")] = None,
        offset: Annotated[int, Field(ge=0, description=_PARAMS["ch_get_act_text"]["offset"]["description"])] = 0,
        limit: Annotated[int | None, Field(ge=1, description=_PARAMS["ch_get_act_text"]["limit"]["description"])]
        = None,
    ) -> ActTextResult:
        return _answer(tools.ch_get_act_text, sr_number=sr_number, lang=lang, as_of=as_of, offset=offset,
                       limit=limit)

    for fn in (ch_get_act_article, ch_get_act_history, ch_get_act_text):
        server.add_tool(fn, description=_DESCRIPTIONS[fn.__name__], annotations=read_only, structured_output=True)
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m chpit_assets.pit.mcp_server", description=__doc__.split("\n")[0])
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--store", type=Path, default=Path("data/chpit.duckdb"), help="the DuckDB store")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default loopback only)")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port")
    parser.add_argument("--today", type=date.fromisoformat, default=None,
                        help="fix the date calls without as_of use (reproducible runs); default: today in Zurich")
    args = parser.parse_args(argv)
    if not args.store.exists():
        # Opening a missing path would silently create an empty store and answer "unknown act" forever.
        parser.exit(2, f"no store at {args.store}; build it first (make run) or pass --store\n")
    server = build_server(PitTools(Store(args.store), today=args.today))
    if args.transport == "stdio":
        server.run("stdio")
    else:
        print(f"MCP endpoint: http://{args.host}:{args.port}/mcp", file=sys.stderr, flush=True)
        server.run("streamable-http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
