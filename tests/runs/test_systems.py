"""The systems of R1 on the real sample build: oracle and recite from the store; current, pit and
agentic (PROTOCOL §4, §5) against a scripted loopback server that plays the model, the point-in-time
tools running for real through `call_tool`."""

from __future__ import annotations

import json

import pytest

from chpit_assets.pit import TOOL_SPECS, call_tool
from chpit_assets.runs.client import NO_RETRY, ChatClient, EndpointConfig
from chpit_assets.runs.errors import UnknownSystemError
from chpit_assets.runs.receipts import sha256_text
from chpit_assets.runs.runner import load_log, run_items
from chpit_assets.runs.systems import (
    AGENTIC_SYSTEM_PROMPT,
    CONTEXT_SYSTEM_PROMPT,
    MAX_TOOL_ROUNDS,
    TOOL_RESULT_MAX_CHARS,
    build_system,
    parse_system_key,
)

from .conftest import TODAY, completion, tool_call


@pytest.mark.parametrize(
    "key, mode, slug",
    [
        ("oracle", "oracle", None),
        ("recite", "recite", None),
        ("smollm2-135m/pit", "pit", "smollm2-135m"),
        ("claude-haiku-4.5/agentic", "agentic", "claude-haiku-4.5"),
        ("m/closed", "closed", "m"),
        ("m/current", "current", "m"),
    ],
)
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
    assert "error" not in log[good["id"]] and summary.errors == 1


# ----------------------------------------------------------------------------- agentic, scripted model


def _item(sample):
    """PublG Art. 5 before the 2023 change: as_of 2022-06-30, gold = the 2018 edition."""
    return next(i for i in sample.items["de"] if i["e_id"] == "art_5" and i["kind"] == "before")


def _last_tool_text(body: dict) -> str | None:
    tool_msgs = [m for m in body["messages"] if m["role"] == "tool"]
    if not tool_msgs:
        return None
    return (json.loads(tool_msgs[-1]["content"]).get("article") or {}).get("text")


def _client(server, model: str = "scripted-model") -> ChatClient:
    return ChatClient(EndpointConfig(server.base_url, model, retry=NO_RETRY))


def _agentic(server, tools):
    return build_system("scripted/agentic", tools=tools, clients={"scripted": _client(server)})


def _article_args(item, **extra):
    """The published `ch_get_act_article` arguments (PROTOCOL §5: `article`, not `article_number`)."""
    return {"sr_number": item["sr_number"], "article": item["article_number"], "lang": item["lang"], **extra}


def test_agentic_passing_the_right_date_is_grounded_correct(sample, tools, tmp_path, scripted):
    item = _item(sample)

    def respond(body):
        text = _last_tool_text(body)
        if text is None:
            return 200, completion(
                None,
                tool_calls=[tool_call("ch_get_act_article", _article_args(item, as_of=item["as_of"]))],
                finish_reason="tool_calls",
            )
        return 200, completion(text)

    server = scripted(respond)
    run_items(_agentic(server, tools), [item], tmp_path / "a.jsonl")
    line = load_log(tmp_path / "a.jsonl")[item["id"]]
    assert line["verdict"]["label"] == "grounded_correct"
    [call] = line["tool_calls"]
    assert {k: v for k, v in call.items() if k != "latency_s"} == {
        "round": 0,
        "name": "ch_get_act_article",
        "arguments": _article_args(item, as_of="2022-06-30"),
        "ok": True,
    }
    assert call["latency_s"] >= 0
    assert (line["n_tool_calls"], line["as_of_any"], line["as_of_passed"], line["sr_article_correct"]) == (
        1,
        True,
        True,
        True,
    )
    assert server.hits[0]["messages"][0]["content"] == AGENTIC_SYSTEM_PROMPT
    assert [t["function"]["name"] for t in server.hits[0]["tools"]] == [s["function"]["name"] for s in TOOL_SPECS]
    assert "tool_choice" not in server.hits[0]
    # PROTOCOL §5: the assistant message is appended verbatim, then the tool message.
    second = server.hits[1]["messages"]
    assert second[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [tool_call("ch_get_act_article", _article_args(item, as_of=item["as_of"]))],
    }
    assert second[3]["role"] == "tool" and second[3]["tool_call_id"] == "call_1"
    assert line["calls"] == 2 and len(line["receipt"]["context_sha256"]) == 1


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
    assert (line["as_of_any"], line["as_of_passed"], line["sr_article_correct"]) == (False, False, True)


