"""The registry of modes (issue 26): one table says what each mode needs and how it composes; a key is
parsed once into a SystemKey whose fields the runner, the spend guard and the reports read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chpit_assets.runs.client import ChatClient, EndpointConfig
from chpit_assets.runs.errors import UnknownSystemError
from chpit_assets.runs.systems import (
    ALL_MODES,
    FREE_SYSTEMS,
    LOOKUP_MODES,
    MODEL_MODES,
    MODES,
    WRAPPERS,
    VerifiedSystem,
    build_system,
    estimate_tokens,
    mode_entry,
    our_key,
    parse_system_key,
    published_name,
)

ROOT = Path(__file__).resolve().parents[2]


def test_every_published_and_issue_16_spelling_is_still_a_key():
    """Keys in run logs, results folders and configs keep working: the registry makes the same set."""
    assert LOOKUP_MODES == ("oracle", "recite", "cite/current", "cite/pit", "search/pit")
    assert FREE_SYSTEMS == ("cite/current", "cite/pit", "search/pit")
    assert MODEL_MODES == (
        "closed",
        "current",
        "pit",
        "agentic",
        "pit+verify",
        "agentic+search",
        "agentic+verify",
        "agentic+search+verify",
    )


@pytest.mark.parametrize(
    "key, base, wrappers, asks, tool_calls, run_report",
    [
        ("oracle", "oracle", (), False, False, False),
        ("recite", "recite", (), False, False, True),
        ("cite/pit", "cite/pit", (), False, False, False),
        ("search/pit", "search/pit", (), False, False, False),
        ("m/closed", "closed", (), True, False, True),
        ("m/pit+verify", "pit", ("verify",), True, False, True),
        ("m/agentic", "agentic", (), True, True, True),
        ("m/agentic+search+verify", "agentic", ("search", "verify"), True, True, True),
    ],
)
def test_a_key_is_parsed_once_into_what_it_needs(key, base, wrappers, asks, tool_calls, run_report):
    parsed = parse_system_key(key)
    assert (parsed.base_mode, parsed.wrappers, parsed.asks_model) == (base, wrappers, asks)
    assert (parsed.tool_calls, parsed.run_report, parsed.verify) == (tool_calls, run_report, "verify" in wrappers)
    assert parse_system_key(key) is parsed  # parsed once: the same object every later time


@pytest.mark.parametrize(
    "key",
    ["m/closed+verify", "m/current+verify", "m/pit+search", "m/agentic+verify+search", "m/agentic+search+search"],
)
def test_a_wrapper_a_mode_does_not_compose_with_is_refused(key):
    with pytest.raises(UnknownSystemError, match="unknown system key"):
        parse_system_key(key)


@pytest.mark.parametrize("key", ["cite/closed", "search/agentic", "cite/cite/pit"])
def test_a_model_free_systems_head_is_no_model_slug(key):
    """`cite/pit` names our lookup, so no model may be called `cite` (results folders would collide)."""
    with pytest.raises(UnknownSystemError):
        parse_system_key(key)


@given(
    slug=st.from_regex(r"[a-z0-9][a-z0-9._-]{0,12}", fullmatch=True).filter(lambda s: s not in ("cite", "search")),
    mode=st.sampled_from(MODEL_MODES),
)
def test_every_registered_mode_parses_with_any_slug(slug, mode):
    parsed = parse_system_key(f"{slug}/{mode}")
    assert (parsed.slug, parsed.mode, parsed.key) == (slug, mode, f"{slug}/{mode}")
    assert "+".join((parsed.base_mode, *parsed.wrappers)) == mode
    assert all(w in WRAPPERS and w in parsed.entry.wrappers for w in parsed.wrappers)


def test_the_card_order_is_the_registry_order():
    keys = [*LOOKUP_MODES, *(f"m/{mode}" for mode in MODEL_MODES)]
    assert [parse_system_key(k).order for k in keys] == list(range(len(ALL_MODES)))


def test_published_names_go_both_ways():
    for key in LOOKUP_MODES:
        assert our_key(published_name(key)) == key
    assert published_name("recite") == "recite/recite" and our_key("gpt-5/pit") == "gpt-5/pit"


def test_a_variant_is_estimated_as_its_base_mode_and_a_lookup_is_free():
    item = {"question": "Wie lautet Art. 1 DSG am 1. Mai 2024?", "gold": {"text": "x" * 400}}
    assert estimate_tokens("agentic+search+verify", item) == estimate_tokens("agentic", item)
    assert estimate_tokens("pit+verify", item) == estimate_tokens("pit", item) != estimate_tokens("closed", item)
    assert all(estimate_tokens(mode, item) == (0, 0) for mode in LOOKUP_MODES)
    assert parse_system_key("m/pit").estimate_tokens(item) == estimate_tokens("pit", item)
    with pytest.raises(UnknownSystemError, match="unknown mode 'pat'"):
        mode_entry("pat")


def test_every_key_builds_the_system_its_entry_says(tools):
    client = ChatClient(EndpointConfig("http://127.0.0.1:9/v1", "m"))  # never asked: building sends nothing
    try:
        for mode in ALL_MODES:
            key = mode if mode in LOOKUP_MODES else f"m/{mode}"
            parsed = parse_system_key(key)
            system = build_system(key, tools=tools, clients={"m": client})
            assert (system.key, system.mode, system.parsed) == (key, parsed.mode, parsed)
            assert isinstance(system, VerifiedSystem) == parsed.verify
            if parsed.tool_calls:
                offered = {spec["function"]["name"] for spec in getattr(system, "inner", system).tool_specs}
                assert ("ch_search_articles" in offered) == ("search" in parsed.wrappers)
    finally:
        client.close()


def test_modes_are_registered_once_under_their_own_name():
    assert all(name == mode.name for name, mode in MODES.items())
    assert all(set(mode.wrappers) <= set(WRAPPERS) for mode in MODES.values())
    assert all(mode.prompt for mode in MODES.values() if mode.model)


# Outside the registry, what a key means is read from its SystemKey, never from the key's spelling.
KEY_STRING_TESTS = re.compile(
    r'endswith\("[/+]|"\+(verify|search)"|base_mode\(|== "(agentic|pit|current|closed)"|in \("current", "pit"\)'
    r"|FREE_SYSTEMS\)|\.index\(parsed\.mode\)"
)


def test_no_string_tests_on_system_keys_outside_the_registry():
    offenders = []
    for path in sorted((ROOT / "chpit_assets").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "chpit_assets/runs/systems.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if KEY_STRING_TESTS.search(line):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == []
