"""The systems of R1 on the real sample build: oracle and recite from the store, agentic against a
scripted loopback server that plays the model (the tools themselves run for real)."""

from __future__ import annotations

import json

import pytest

from chpit_assets.runs.client import ChatClient, EndpointConfig
from chpit_assets.runs.errors import UnknownSystemError
from chpit_assets.runs.receipts import sha256_text
from chpit_assets.runs.runner import load_log, run_items
from chpit_assets.runs.systems import (
    AGENTIC_SYSTEM_PROMPT,
    MAX_TOOL_ROUNDS,
    build_system,
    parse_system_key,
)

from .conftest import TODAY, completion, tool_call


@pytest.mark.parametrize("key, mode, slug", [
    ("oracle", "oracle", None), ("recite", "recite", None), ("smollm2-135m/pit", "pit", "smollm2-135m"),
    ("claude-haiku-4.5/agentic", "agentic", "claude-haiku-4.5"), ("m/closed", "closed", "m"), ("m/current", "current", "m"),
])
def test_system_keys_parse(key, mode, slug):
    parsed = parse_system_key(key)
    assert (parsed.mode, parsed.slug) == (mode, slug)


@pytest.mark.parametrize("key", ["", "Oracle", "recite/recite", "m/", "/pit", "m/pit/x", "M/pit", "m/oracle", "../pit"])
def test_unknown_system_keys_are_refused(key):
    with pytest.raises(UnknownSystemError, match="unknown system key"):
        parse_system_key(key)


def test_oracle_scores_one_on_the_real_sample_build(sample, tools, tmp_path):
    """R1: the oracle resolves act_id -> edition -> article and must be grounded_correct everywhere."""
    items = [item for lang_items in sample.items.values() for item in lang_items]
    assert len(items) >= 9  # the sample's PublG and DSG changes (German)
    with tools.session():
        summary = run_items(build_system("oracle", tools=tools), items, tmp_path / "oracle.jsonl", workers=2)
    assert summary.labels == {"grounded_correct": len(items)} and summary.errors == 0
    line = load_log(tmp_path / "oracle.jsonl")[items[0]["id"]]
    assert line["lookup"]["version_id"] == items[0]["gold"]["version_id"]
    receipt = line["receipt"]
    assert receipt["gold_sha256"] == sha256_text(items[0]["gold"]["text"])
    assert receipt["distractor_sha256"] == sha256_text(items[0]["distractor"]["text"])
    assert receipt["context_sha256"] == [sha256_text(line["answer"])]


def test_recite_is_right_exactly_where_the_date_does_not_matter(sample, tools, tmp_path):
    """R1: today's edition without a date. In the sample every `after` gold is today's wording
    (DSG Art. 24's later edition differs only in footnotes), every `before` gold is superseded."""
    items = sample.items["de"]
    summary = run_items(build_system("recite", tools=tools), items, tmp_path / "recite.jsonl")
    log = load_log(tmp_path / "recite.jsonl")
    labels = {item["kind"]: set() for item in items}
    for item in items:
        labels[item["kind"]].add(log[item["id"]]["verdict"]["label"])
        assert log[item["id"]]["lookup"]["as_of"] == TODAY.isoformat()
        assert log[item["id"]]["lookup"]["as_of_defaulted"] is True
    assert labels == {"after": {"grounded_correct"}, "before": {"grounded_wrong_version"}}
    assert summary.errors == 0


def test_a_lookup_that_fails_is_an_error_line_and_the_run_goes_on(sample, tools, tmp_path):
    good = sample.items["de"][0]
    bad = {**good, "id": "0000000000000000", "article_number": "999"}
    summary = run_items(build_system("recite", tools=tools), [bad, good], tmp_path / "r.jsonl")
    log = load_log(tmp_path / "r.jsonl")
    assert log[bad["id"]]["error"].startswith("UnknownArticle") and log[bad["id"]]["verdict"]["label"] == "ungrounded"
    assert log[good["id"]]["error"] is None and summary.errors == 1


# ----------------------------------------------------------------------------- agentic, scripted model


def _item(sample):
    """PublG Art. 5 before the 2023 change: as_of 2022-06-30, gold = the 2018 edition."""
    return next(i for i in sample.items["de"] if i["e_id"] == "art_5" and i["kind"] == "before")


