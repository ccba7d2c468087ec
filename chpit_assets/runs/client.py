"""A client for any OpenAI-compatible chat-completions endpoint (R3).

One `ChatClient` per endpoint, shared by the worker threads of a run (httpx's
`Client` is thread-safe and pools connections). Every reply records what the
endpoint says actually happened -- the model that answered, the provider, tokens,
cost -- because a router may serve a pinned slug from a different backend.
"""

from __future__ import annotations

import ipaddress
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import httpx

from .errors import (
    EndpointUnreachableError,
    MissingApiKeyError,
    ModelCallError,
    SpendNotConfirmedError,
)

CONFIRM_ENV = "CHPIT_CONFIRM_SPEND"
"""Setting this to `1` is the explicit confirmation the cost gate asks for (same as `confirm=True`)."""

_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


@dataclass(frozen=True)
class EndpointConfig:
    """Where and how to ask a model. Prices are USD per million tokens and only feed the estimate."""

    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int = 8192
    retry_max_tokens: int = 16384  # one retry at this budget when the reply was cut off (finish_reason "length")
    timeout_s: float = 120.0
    max_retries: int = 3
    backoff_s: float = 1.0
    price_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    extra_body: Mapping[str, Any] = field(default_factory=dict)  # e.g. {"reasoning": {"effort": "minimal"}}

    @property
    def host(self) -> str:
        return urlparse(self.base_url).hostname or ""

    @property
    def is_local(self) -> bool:
        """A loopback endpoint costs nothing, so the cost gate lets it through without confirmation."""
        host = self.host
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def api_key(self) -> str | None:
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise MissingApiKeyError(
                f"endpoint {self.base_url} (model {self.model}) needs an API key in ${self.api_key_env}, which is unset or empty"
            )
        return key

    def settings(self) -> dict:
        """The settings a result receipt records (never the key)."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "retry_max_tokens": self.retry_max_tokens,
            "max_retries": self.max_retries,
            **({"extra_body": dict(self.extra_body)} if self.extra_body else {}),
        }


@dataclass(frozen=True)
class ChatReply:
    """One completed chat call, after retries."""

    content: str | None
    tool_calls: list[dict]
    finish_reason: str | None
    model: str | None  # the model that actually answered (response `model`)
    provider: str  # response `provider` when the endpoint names one, else the endpoint's host
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None  # as reported by the endpoint (`usage.cost`), never estimated
    latency_s: float
    attempts: int
    max_tokens: int

    def record(self) -> dict:
        return {
            "model": self.model,
            "provider": self.provider,
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
            "latency_s": round(self.latency_s, 4),
            "attempts": self.attempts,
            "max_tokens": self.max_tokens,
        }


def _reported_cost(body: dict, usage: dict) -> float | None:
    # OpenRouter reports usage.cost; some proxies use usage.total_cost or a top-level cost.
    for value in (usage.get("cost"), usage.get("total_cost"), body.get("cost")):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


class ChatClient:
    def __init__(
        self,
        config: EndpointConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.config = config
        key = config.api_key()  # MissingApiKeyError here, before any request
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(
            base_url=config.base_url.rstrip("/") + "/",
            headers=headers,
            timeout=config.timeout_s,
            transport=transport,
        )
        self._sleep = sleep

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def check(self) -> None:
        """Pre-flight: the endpoint answers and accepts the key. Raises EndpointUnreachableError.

        Uses GET models, which costs nothing; a 404 still proves something is listening there."""
        try:
            resp = self._http.get("models", timeout=min(self.config.timeout_s, 10.0))
        except httpx.HTTPError as exc:
            raise EndpointUnreachableError(f"endpoint {self.config.base_url} is unreachable: {exc!r}") from exc
        if resp.status_code in (401, 403):
            raise EndpointUnreachableError(
                f"endpoint {self.config.base_url} rejected the API key from ${self.config.api_key_env} (HTTP {resp.status_code})"
            )

    def chat(self, messages: list[dict], *, tools: list[dict] | None = None, tool_choice: str | None = None) -> ChatReply:
        """One completion at temperature 0; retried once with the larger budget when cut off (R3)."""
        reply = self._complete(messages, tools, tool_choice, self.config.max_tokens)
        if reply.finish_reason == "length" and self.config.retry_max_tokens > self.config.max_tokens:
            retry = self._complete(messages, tools, tool_choice, self.config.retry_max_tokens)
            # Both calls were paid for, so tokens, cost and latency add up.
            reply = ChatReply(
                content=retry.content,
                tool_calls=retry.tool_calls,
                finish_reason=retry.finish_reason,
                model=retry.model,
                provider=retry.provider,
                prompt_tokens=_add(reply.prompt_tokens, retry.prompt_tokens),
                completion_tokens=_add(reply.completion_tokens, retry.completion_tokens),
                cost=_add(reply.cost, retry.cost),
                latency_s=reply.latency_s + retry.latency_s,
                attempts=reply.attempts + retry.attempts,
                max_tokens=retry.max_tokens,
            )
        return reply

    def _complete(self, messages, tools, tool_choice, max_tokens: int) -> ChatReply:
        payload: dict[str, Any] = {
            **dict(self.config.extra_body),
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": max_tokens,
        }
        if tools:
            payload["tools"] = tools
        if tool_choice:
            payload["tool_choice"] = tool_choice
        started = time.monotonic()
        last_problem = ""
        for attempt in range(1, self.config.max_retries + 2):
            try:
                resp = self._http.post("chat/completions", json=payload)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                last_problem = f"{type(exc).__name__}: {exc}"
                retry_after = None
            else:
                if resp.status_code == 200:
                    return self._parse(resp, attempt, time.monotonic() - started, max_tokens)
                last_problem = f"HTTP {resp.status_code}: {resp.text[:300]}"
                if resp.status_code not in _RETRY_STATUS:
                    raise ModelCallError(f"{self.config.base_url} model {self.config.model}: {last_problem}")
                retry_after = _retry_after(resp)
            if attempt <= self.config.max_retries:
                delay = self.config.backoff_s * 2 ** (attempt - 1)
                self._sleep(min(60.0, retry_after if retry_after is not None else delay))
        raise ModelCallError(
            f"{self.config.base_url} model {self.config.model}: gave up after {self.config.max_retries + 1} attempts, last: {last_problem}"
        )

    def _parse(self, resp: httpx.Response, attempts: int, latency: float, max_tokens: int) -> ChatReply:
        try:
            body = resp.json()
            choice = body["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelCallError(
                f"{self.config.base_url} model {self.config.model}: malformed reply ({exc!r}): {resp.text[:300]}"
            ) from exc
        if not isinstance(message, dict):
            raise ModelCallError(f"{self.config.base_url}: malformed reply, message is {type(message).__name__}")
        usage = body.get("usage") or {}
        provider = body.get("provider")
        return ChatReply(
            content=message.get("content"),
            tool_calls=list(message.get("tool_calls") or []),
            finish_reason=choice.get("finish_reason"),
            model=body.get("model"),
            provider=provider if isinstance(provider, str) and provider else self.config.host,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            cost=_reported_cost(body, usage),
            latency_s=latency,
            attempts=attempts,
            max_tokens=max_tokens,
        )


def _add(a, b):
    if a is None and b is None:
        return None
    return (a or 0) + (b or 0)


def _retry_after(resp: httpx.Response) -> float | None:
    try:
        return max(0.0, float(resp.headers.get("retry-after", "")))
    except ValueError:
        return None


def estimate_cost(config: EndpointConfig, n_items: int, input_tokens: int, output_tokens: int) -> dict:
    """The estimate the cost gate prints: token totals are over all items, prices from the config."""
    usd = input_tokens / 1e6 * config.price_input_per_mtok + output_tokens / 1e6 * config.price_output_per_mtok
    return {
        "endpoint": config.base_url,
        "model": config.model,
        "items": n_items,
        "est_input_tokens": input_tokens,
        "est_output_tokens": output_tokens,
        "price_input_per_mtok": config.price_input_per_mtok,
        "price_output_per_mtok": config.price_output_per_mtok,
        "est_cost_usd": round(usd, 4),
    }


def cost_gate(config: EndpointConfig, estimate: dict, *, confirm: bool = False, echo: Callable[[str], None] | None = None) -> bool:
    """R3: before a run against a non-loopback endpoint, print the estimate and refuse without confirmation.

    Returns True when the run may spend money (confirmed), False for a free local endpoint."""
    if config.is_local:
        return False
    (echo or (lambda s: print(s, file=sys.stderr)))("CH-PiT cost estimate: " + json.dumps(estimate, sort_keys=True))
    if confirm or os.environ.get(CONFIRM_ENV) == "1":
        return True
    raise SpendNotConfirmedError(
        f"refusing to run {estimate['items']} items against {config.base_url} (est. ${estimate['est_cost_usd']}) "
        f"without confirmation: pass confirm=True (--confirm) or set {CONFIRM_ENV}=1",
        estimate,
    )
