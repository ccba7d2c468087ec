"""The model client against a scripted loopback server (R3, PROTOCOL §4, §7): the request body, retries
and backoff, the max_tokens ladder, what a reply records, redaction, pre-flight errors, price and the cost gate."""

from __future__ import annotations

import json
import socket
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from chpit_assets.runs.client import (
    CONFIRM_ENV,
    PUBLISHED_CONFIRM_ENV,
    RETRY_CODES,
    ChatClient,
    EndpointConfig,
    cost_gate,
    estimate_cost,
    redact_url,
)
from chpit_assets.runs.errors import (
    EndpointUnreachableError,
    MissingApiKeyError,
    ModelCallError,
    SpendNotConfirmedError,
    UnknownSystemError,
    UnpricedModelError,
)
from chpit_assets.runs.runner import prepare_system

from .conftest import completion

MESSAGES = [{"role": "user", "content": "Wie lautet Art. 24 DSG?"}]


def _client(server, sleeps: list | None = None, **overrides) -> ChatClient:
    config = EndpointConfig(base_url=server.base_url, model="m", **overrides)
    return ChatClient(config, sleep=(sleeps.append if sleeps is not None else lambda s: None))


def test_reply_records_answering_model_provider_tokens_cost_and_settings(scripted):
    server = scripted(
        lambda body: (
            200,
            completion(
                "1 Text.",
                model="vendor/m-2025",
                provider="Fireworks",
                cost=0.0012,
                prompt_tokens=40,
                completion_tokens=7,
            ),
        )
    )
    reply = _client(server).chat(MESSAGES)
    assert (reply.content, reply.model, reply.provider, reply.cost) == ("1 Text.", "vendor/m-2025", "Fireworks", 0.0012)
    assert (reply.prompt_tokens, reply.completion_tokens, reply.attempts, reply.retries) == (40, 7, 1, 0)


def test_the_request_body_is_the_published_one(scripted):
    """PROTOCOL §4: model, messages, max_tokens, temperature 0.0, usage.include, reasoning.effort;
    tools/tool_choice only when set."""
    server = scripted(lambda body: (200, completion("x")))
    client = _client(server)
    client.chat(MESSAGES)
    client.chat(MESSAGES, tool_choice="none")
    plain, forced = server.hits
    assert plain == {
        "model": "m",
        "messages": MESSAGES,
        "max_tokens": 8192,
        "temperature": 0.0,
        "usage": {"include": True},
        "reasoning": {"effort": "minimal"},
    }
    assert forced["tool_choice"] == "none" and "tools" not in forced
    _client(server, reasoning_effort=None).chat(MESSAGES)
    assert "reasoning" not in server.hits[-1]


def test_provider_falls_back_to_the_host_and_cost_stays_unknown(scripted):
    server = scripted(lambda body: (200, completion("x")))
    reply = _client(server).chat(MESSAGES)
    assert reply.provider == "127.0.0.1" and reply.cost is None


@pytest.mark.parametrize("status", sorted(RETRY_CODES))
def test_each_listed_status_is_retried_with_the_published_backoff(scripted, status):
    statuses = iter([status, status, 200])

    def respond(body):
        s = next(statuses)
        return (s, completion("ok")) if s == 200 else (s, {"error": "busy"})

    sleeps: list[float] = []
    reply = _client(scripted(respond), sleeps).chat(MESSAGES)
    assert reply.content == "ok" and reply.attempts == 3 and reply.retries == 2
    assert sleeps == [1, 2]


def test_an_error_code_in_a_200_body_is_retried_like_the_status(scripted):
    replies = iter([(200, {"error": {"code": 429, "message": "rate limited upstream"}}), (200, completion("ok"))])
    sleeps: list[float] = []
    reply = _client(scripted(lambda body: next(replies)), sleeps).chat(MESSAGES)
    assert reply.content == "ok" and sleeps == [1]
    server = scripted(lambda body: (200, {"error": {"code": 400, "message": "bad"}}))
    with pytest.raises(ModelCallError, match="error code 400"):
        _client(server).chat(MESSAGES)
    assert len(server.hits) == 1


def test_five_retries_sleeping_1_2_4_8_16_then_a_typed_error(scripted):
    server = scripted(lambda body: (502, "bad gateway"))
    sleeps: list[float] = []
    with pytest.raises(ModelCallError, match="gave up after 6 attempts.*HTTP 502"):
        _client(server, sleeps).chat(MESSAGES)
    assert len(server.hits) == 6 and sleeps == [1, 2, 4, 8, 16]


