"""The tools' published schema and the call contract (PROTOCOL §5, R2; issue 15 item 5).

The expected names, descriptions, defaults and required lists below are the published protocol
data (PROTOCOL §5), written out here independently of chpit_assets/pit/schema.py, so an edit
there that changes what models see fails."""

from __future__ import annotations

import inspect
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chpit_assets.pit import (
    TOOL_NAMES,
    TOOL_SPECS,
    InvalidArgument,
    PitTools,
    UnknownTool,
    call_tool,
)
from chpit_assets.pit.schema import ARGUMENTS, PUBLISHED_TOOLS_FILE, advertised_parameters, validate_arguments
from chpit_assets.runs.systems import tokens

from .conftest import TODAY, art1

BOUND_KEYS = {"minLength", "maxLength", "minimum", "maximum", "additionalProperties"}

PUBLISHED = {
    "ch_get_act_article": (
        "Text of one article of a Swiss federal act (Fedlex) as consolidated on a date. Returns the edition whose "
        "validity interval covers as_of; without as_of, the edition in force today. Response: {sr_number, "
        "abbreviation, title, lang, as_of, version{version_id, date_applicability, date_end_applicability, "
        "eli_consolidation_uri}, article{e_id, article_number, marginal_note, text}} or {error: "
        "'no_edition_for_date' | 'article_not_found'}.",
        {
            "sr_number": ("string", "SR number of the act, e.g. '220'", None),
            "article": ("string", "Article number, e.g. '336' or '336a'", None),
            "lang": ("string", "Language of the edition", "de"),
            "as_of": ("string", "Date (YYYY-MM-DD) the edition must be in force on; default: today", None),
        },
        ["sr_number", "article"],
    ),
    "ch_get_act_history": (
        "Edition history of a Swiss federal act: every consolidated edition with its validity interval, and the "
        "per-article changes between consecutive editions (optionally filtered to one article).",
        {
            "sr_number": ("string", "SR number of the act, e.g. '220'", None),
            "article": ("string", "Article number to filter the change list to, e.g. '336a'", None),
            "lang": ("string", "Language of the editions", "de"),
        },
        ["sr_number"],
    ),
    "ch_get_act_text": (
        "Full text of a Swiss federal act in the edition in force on a date, paged by character offset.",
        {
            "sr_number": ("string", "SR number of the act, e.g. '220'", None),
            "as_of": ("string", "Date (YYYY-MM-DD) the edition must be in force on", None),
            "lang": ("string", "Preferred language of the edition", "de"),
            "offset": ("number", "Character offset for paging", 0),
            "max_chars": ("number", "Maximum characters returned (up to 200000)", 50000),
        },
        ["sr_number", "as_of"],
    ),
}


def test_tool_specs_are_the_published_ones_verbatim():
    assert TOOL_NAMES == tuple(PUBLISHED)
    for spec in TOOL_SPECS:
        assert spec["type"] == "function"
        fn = spec["function"]
        description, params, required = PUBLISHED[fn["name"]]
        assert fn["description"] == description
        schema = fn["parameters"]
        assert schema["type"] == "object" and schema["required"] == required
        assert list(schema["properties"]) == list(params)  # published argument order
        for name, (kind, text, default) in params.items():
            prop = schema["properties"][name]
            assert (prop["type"], prop["description"], prop.get("default")) == (kind, text, default)
            assert "title" not in prop and "anyOf" not in prop
        assert schema["properties"]["lang"]["enum"] == ["de", "fr", "it"]
    assert json.loads(json.dumps(TOOL_SPECS)) == TOOL_SPECS


def test_the_tool_list_sent_is_the_vendored_published_file_and_the_models_agree_with_it():
    """PROTOCOL §5: the list is sent as published, key order included; the validating models, shown
    without their bounds, derive exactly that schema, so what is enforced and what is told cannot drift."""
    vendored = json.loads(PUBLISHED_TOOLS_FILE.read_text(encoding="utf-8"))
    assert TOOL_SPECS == vendored
    assert json.dumps(TOOL_SPECS) == json.dumps(vendored)  # same key order, so the same bytes on the wire
    for spec in TOOL_SPECS:
        fn = spec["function"]
        assert advertised_parameters(ARGUMENTS[fn["name"]]) == fn["parameters"]
        assert not BOUND_KEYS & set(json.dumps(fn["parameters"]).replace('"', " ").split())
    # The agentic estimate's S (PROTOCOL §7) is the published list's size, 608 tokens.
    assert tokens(json.dumps(TOOL_SPECS)) == 608


