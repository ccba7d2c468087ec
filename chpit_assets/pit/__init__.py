"""Point-in-time tools (R2): `PitTools` over the store, `TOOL_SPECS` + `call_tool` for models,
`resolve_by_act` for the oracle (R1); `mcp_server` serves the same tools over MCP."""

from .tools import (
    TOOL_NAMES,
    TOOL_SPECS,
    ActTextResult,
    ArticleResult,
    DateBeforeFirstEdition,
    HistoryResult,
    InvalidArgument,
    NoEditionInLanguage,
    NoEditionOnDate,
    PitError,
    PitTools,
    UnknownAct,
    UnknownArticle,
    UnknownLanguage,
    UnknownTool,
    call_tool,
)

__all__ = [
    "TOOL_NAMES", "TOOL_SPECS", "ActTextResult", "ArticleResult", "DateBeforeFirstEdition", "HistoryResult",
    "InvalidArgument", "NoEditionInLanguage", "NoEditionOnDate", "PitError", "PitTools", "UnknownAct",
    "UnknownArticle", "UnknownLanguage", "UnknownTool", "call_tool",
]