def test_retry_after_in_either_form_is_honoured_and_a_long_one_is_not_waited_for(scripted):
    """Issue 17.3: the model client follows the one retry policy (chpit_assets.retry), as Fedlex's does."""
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    replies = iter(
        [
            (429, {"error": "slow down"}, {"Retry-After": "7"}),
            (503, {"error": "busy"}, {"Retry-After": later}),
            (200, completion("ok")),
        ]
    )
    sleeps: list[float] = []
    assert _client(scripted(lambda body: next(replies)), sleeps).chat(MESSAGES).content == "ok"
    assert sleeps[0] == 7 and 25 <= sleeps[1] <= 30  # more than the 1 and 2 s of the backoff
    server = scripted(lambda body: (429, {"error": "come back tomorrow"}, {"Retry-After": "86400"}))
    sleeps.clear()
    with pytest.raises(ModelCallError, match="retry after 86400s, more than the 300s we wait"):
        _client(server, sleeps).chat(MESSAGES)
    assert sleeps == [] and len(server.hits) == 1


def test_a_transport_failure_is_retried(scripted):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps: list[float] = []
    client = ChatClient(EndpointConfig(f"http://127.0.0.1:{port}/v1", "m"), sleep=sleeps.append)
    with pytest.raises(ModelCallError, match="ConnectError"):
        client.chat(MESSAGES)
    assert sleeps == [1, 2, 4, 8, 16]


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_an_unlisted_status_is_not_retried(scripted, status):
    server = scripted(lambda body: (status, {"error": "bad request"}))
    with pytest.raises(ModelCallError, match=f"HTTP {status}"):
        _client(server).chat(MESSAGES)
    assert len(server.hits) == 1


def test_a_truncated_reply_is_asked_again_once_with_16384_tokens(scripted):
    def respond(body):
        return 200, completion("cut", finish_reason="length") if body["max_tokens"] == 8192 else completion("whole")

    server = scripted(respond)
    reply = _client(server).chat(MESSAGES)
    assert [h["max_tokens"] for h in server.hits] == [8192, 16384]
    assert (reply.content, reply.max_tokens, reply.prompt_tokens, reply.completion_tokens) == ("whole", 16384, 20, 10)
    assert reply.requests == 2


@pytest.mark.parametrize("content", [None, "", "  \n"])
def test_a_blank_reply_without_tool_calls_is_asked_again_once(scripted, content):
    server = scripted(lambda body: (200, completion(content if body["max_tokens"] == 8192 else "late")))
    assert _client(server).chat(MESSAGES).content == "late"
    assert [h["max_tokens"] for h in server.hits] == [8192, 16384]


def test_a_blank_reply_with_tool_calls_is_not_asked_again(scripted):
    server = scripted(
        lambda body: (
            200,
            completion(
                None,
                tool_calls=[
                    {"id": "c", "type": "function", "function": {"name": "ch_get_act_article", "arguments": "{}"}}
                ],
            ),
        )
    )
    reply = _client(server).chat(MESSAGES)
    assert len(server.hits) == 1 and reply.tool_calls


def test_the_second_reply_is_accepted_whatever_it_is(scripted):
    server = scripted(lambda body: (200, completion("cut", finish_reason="length")))
    reply = _client(server).chat(MESSAGES)
    assert len(server.hits) == 2 and reply.finish_reason == "length"


def test_malformed_reply_is_a_typed_error(scripted):
    server = scripted(lambda body: (200, "{not json"))
    with pytest.raises(ModelCallError, match="malformed reply"):
        _client(server).chat(MESSAGES)


def test_missing_api_key_fails_before_any_request(scripted, monkeypatch):
    server = scripted(lambda body: (200, completion("x")))
    monkeypatch.delenv("CHPIT_TEST_KEY", raising=False)
    with pytest.raises(MissingApiKeyError, match=r"\$CHPIT_TEST_KEY"):
        prepare_system(
            "m/closed", [], endpoints={"m": EndpointConfig(server.base_url, "m", api_key_env="CHPIT_TEST_KEY")}
        )
    assert server.hits == []


def test_api_key_is_sent_as_bearer(scripted, monkeypatch):
    seen = []
    server = scripted(lambda body: (200, completion("x")))
    monkeypatch.setenv("CHPIT_TEST_KEY", "sk-test")
    client = ChatClient(EndpointConfig(server.base_url, "m", api_key_env="CHPIT_TEST_KEY"))
    client._http.event_hooks["request"].append(lambda req: seen.append(req.headers["authorization"]))
    client.chat(MESSAGES)
    assert seen == ["Bearer sk-test"]


def test_credentials_in_the_base_url_are_used_but_never_recorded(scripted):
    """Issue 15 item 5: user info and query keys reach the endpoint, not the settings or errors."""
    seen = []
    server = scripted(lambda body: (500, "boom"))
    url = server.base_url.replace("http://", "http://bob:s3cr3t-pw@") + "?key=sk-planted&region=eu"
    client = ChatClient(EndpointConfig(url, "m"), sleep=lambda s: None)
    client._http.event_hooks["request"].append(
        lambda req: seen.append((str(req.url), req.headers.get("authorization")))
    )
    with pytest.raises(ModelCallError) as err:
        client.chat(MESSAGES)
    assert seen[0][0].endswith("/v1/chat/completions?key=sk-planted&region=eu")
    assert seen[0][1].startswith("Basic ")
    recorded = json.dumps(client.config.settings()) + str(err.value)
    assert "s3cr3t-pw" not in recorded and "sk-planted" not in recorded and "bob" not in recorded
    assert redact_url(url).endswith("/v1?key=REDACTED&region=REDACTED") and "REDACTED@127.0.0.1" in redact_url(url)