@pytest.mark.parametrize(
    "name, arguments, says",
    [
        ("ch_get_act_article", {"sr_number": "1" * 33, "article": "1"}, "sr_number"),
        ("ch_get_act_article", {"sr_number": "", "article": "1"}, "sr_number"),
        ("ch_get_act_text", {"sr_number": "220", "as_of": "2020-01-01", "max_chars": 200001}, "max_chars"),
        ("ch_get_act_text", {"sr_number": "220", "as_of": "2020-01-01", "offset": -1}, "offset"),
        ("ch_get_act_history", {"sr_number": "220", "extra": 1}, "unknown argument"),
    ],
)
def test_bounds_the_schema_does_not_advertise_are_still_enforced(name, arguments, says):
    with pytest.raises(InvalidArgument, match=says):
        validate_arguments(name, arguments)


def test_python_methods_take_the_published_arguments():
    """One name per argument across the schema and the Python API (call_tool passes them through)."""
    for spec in TOOL_SPECS:
        fn = spec["function"]
        params = inspect.signature(getattr(PitTools, fn["name"])).parameters
        assert list(params)[1:] == list(fn["parameters"]["properties"])
        assert [n for n, p in params.items() if n != "self" and p.default is inspect.Parameter.empty] == fn[
            "parameters"
        ]["required"]
        for name, prop in fn["parameters"]["properties"].items():
            if "default" in prop:
                assert params[name].default == prop["default"]


# --------------------------------------------------------------------------- call_tool


def test_call_tool_returns_the_published_article_response(tools):
    out = call_tool(tools, "ch_get_act_article", {"sr_number": "999.1", "article": 1, "as_of": "2020-05-05"})
    assert json.loads(json.dumps(out)) == out
    assert list(out)[:7] == ["sr_number", "abbreviation", "title", "lang", "as_of", "version", "article"]
    assert (out["sr_number"], out["abbreviation"], out["title"], out["lang"], out["as_of"]) == (
        "999.1",
        "TG",
        "Testgesetz",
        "de",
        "2020-05-05",
    )
    assert {
        k: out["version"][k]
        for k in ("version_id", "date_applicability", "date_end_applicability", "eli_consolidation_uri")
    } == {
        "version_id": 11,
        "date_applicability": "2020-01-01",
        "date_end_applicability": "2020-12-31",
        "eli_consolidation_uri": "https://fedlex.data.admin.ch/eli/cc/2019/1/20200101",
    }
    assert {k: out["article"][k] for k in ("e_id", "article_number", "marginal_note", "text")} == {
        "e_id": "art_1",
        "article_number": "1",
        "marginal_note": "Zweck",
        "text": art1("2020"),
    }


def test_only_the_article_tool_defaults_to_today(tools):
    out = call_tool(tools, "ch_get_act_article", {"sr_number": "999.1", "article": "1"})
    assert (out["as_of"], out["as_of_defaulted"], out["version"]["version_id"]) == (TODAY.isoformat(), True, 14)
    with pytest.raises(InvalidArgument, match="as_of"):
        call_tool(tools, "ch_get_act_text", {"sr_number": "999.1"})
    with pytest.raises(InvalidArgument, match="unknown argument 'as_of'"):
        call_tool(tools, "ch_get_act_history", {"sr_number": "999.1", "as_of": "2020-01-01"})


def test_call_tool_history_and_text(tools):
    history = call_tool(tools, "ch_get_act_history", '{"sr_number": "999.1", "article": null}')
    assert [e["date_applicability"] for e in history["editions"]] == [
        "2020-01-01",
        "2021-01-01",
        "2022-01-01",
        "2026-01-01",
    ]
    assert {c["change_type"] for c in history["changes"]} == {"modified", "added"}
    text = call_tool(tools, "ch_get_act_text", {"sr_number": "999.1", "as_of": "2021-03-01", "max_chars": 20.0})
    assert (len(text["text"]), text["next_offset"], text["offset"]) == (20, 20, 0)


@pytest.mark.parametrize(
    "arguments, error, code",
    [
        ({"sr_number": "999.1", "article": "1", "as_of": "2021-08-01"}, "no_edition_for_date", "no_edition_on_date"),
        (
            {"sr_number": "999.1", "article": "1", "as_of": "1999-01-01"},
            "no_edition_for_date",
            "date_before_first_edition",
        ),
        ({"sr_number": "999.1", "article": "1", "lang": "it"}, "no_edition_for_date", "no_edition_in_language"),
        ({"sr_number": "1.1", "article": "1"}, "no_edition_for_date", "unknown_act"),
        ({"sr_number": "999.1", "article": "42"}, "article_not_found", "unknown_article"),
    ],
)
def test_a_miss_is_the_published_error_dict(tools, arguments, error, code):
    out = call_tool(tools, "ch_get_act_article", arguments)
    assert (out["error"], out["code"]) == (error, code) and out["message"]
    assert json.loads(json.dumps(out)) == out


