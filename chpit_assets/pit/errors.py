"""Typed errors of the point-in-time tools.

Two families, because the agentic loop treats them differently (PROTOCOL §5):
- `ToolMiss`: a well-formed call the store cannot answer (no edition on the date, no such
  article). `call_tool` returns it as the published `{"error": "no_edition_for_date" |
  "article_not_found"}` plus our `code`, `message` and context beside it; the model reads it.
- `BadCall`: the call itself is wrong (unknown tool, unknown/missing/out-of-bounds argument).
  `call_tool` raises it; the loop reports `{"error": "{Type}: {msg}"}` to the model.
Every message names what it is about (SR number, act, article, language, date) and quotes
caller-supplied values only clipped (`clip`), so a 1 MB argument never reaches a log or reply.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from datetime import date
from typing import Any, ClassVar

CLIP = 60  # characters of a caller-supplied value quoted in a message


def clip(value: Any, limit: int = CLIP) -> str:
    """`repr(value)`, cut to `limit` characters with the full length said."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}…({len(text)} chars)"


def jsonable(value: Any) -> Any:
    """Plain JSON types: dataclasses as dicts, dates as ISO strings."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


class PitError(Exception):
    """A tool call that cannot be answered; `context` names the SR number/act, article, lang and date."""

    code: ClassVar[str] = "pit_error"

    def __init__(self, message: str, **context: Any):
        super().__init__(message)
        self.message = message
        self.context = context


class BadCall(PitError):
    """The call is malformed: raised by `call_tool`, never returned."""


class InvalidArgument(BadCall, ValueError):
    code = "invalid_argument"


class UnknownTool(BadCall):
    code = "unknown_tool"


class UnknownLanguage(InvalidArgument):
    code = "unknown_language"


class ToolMiss(PitError):
    """A well-formed call with no answer in the store: returned by `call_tool` as a dict."""

    published: ClassVar[str]  # the published `error` value (PROTOCOL §5)

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.published, "code": self.code, "message": self.message, **jsonable(self.context)}


class NoSearchIndex(ToolMiss):
    """ch_search_articles without a built search_index for the language (not a published tool)."""

    published = "no_search_index"
    code = "no_search_index"


class UnknownAct(ToolMiss):
    # The published tool knows only two misses; an SR number with no act has no edition on any date.
    published = "no_edition_for_date"
    code = "unknown_act"


class NoEditionInLanguage(ToolMiss):
    """The act exists but has no parsed edition in this language."""

    published = "no_edition_for_date"
    code = "no_edition_in_language"


class DateBeforeFirstEdition(ToolMiss):
    published = "no_edition_for_date"
    code = "date_before_first_edition"


class NoEditionOnDate(ToolMiss):
    """The date falls in a gap between parsed editions or after the last one ended."""

    published = "no_edition_for_date"
    code = "no_edition_on_date"


class UnknownArticle(ToolMiss):
    published = "article_not_found"
    code = "unknown_article"
