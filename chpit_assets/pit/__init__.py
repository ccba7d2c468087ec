"""Point-in-time tools (R2, PROTOCOL §5): `PitTools` over the store, `TOOL_SPECS` + `call_tool` for
models, `resolve_by_act` for the oracle (R1); `mcp_server` serves the same tools over MCP."""

from .errors import (
    BadCall,
    DateBeforeFirstEdition,
    InvalidArgument,
    NoEditionInLanguage,
    NoEditionOnDate,
    NoSearchIndex,
    PitError,
    ToolMiss,
    UnknownAct,
    UnknownArticle,
    UnknownLanguage,
    UnknownTool,
)
from .keys import article_key, sr_key
from .results import ArticleResult, Carrier, HistoryResult, TextResult
from .schema import SEARCH_TOOL_SPECS, TOOL_NAMES, TOOL_SPECS, validate_arguments
from .tools import PitTools, call_tool

__all__ = [
    "TOOL_NAMES",
    "TOOL_SPECS",
    "ArticleResult",
    "BadCall",
    "Carrier",
    "DateBeforeFirstEdition",
    "HistoryResult",
    "InvalidArgument",
    "NoEditionInLanguage",
    "NoEditionOnDate",
    "NoSearchIndex",
    "PitError",
    "PitTools",
    "SEARCH_TOOL_SPECS",
    "TextResult",
    "ToolMiss",
    "UnknownAct",
    "UnknownArticle",
    "UnknownLanguage",
    "UnknownTool",
    "article_key",
    "call_tool",
    "sr_key",
    "validate_arguments",
]