def test_agentic_wrong_date_or_article_is_told_apart(sample, tools, tmp_path, scripted):
    """as_of_passed needs the item's as_of exactly; sr_article_correct needs act AND article."""
    item = _item(sample)
    calls = [_article_args(item, as_of="2022-07-01"), {**_article_args(item), "article": "6"}]

    def respond(body):
        n = sum(m["role"] == "tool" for m in body["messages"])
        if n < len(calls):
            return 200, completion(None, tool_calls=[tool_call("ch_get_act_article", calls[n], f"c{n}")])
        return 200, completion("x")

    run_items(_agentic(scripted(respond), tools), [item], tmp_path / "a.jsonl")
    line = load_log(tmp_path / "a.jsonl")[item["id"]]
    assert (line["n_tool_calls"], line["as_of_any"], line["as_of_passed"]) == (2, True, False)
    assert line["sr_article_correct"] is True  # the first call named the right act and article


def test_agentic_answering_without_a_tool(sample, tools, tmp_path, scripted):
    item = _item(sample)
    server = scripted(lambda body: (200, completion("Ich kann diesen Artikel nicht nachschlagen.")))
    run_items(_agentic(server, tools), [item], tmp_path / "a.jsonl")
    line = load_log(tmp_path / "a.jsonl")[item["id"]]
    assert line["tool_calls"] == [] and line["verdict"]["label"] == "ungrounded" and len(server.hits) == 1
    assert (line["n_tool_calls"], line["as_of_any"], line["sr_article_correct"]) == (0, False, False)


def test_agentic_four_tool_rounds_then_a_final_call_without_tools(sample, tools, tmp_path, scripted):
    item = _item(sample)

    def respond(body):
        if "tools" not in body:
            return 200, completion(_last_tool_text(body))  # the final call: quote what the last tool returned
        n = sum(m["role"] == "tool" for m in body["messages"])
        # Round 2 sends malformed JSON arguments: the call raises, the model reads the error, the loop goes on.
        args = "{not json" if n == 2 else _article_args(item, as_of=item["as_of"])
        return 200, completion(None, tool_calls=[tool_call("ch_get_act_article", args, f"c{n}")])

    server = scripted(respond)
    run_items(_agentic(server, tools), [item], tmp_path / "a.jsonl")
    line = load_log(tmp_path / "a.jsonl")[item["id"]]
    assert len(server.hits) == MAX_TOOL_ROUNDS + 1
    assert server.hits[-1]["tool_choice"] == "none" and "tools" not in server.hits[-1]
    assert all("tools" in h for h in server.hits[:-1])
    assert [c["round"] for c in line["tool_calls"]] == [0, 1, 2, 3]
    bad = line["tool_calls"][2]
    assert bad["arguments"] == "{not json" and bad["ok"] is False and bad["error"]
    tool_msg = [m for m in server.hits[3]["messages"] if m["role"] == "tool"][2]
    assert json.loads(tool_msg["content"]) == {"error": bad["error"]}
    assert bad["error"].split(":")[0].isidentifier()  # "{Type}: {msg}"
    assert line["verdict"]["label"] == "grounded_correct" and "error" not in line


def test_agentic_tool_calls_in_the_last_round_leave_the_answer_empty(sample, tools, tmp_path, scripted):
    item = _item(sample)
    server = scripted(
        lambda body: (
            200,
            completion("some text", tool_calls=[tool_call("ch_get_act_history", {"sr_number": item["sr_number"]})]),
        )
    )
    run_items(_agentic(server, tools), [item], tmp_path / "a.jsonl")
    line = load_log(tmp_path / "a.jsonl")[item["id"]]
    assert len(server.hits) == MAX_TOOL_ROUNDS + 1 and line["answer"] == "" and "error" not in line
    assert line["n_tool_calls"] == MAX_TOOL_ROUNDS and line["verdict"]["label"] == "ungrounded"


def test_agentic_long_tool_results_are_cut_at_12000_characters(sample, tools, tmp_path, scripted):
    item = _item(sample)
    text_args = {"sr_number": item["sr_number"], "as_of": item["as_of"], "lang": item["lang"], "max_chars": 200000}

    def respond(body):
        if not any(m["role"] == "tool" for m in body["messages"]):
            return 200, completion(None, tool_calls=[tool_call("ch_get_act_text", text_args)])
        return 200, completion("done")

    server = scripted(respond)
    system = _agentic(server, tools)
    run_items(system, [item], tmp_path / "a.jsonl")
    content = [m for m in server.hits[1]["messages"] if m["role"] == "tool"][0]["content"]
    full = json.dumps(call_tool(tools, "ch_get_act_text", text_args), ensure_ascii=False)
    assert len(full) > TOOL_RESULT_MAX_CHARS
    assert content == full[:TOOL_RESULT_MAX_CHARS] + "…[truncated]"


