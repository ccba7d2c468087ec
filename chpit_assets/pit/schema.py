"""The three tools' arguments, as ONE pydantic model per tool (PROTOCOL §5).

The models validate every call (`validate_arguments`). What a model is shown is the published
list itself, vendored as `published-tools.json` and sent as it is, key order included
(`TOOL_SPECS`, PROTOCOL §5): the schema is protocol data, and its size is part of the agentic
prompt. Names, types, defaults, required fields and descriptions of the models are the published
ones (a test derives the advertised schema from them and compares it with the vendored file, so
the two cannot drift; R2 in §9: only `ch_get_act_article` defaults to today, `ch_get_act_text`
requires `as_of`, history has none). We add bounds (string lengths, offset/max_chars ranges) and
refuse unknown arguments, so a hostile or confused caller gets a clear error instead of a silent
default or a huge echo (issue 15); the bounds are enforced here, never advertised.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import InvalidArgument, UnknownTool, clip

# Bounds. SR numbers are at most ~12 characters ("0.142.112.681"), article numbers ~12 ("268a
# quinquies"); twice that leaves room for a prefix like "SR " or "Art. ".
MAX_SR = 32
MAX_ARTICLE = 32
MAX_DATE = 10  # YYYY-MM-DD exactly
MAX_CHARS = 200_000  # published: "Maximum characters returned (up to 200000)"
MAX_OFFSET = 100_000_000  # far beyond the largest act (SR 220 is ~2 MB of XML)
MAX_REASONS = 5
MAX_QUERY = 2000
MAX_LIMIT = 50

PublishedLang = Literal["de", "fr", "it"]  # served to models; the Python API also takes en/rm

_SR = Field(description="SR number of the act, e.g. '220'", min_length=1, max_length=MAX_SR)


class _Args(BaseModel):
    # forbid: an unknown argument is an error, never ignored (issue 15); numbers a model sends for
    # a string field ("article": 24) are read as their decimal text.
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    @field_validator("offset", "max_chars", mode="before", check_fields=False)
    @classmethod
    def _no_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):  # JSON true is not a number, though Python says int
            raise ValueError("must be a number, not a boolean")
        return value


class ArticleArgs(_Args):
    sr_number: str = _SR
    article: str = Field(description="Article number, e.g. '336' or '336a'", min_length=1, max_length=MAX_ARTICLE)
    lang: PublishedLang = Field("de", description="Language of the edition")
    as_of: str | None = Field(
        None, description="Date (YYYY-MM-DD) the edition must be in force on; default: today", max_length=MAX_DATE
    )


class HistoryArgs(_Args):
    sr_number: str = _SR
    article: str | None = Field(
        None, description="Article number to filter the change list to, e.g. '336a'", max_length=MAX_ARTICLE
    )
    lang: PublishedLang = Field("de", description="Language of the editions")


class TextArgs(_Args):
    sr_number: str = _SR
    as_of: str = Field(description="Date (YYYY-MM-DD) the edition must be in force on", max_length=MAX_DATE)
    lang: PublishedLang = Field("de", description="Preferred language of the edition")
    offset: int = Field(
        0, description="Character offset for paging", ge=0, le=MAX_OFFSET, json_schema_extra={"type": "number"}
    )
    max_chars: int = Field(
        50000,
        description="Maximum characters returned (up to 200000)",
        ge=1,
        le=MAX_CHARS,
        json_schema_extra={"type": "number"},
    )


class SearchArgs(_Args):
    """`ch_search_articles` (issue 16): not a published tool; offered only in the search tool set."""

    query: str = Field(
        description="Words, a quoted phrase or a citation such as 'Art. 24 DSG'", min_length=1, max_length=MAX_QUERY
    )
    lang: PublishedLang = Field("de", description="Language of the editions")
    as_of: str | None = Field(
        None, description="Date (YYYY-MM-DD) the editions must be in force on; default: today", max_length=MAX_DATE
    )
    sr_number: str | None = Field(None, description="Restrict to one act, e.g. '220'", max_length=MAX_SR)
    limit: int = Field(
        10,
        description=f"Maximum number of articles returned (1 to {MAX_LIMIT})",
        ge=1,
        le=MAX_LIMIT,
        json_schema_extra={"type": "number"},
    )


PUBLISHED_TOOLS_FILE = Path(__file__).with_name("published-tools.json")
# The exact list the published agentic runs sent (PROTOCOL §5), byte for byte the spec's file.
TOOL_SPECS: list[dict[str, Any]] = json.loads(PUBLISHED_TOOLS_FILE.read_text(encoding="utf-8"))

DESCRIPTIONS = {
    **{spec["function"]["name"]: spec["function"]["description"] for spec in TOOL_SPECS},
    "ch_search_articles": (
        "Search the articles of Swiss federal acts (Fedlex) in the editions in force on a date; without as_of, "
        "the editions in force today. Response: {query, lang, as_of, hits: [{sr_number, abbreviation, "
        "article_number, e_id, heading, version{version_id, date_applicability, date_end_applicability}, "
        "snippet}]}, best first."
    ),
}

ARGUMENTS: dict[str, type[_Args]] = {
    "ch_get_act_article": ArticleArgs,
    "ch_get_act_history": HistoryArgs,
    "ch_get_act_text": TextArgs,
}
TOOL_NAMES: tuple[str, ...] = tuple(ARGUMENTS)
# The search tool set adds this to the published three; TOOL_SPECS stays exactly the published protocol.
SEARCH_ARGUMENTS: dict[str, type[_Args]] = {"ch_search_articles": SearchArgs}
_ALL_ARGUMENTS = {**ARGUMENTS, **SEARCH_ARGUMENTS}


# Enforced by the models, not part of the published schema (PROTOCOL §5: bounds are not advertised).
_BOUNDS = ("minLength", "maxLength", "minimum", "maximum")


def advertised_parameters(model: type[_Args]) -> dict[str, Any]:
    """The model's JSON schema in the published shape: no pydantic titles, `str | None` as a plain
    optional string, no `default: null`, no bounds and no `additionalProperties`."""
    schema = model.model_json_schema()
    properties = {}
    for name, prop in schema["properties"].items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        if "anyOf" in prop:
            branch = next(b for b in prop.pop("anyOf") if b.get("type") != "null")
            prop = {**branch, **prop}
        if "default" in prop and prop["default"] is None:
            del prop["default"]
        properties[name] = {k: v for k, v in prop.items() if k not in _BOUNDS}
    return {"type": "object", "properties": properties, "required": schema.get("required", [])}


PARAMETERS: dict[str, dict[str, Any]] = {
    **{spec["function"]["name"]: spec["function"]["parameters"] for spec in TOOL_SPECS},
    **{name: advertised_parameters(model) for name, model in SEARCH_ARGUMENTS.items()},
}
SEARCH_TOOL_SPECS: list[dict[str, Any]] = TOOL_SPECS + [
    {"type": "function", "function": {"name": name, "description": DESCRIPTIONS[name], "parameters": PARAMETERS[name]}}
    for name in SEARCH_ARGUMENTS
]


def _reason(error: Mapping[str, Any]) -> str:
    where = ".".join(str(part) for part in error["loc"]) or "arguments"
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"unknown argument {clip(where)}"
    if kind == "missing":
        return f"missing required argument {where!r}"
    said = f"{where}: {error['msg']}"
    value = error.get("input")
    if isinstance(value, str) and kind.startswith("string_too"):
        return f"{said} (got {len(value)} characters)"
    return f"{said} (got {clip(value)})"


def validate_arguments(name: str, arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    """The keyword arguments for `PitTools.<name>`, or a BadCall naming every problem. `arguments`
    may be the JSON text a model sent (empty = none)."""
    if name not in _ALL_ARGUMENTS:
        raise UnknownTool(
            f"unknown tool {clip(name)}; tools are {', '.join(_ALL_ARGUMENTS)}",
            tool=clip(name),
            tools=list(_ALL_ARGUMENTS),
        )
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            raise InvalidArgument(f"{name}: arguments are not valid JSON: {reason}", tool=name) from None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidArgument(f"{name}: arguments must be a JSON object, got {type(arguments).__name__}", tool=name)
    # An explicit null is the same as leaving an optional argument out (models send them).
    present = {k: v for k, v in arguments.items() if v is not None}
    try:
        return _ALL_ARGUMENTS[name].model_validate(present).model_dump()
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        # A handful of reasons say what is wrong; a call with 1,000 unknown keys must not make a 1,000-line reply.
        reasons = [_reason(e) for e in errors[:MAX_REASONS]]
        if len(errors) > MAX_REASONS:
            reasons.append(f"and {len(errors) - MAX_REASONS} more problems")
        raise InvalidArgument(
            f"{name}: {'; '.join(reasons)} (parameters: {', '.join(PARAMETERS[name]['properties'])})",
            tool=name,
            problems=reasons,
        ) from None
