"""The model client against a scripted loopback server (R3): retries, the truncated-reply retry,
what a reply records, pre-flight errors and the cost gate."""

from __future__ import annotations

import json
import socket

import pytest

from chpit_assets.runs.client import (
    CONFIRM_ENV,
    ChatClient,
    EndpointConfig,
    cost_gate,
    estimate_cost,
)
from chpit_assets.runs.errors import (
    EndpointUnreachableError,
    MissingApiKeyError,
    ModelCallError,
    SpendNotConfirmedError,
    UnknownSystemError,
)
from chpit_assets.runs.runner import prepare_system

from .conftest import completion

MESSAGES = [{"role": "user", "content": "Wie lautet Art. 24 DSG?"}]


def _client(server, sleeps: list | None = None, **overrides) -> ChatClient:
    config = EndpointConfig(base_url=server.base_url, model="m", backoff_s=0.5, **overrides)
    return ChatClient(config, sleep=(sleeps.append if sleeps is not None else lambda s: None))


def test_reply_records_answering_model_provider_tokens_cost_and_settings(scripted):
    server = scripted(lambda body: (200, completion("1 Text.", model="vendor/m-2025", provider="Fireworks",
                                                     cost=0.0012, prompt_tokens=40, completion_tokens=7)))
    reply = _client(server).chat(MESSAGES)
    assert (reply.content, reply.model, reply.provider, reply.cost) == ("1 Text.", "vendor/m-2025", "Fireworks", 0.0012)
    assert (reply.prompt_tokens, reply.completion_tokens, reply.attempts) == (40, 7, 1)
    sent = server.hits[0]
    assert sent["temperature"] == 0 and sent["max_tokens"] == 8192 and sent["model"] == "m"


def test_provider_falls_back_to_the_host_and_cost_stays_unknown(scripted):
    server = scripted(lambda body: (200, completion("x")))
    reply = _client(server).chat(MESSAGES)
    assert reply.provider == "127.0.0.1" and reply.cost is None


def test_429_and_5xx_are_retried_with_exponential_backoff(scripted):
    statuses = iter([429, 503, 200])

    def respond(body):
        status = next(statuses)
        return (status, completion("ok")) if status == 200 else (status, {"error": "busy"})

    sleeps: list[float] = []
    reply = _client(scripted(respond), sleeps).chat(MESSAGES)
    assert reply.content == "ok" and reply.attempts == 3
    assert sleeps == [0.5, 1.0]


def test_retries_are_bounded_then_a_typed_error(scripted):
    server = scripted(lambda body: (502, "bad gateway"))
    with pytest.raises(ModelCallError, match="gave up after 3 attempts.*HTTP 502"):
        _client(server, max_retries=2).chat(MESSAGES)
    assert len(server.hits) == 3


def test_a_4xx_is_not_retried(scripted):
    server = scripted(lambda body: (400, {"error": "bad request"}))
    with pytest.raises(ModelCallError, match="HTTP 400"):
        _client(server).chat(MESSAGES)
    assert len(server.hits) == 1


def test_a_truncated_reply_is_retried_once_with_16384_tokens(scripted):
    def respond(body):
        return 200, completion("cut", finish_reason="length") if body["max_tokens"] == 8192 else completion("whole")

    server = scripted(respond)
    reply = _client(server).chat(MESSAGES)
    assert [h["max_tokens"] for h in server.hits] == [8192, 16384]
    assert (reply.content, reply.max_tokens, reply.prompt_tokens, reply.completion_tokens) == ("whole", 16384, 20, 10)


def test_a_second_truncation_is_not_retried_again(scripted):
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
        prepare_system("m/closed", [], endpoints={"m": EndpointConfig(server.base_url, "m", api_key_env="CHPIT_TEST_KEY")})
    assert server.hits == []


def test_api_key_is_sent_as_bearer(scripted, monkeypatch):
    seen = []
    server = scripted(lambda body: (200, completion("x")))
    monkeypatch.setenv("CHPIT_TEST_KEY", "sk-test")
    client = ChatClient(EndpointConfig(server.base_url, "m", api_key_env="CHPIT_TEST_KEY"))
    client._http.event_hooks["request"].append(lambda req: seen.append(req.headers["authorization"]))
    client.chat(MESSAGES)
    assert seen == ["Bearer sk-test"]


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


PAID = EndpointConfig("https://openrouter.example/api/v1", "anthropic/claude-haiku-4.5",
                      price_input_per_mtok=1.0, price_output_per_mtok=5.0)


def test_cost_estimate_is_items_times_tokens_times_price():
    estimate = estimate_cost(PAID, 1500, 1_500_000, 300_000)
    assert estimate["est_cost_usd"] == 1.5 + 1.5 and estimate["items"] == 1500


def test_cost_gate_prints_the_estimate_and_refuses_without_confirmation(monkeypatch):
    monkeypatch.delenv(CONFIRM_ENV, raising=False)
    printed: list[str] = []
    estimate = estimate_cost(PAID, 10, 1000, 1000)
    with pytest.raises(SpendNotConfirmedError, match=CONFIRM_ENV) as err:
        cost_gate(PAID, estimate, echo=printed.append)
    assert err.value.estimate == estimate
    assert json.loads(printed[0].split(": ", 1)[1])["est_cost_usd"] == estimate["est_cost_usd"]


def test_cost_gate_passes_with_flag_or_env_and_ignores_loopback(monkeypatch):
    estimate = estimate_cost(PAID, 10, 1000, 1000)
    assert cost_gate(PAID, estimate, confirm=True, echo=lambda s: None) is True
    monkeypatch.setenv(CONFIRM_ENV, "1")
    assert cost_gate(PAID, estimate, echo=lambda s: None) is True
    monkeypatch.delenv(CONFIRM_ENV)
    printed: list[str] = []
    local = EndpointConfig("http://127.0.0.1:8080/v1", "smollm2")
    assert cost_gate(local, estimate, echo=printed.append) is False and printed == []
    assert EndpointConfig("http://localhost:1/v1", "m").is_local and not PAID.is_local