def test_agentic_a_failing_model_call_is_an_error_line_with_the_calls_made(sample, tools, tmp_path, scripted):
    item = _item(sample)

    def respond(body):
        if any(m["role"] == "tool" for m in body["messages"]):
            return 400, {"error": "context too long"}
        return 200, completion(None, tool_calls=[tool_call("ch_get_act_article", _article_args(item))])

    run_items(_agentic(scripted(respond), tools), [item], tmp_path / "a.jsonl")
    line = load_log(tmp_path / "a.jsonl")[item["id"]]
    assert line["error"].startswith("ModelCallError: ") and "HTTP 400" in line["error"]
    assert line["answer"] == "" and line["verdict"]["label"] == "ungrounded"
    # The call that succeeded was paid for and its tool call made: both stay on the line.
    assert (line["calls"], line["input_tokens"], line["n_tool_calls"], line["sr_article_correct"]) == (1, 10, 1, True)


# ----------------------------------------------------------------------------- current / pit, scripted model


@pytest.mark.parametrize("mode", ["current", "pit"])
def test_context_modes_send_the_tools_article_text(mode, sample, tools, tmp_path, scripted):
    """PROTOCOL §4: the text of `ch_get_act_article` (with as_of for pit only) between <context> tags."""
    item = _item(sample)
    server = scripted(lambda body: (200, completion("x")))
    system = build_system(f"scripted/{mode}", tools=tools, clients={"scripted": _client(server)})
    run_items(system, [item], tmp_path / "c.jsonl")
    line = load_log(tmp_path / "c.jsonl")[item["id"]]
    expected = call_tool(
        tools, "ch_get_act_article", _article_args(item, **({"as_of": item["as_of"]} if mode == "pit" else {}))
    )
    text = expected["article"]["text"]
    assert (text == item["gold"]["text"]) == (mode == "pit") and (text == item["distractor"]["text"]) == (
        mode == "current"
    )
    assert server.hits[0]["messages"] == [
        {"role": "system", "content": CONTEXT_SYSTEM_PROMPT},
        {"role": "user", "content": f"{item['question']}\n\n<context>\n{text}\n</context>"},
    ]
    assert line["tool_result"] == {
        "error": None,
        "as_of": expected["as_of"],
        "version_id": expected["version"]["version_id"],
        "date_applicability": expected["version"]["date_applicability"],
    }
    assert "context_empty" not in line and line["receipt"]["context_sha256"] == [sha256_text(text)]


def test_a_context_lookup_that_finds_nothing_still_asks_the_model_with_an_empty_context(
    sample, tools, tmp_path, scripted
):
    """PROTOCOL §4: `no_edition_for_date` is not an error; the line says context_empty."""
    item = {**_item(sample), "as_of": "1900-01-01"}
    server = scripted(lambda body: (200, completion("Keine Ahnung.")))
    system = build_system("scripted/pit", tools=tools, clients={"scripted": _client(server)})
    run_items(system, [item], tmp_path / "c.jsonl")
    line = load_log(tmp_path / "c.jsonl")[item["id"]]
    assert len(server.hits) == 1 and server.hits[0]["messages"][1]["content"].endswith("<context>\n\n</context>")
    assert line["context_empty"] is True and "error" not in line and line["answer"] == "Keine Ahnung."
    assert line["tool_result"]["error"] == "no_edition_for_date" and line["tool_result"]["as_of"] == "1900-01-01"


def test_a_failing_context_model_call_keeps_what_the_tool_returned(sample, tools, tmp_path, scripted):
    item = _item(sample)
    server = scripted(lambda body: (401, {"error": "bad key"}))
    system = build_system("scripted/pit", tools=tools, clients={"scripted": _client(server)})
    run_items(system, [item], tmp_path / "c.jsonl")
    line = load_log(tmp_path / "c.jsonl")[item["id"]]
    assert line["error"].startswith("ModelCallError: ") and line["answer"] == "" and line["calls"] == 0
    assert line["tool_result"]["error"] is None and line["receipt"]["context_sha256"] == [
        sha256_text(item["gold"]["text"])
    ]