def test_unreachable_endpoint_fails_before_any_spending():
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(EndpointUnreachableError, match=f"127.0.0.1:{port}"):
        prepare_system("m/closed", [], endpoints={"m": EndpointConfig(f"http://127.0.0.1:{port}/v1", "m")})


def test_unknown_system_key_and_unconfigured_model():
    with pytest.raises(UnknownSystemError, match="unknown system key 'm/summarise'"):
        prepare_system("m/summarise", [])
    with pytest.raises(UnknownSystemError, match="no endpoint configured for model 'gpt-x'"):
        prepare_system("gpt-x/pit", [], endpoints={})


PAID = EndpointConfig(
    "https://openrouter.example/api/v1",
    "anthropic/claude-haiku-4.5",
    price_input_per_mtok=1.0,
    price_output_per_mtok=5.0,
)


def test_cost_estimate_is_tokens_times_price_per_million():
    estimate = estimate_cost(PAID, 1500, 1_500_000, 300_000)
    assert estimate == {"items": 1500, "input_tokens": 1_500_000, "output_tokens": 300_000, "usd": 1.5 + 1.5}


def test_an_unpriced_paid_endpoint_is_refused_before_any_call_but_loopback_is_free():
    unpriced = EndpointConfig("https://openrouter.example/api/v1", "anthropic/claude-haiku-4.5")
    with pytest.raises(UnpricedModelError, match="no price for model 'anthropic/claude-haiku-4.5'"):
        estimate_cost(unpriced, 1, 10, 10)
    assert estimate_cost(EndpointConfig("http://127.0.0.1:1/v1", "m"), 1, 10, 10)["usd"] == 0.0


def test_unpriced_refusal_comes_before_the_endpoint_is_contacted(sample):
    """prepare_system estimates first: an unpriced paid endpoint is refused with no request at all
    (the host does not resolve, so a request would be an EndpointUnreachableError)."""
    config = EndpointConfig("https://no-such-host.invalid/v1", "vendor/model-x")
    with pytest.raises(UnpricedModelError, match="model-x"):
        prepare_system("x/closed", sample.items["de"][:2], endpoints={"x": config})


def test_cost_gate_prints_the_estimate_and_refuses_without_confirmation(monkeypatch):
    monkeypatch.delenv(CONFIRM_ENV, raising=False)
    monkeypatch.delenv(PUBLISHED_CONFIRM_ENV, raising=False)
    printed: list[str] = []
    estimate = estimate_cost(PAID, 10, 1000, 1000)
    with pytest.raises(SpendNotConfirmedError, match=CONFIRM_ENV) as err:
        cost_gate(PAID, estimate, echo=printed.append)
    assert err.value.estimate == estimate
    # PROTOCOL §7: the published dry-run shape, keyed by the model slug
    assert json.loads(printed[0].split(": ", 1)[1]) == {PAID.model: estimate, "total_usd": estimate["usd"]}


@pytest.mark.parametrize("env", [CONFIRM_ENV, PUBLISHED_CONFIRM_ENV])
def test_cost_gate_passes_with_flag_or_either_env_and_ignores_loopback(monkeypatch, env):
    monkeypatch.delenv(CONFIRM_ENV, raising=False)
    monkeypatch.delenv(PUBLISHED_CONFIRM_ENV, raising=False)
    estimate = estimate_cost(PAID, 10, 1000, 1000)
    assert cost_gate(PAID, estimate, confirm=True, echo=lambda s: None) is True
    monkeypatch.setenv(env, "1")
    assert cost_gate(PAID, estimate, echo=lambda s: None) is True
    monkeypatch.delenv(env)
    printed: list[str] = []
    local = EndpointConfig("http://127.0.0.1:8080/v1", "smollm2")
    assert cost_gate(local, estimate, echo=printed.append) is False and printed == []
    assert EndpointConfig("http://localhost:1/v1", "m").is_local and not PAID.is_local


def test_the_tool_call_probe_tells_a_tool_calling_endpoint_from_one_that_ignores_tools(scripted):
    calls = scripted(
        lambda body: (
            200,
            completion(
                None,
                tool_calls=[
                    {"id": "c", "type": "function", "function": {"name": "get_time", "arguments": '{"city": "Bern"}'}}
                ],
            ),
        )
    )
    ignores = scripted(lambda body: (200, completion("It is noon.")))
    assert _client(calls).supports_tool_calls() is True
    assert calls.hits[0]["tools"][0]["function"]["name"] == "get_time"
    assert _client(ignores).supports_tool_calls() is False