@pytest.mark.parametrize(
    "name, arguments, error, says",
    [
        ("ch_get_law", {}, UnknownTool, "unknown tool 'ch_get_law'"),
        ("ch_get_act_article", {"sr_number": "999.1"}, InvalidArgument, "missing required argument 'article'"),
        (
            "ch_get_act_article",
            {"sr_number": "999.1", "article_number": "1"},
            InvalidArgument,
            "unknown argument 'article_number'",
        ),
        ("ch_get_act_article", "{not json", InvalidArgument, "not valid JSON"),
        ("ch_get_act_article", "[" * 100_000, InvalidArgument, "not valid JSON"),
        ("ch_get_act_article", ["999.1"], InvalidArgument, "must be a JSON object"),
        ("ch_get_act_article", {"sr_number": "999.1", "article": "1", "lang": "rm"}, InvalidArgument, "lang"),
        ("ch_get_act_article", {"sr_number": "999.1", "article": "1", "as_of": "gestern"}, InvalidArgument, "as_of"),
        ("ch_get_act_article", {"sr_number": "999.1", "article": "1", "as_of": "20240101"}, InvalidArgument, "as_of"),
        ("ch_get_act_article", {"sr_number": "", "article": "1"}, InvalidArgument, "sr_number"),
        (
            "ch_get_act_text",
            {"sr_number": "999.1", "as_of": "2022-01-01", "max_chars": 10**30},
            InvalidArgument,
            "max_chars: Input should be less than or equal to 200000",
        ),
        (
            "ch_get_act_text",
            {"sr_number": "999.1", "as_of": "2022-01-01", "max_chars": 0},
            InvalidArgument,
            "max_chars",
        ),
        ("ch_get_act_text", {"sr_number": "999.1", "as_of": "2022-01-01", "offset": -1}, InvalidArgument, "offset"),
        ("ch_get_act_text", {"sr_number": "999.1", "as_of": "2022-01-01", "offset": 1.5}, InvalidArgument, "offset"),
        ("ch_get_act_text", {"sr_number": "999.1", "as_of": "2022-01-01", "offset": True}, InvalidArgument, "boolean"),
        (
            "ch_get_act_text",
            {"sr_number": "999.1", "as_of": "2022-01-01", "max_chars": "ten"},
            InvalidArgument,
            "max_chars",
        ),
    ],
)
def test_a_bad_call_raises_a_typed_readable_error(tools, name, arguments, error, says):
    with pytest.raises(error) as exc:
        call_tool(tools, name, arguments)
    assert says in str(exc.value) and len(str(exc.value)) < 1000


def test_huge_arguments_are_never_echoed(tools):
    huge = "9" * 1_000_000
    calls = [
        {"sr_number": huge, "article": "1"},
        {"sr_number": "999.1", "article": huge},
        {"sr_number": "999.1", "article": "1", huge: 1},
        {"sr_number": "999.1", "article": "1", **{f"k{i}": i for i in range(10_000)}},
        {"sr_number": "999.1", "article": "1", "as_of": huge},
    ]
    for arguments in calls:
        with pytest.raises(InvalidArgument) as exc:
            call_tool(tools, "ch_get_act_article", arguments)
        assert len(str(exc.value)) < 1000


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_keys = st.sampled_from(["sr_number", "article", "lang", "as_of", "offset", "max_chars", "extra"])


# `tools` holds no state between calls (each opens its own read-only connection).
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(TOOL_NAMES),
    arguments=st.dictionaries(
        _keys, _json | st.sampled_from(["999.1", "777", "1", "178", "de", "fr", "2021-03-01", 0, 10, 10**30])
    ),
)
def test_any_json_arguments_give_a_response_or_a_bad_call(tools, name, arguments):
    """Nothing but a response dict or a BadCall comes out of call_tool, whatever a model sends."""
    try:
        out = call_tool(tools, name, arguments)
    except (InvalidArgument, UnknownTool) as exc:
        assert len(str(exc)) < 1000
        return
    assert json.loads(json.dumps(out)) == out
    assert ("error" in out) == ("version" not in out and "editions" not in out)


def test_validate_arguments_fills_the_published_defaults():
    assert validate_arguments("ch_get_act_text", {"sr_number": "220", "as_of": "2024-01-01"}) == {
        "sr_number": "220",
        "as_of": "2024-01-01",
        "lang": "de",
        "offset": 0,
        "max_chars": 50000,
    }