def _last_tool_text(body: dict) -> str | None:
    tool_msgs = [m for m in body["messages"] if m["role"] == "tool"]
    return json.loads(tool_msgs[-1]["content"]).get("text") if tool_msgs else None


def _agentic(server, tools):
    client = ChatClient(EndpointConfig(server.base_url, "scripted-model", max_retries=0))
    return build_system("scripted/agentic", tools=tools, clients={"scripted": client})


def _article_args(item, **extra):
    return {"sr_number": item["sr_number"], "article_number": item["article_number"], "lang": item["lang"], **extra}


def test_agentic_passing_the_right_date_is_grounded_correct(sample, tools, tmp_path, scripted):
    item = _item(sample)

    def respond(body):
        text = _last_tool_text(body)
        if text is None:
            return 200, completion(None, tool_calls=[tool_call("ch_get_act_article", _article_args(item, as_of=item["as_of"]))],
                                   finish_reason="tool_calls")
        return 200, completion(text)

    server = scripted(respond)
    run_items(_agentic(server, tools), [item], tmp_path / "a.jsonl")
    line = load_log(tmp_path / "a.jsonl")[item["id"]]
    assert line["verdict"]["label"] == "grounded_correct"
    assert line["tool_calls"] == [{"round": 1, "name": "ch_get_act_article", "raw_arguments": None, "error": None,
                                   "arguments": _article_args(item, as_of="2022-06-30")}]
    assert server.hits[0]["messages"][0]["content"] == AGENTIC_SYSTEM_PROMPT
    assert {t["function"]["name"] for t in server.hits[0]["tools"]} == {
        "ch_get_act_article", "ch_get_act_history", "ch_get_act_text"}
    assert len(line["calls"]) == 2 and len(line["receipt"]["context_sha256"]) == 1


def test_agentic_without_the_date_quotes_todays_wording(sample, tools, tmp_path, scripted):
    item = _item(sample)

    def respond(body):
        text = _last_tool_text(body)
        if text is None:
            return 200, completion(None, tool_calls=[tool_call("ch_get_act_article", _article_args(item))])
        return 200, completion(text)

    run_items(_agentic(scripted(respond), tools), [item], tmp_path / "a.jsonl")
    line = load_log(tmp_path / "a.jsonl")[item["id"]]
    assert line["verdict"]["label"] == "grounded_wrong_version"
    assert "as_of" not in line["tool_calls"][0]["arguments"]


def test_agentic_answering_without_a_tool(sample, tools, tmp_path, scripted):
    item = _item(sample)
    server = scripted(lambda body: (200, completion("Ich kann diesen Artikel nicht nachschlagen.")))
    run_items(_agentic(server, tools), [item], tmp_path / "a.jsonl")
    line = load_log(tmp_path / "a.jsonl")[item["id"]]
    assert line["tool_calls"] == [] and line["verdict"]["label"] == "ungrounded" and len(server.hits) == 1


def test_agentic_four_tool_rounds_then_a_forced_answer_without_tools(sample, tools, tmp_path, scripted):
    item = _item(sample)

    def respond(body):
        if "tools" not in body:
            return 200, completion(_last_tool_text(body))  # forced: quote what the last tool returned
        n = sum(m["role"] == "tool" for m in body["messages"])
        # Round 3 sends malformed JSON arguments: logged raw, answered with an error, loop continues.
        args = "{not json" if n == 2 else _article_args(item, as_of=item["as_of"])
        return 200, completion(None, tool_calls=[tool_call("ch_get_act_article", args, f"c{n}")])

    server = scripted(respond)
    run_items(_agentic(server, tools), [item], tmp_path / "a.jsonl")
    line = load_log(tmp_path / "a.jsonl")[item["id"]]
    assert len(server.hits) == MAX_TOOL_ROUNDS + 1
    assert "tools" not in server.hits[-1] and all("tools" in h for h in server.hits[:-1])
    assert [c["round"] for c in line["tool_calls"]] == [1, 2, 3, 4]
    assert line["tool_calls"][2]["raw_arguments"] == "{not json" and line["tool_calls"][2]["error"]["code"]
    assert line["verdict"]["label"] == "grounded_correct" and line["error"] is None
