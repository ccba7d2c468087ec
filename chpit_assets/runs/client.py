"""A client for any OpenAI-compatible chat-completions endpoint (R3).

One `ChatClient` per endpoint, shared by the worker threads of a run (httpx's
`Client` is thread-safe and pools connections). Every reply records what the
endpoint says actually happened -- the model that answered, the provider, tokens,
cost -- because a router may serve a pinned slug from a different backend.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import httpx

from chpit_assets.retry import RetryAfterTooLong, RetryPolicy

from .errors import (
    EndpointUnreachableError,
    MissingApiKeyError,
    ModelCallError,
    SpendNotConfirmedError,
    UnpricedModelError,
)

CONFIRM_ENV = "CHPIT_CONFIRM_SPEND"
"""Setting this to `1` is the explicit confirmation the cost gate asks for (same as `confirm=True`)."""
PUBLISHED_CONFIRM_ENV = "CHPIT_CONFIRM"
"""The published runs' name for the same confirmation (PROTOCOL §7); either variable set to `1` confirms."""

# PROTOCOL §4: retried when the HTTP status or an error code in the body is one of these.
RETRY_CODES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
# PROTOCOL §4: five retries sleeping 1, 2, 4, 8, 16 s (no jitter: the published schedule), then the call
# raises; a longer Retry-After is honoured up to five minutes.
MODEL_RETRY = RetryPolicy(attempts=6, base_delay=1.0, max_delay=16.0, jitter=0.0, retry_statuses=RETRY_CODES)
NO_RETRY = RetryPolicy(attempts=1)
MAX_TOKENS_LADDER = (8192, 16384)  # PROTOCOL §4: one re-ask at the larger budget
REDACTED = "REDACTED"
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""The largest model answer read (docs/limits.md): a reply at the 16,384-token budget is well under
1 MB; past this the endpoint is misbehaving and the call fails instead of filling memory."""
# A secret in a query string an endpoint might echo in what it reports (`?api_key=...` in a served
# model name): the value is replaced even when it is not one we sent.
_QUERY_SECRET = re.compile(r"(?i)([\w.-]*(?:key|token|secret|password|passwd|auth))=([^&\s\"']+)")


def redact_url(url: str) -> str:
    """The URL with its secrets replaced (issue 15 item 5): user info and every query value.

    Routers accept a key as `https://user:key@host/...` or `...?key=...`; either must never reach a
    receipt, a log line or Dagster metadata."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    query = urlencode([(k, REDACTED) for k, _ in parse_qsl(parts.query, keep_blank_values=True)])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str) -> list[str]:
    """The secret substrings of `url` (password, user, query values, and the base64 `user:password`
    of Basic auth), longest first, for scrubbing text."""
    parts = urlsplit(url)
    found = [parts.password, parts.username, *(v for _, v in parse_qsl(parts.query))]
    found += [quote(s, safe="") for s in list(found) if s]
    if parts.username is not None or parts.password is not None:
        found.append(_basic(parts.username or "", parts.password or ""))
    return sorted({s for s in found if s}, key=len, reverse=True)


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


@dataclass(frozen=True)
class EndpointConfig:
    """Where and how to ask a model. Prices are USD per million tokens (PROTOCOL §7)."""

    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int = MAX_TOKENS_LADDER[0]
    retry_max_tokens: int = MAX_TOKENS_LADDER[1]  # one re-ask at this budget (PROTOCOL §4)
    timeout_s: float = 120.0
    retry: RetryPolicy = MODEL_RETRY
    reasoning_effort: str | None = "minimal"  # PROTOCOL §4 `reasoning: {effort}`; None sends no `reasoning`
    price_input_per_mtok: float | None = None  # None = unpriced (refused for a paid endpoint, §7)
    price_output_per_mtok: float | None = None
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    server: Mapping[str, Any] = field(default_factory=dict)  # what serves a local model (weights sha256, version)
    cutoff: str | None = None  # the model's training cutoff, ISO date (issue 25); recorded, never sent

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).hostname or ""

    @property
    def public_url(self) -> str:
        """`base_url` as it may be written anywhere."""
        return redact_url(self.base_url)

    @property
    def model_short(self) -> str:
        """The published runs' slug: the model name after its last `/` (PROTOCOL §7)."""
        return self.model.rsplit("/", 1)[-1]

    @property
    def is_local(self) -> bool:
        """A loopback endpoint costs nothing: no price needed, no confirmation asked."""
        host = self.host
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    @property
    def priced(self) -> bool:
        return self.price_input_per_mtok is not None and self.price_output_per_mtok is not None

    def usd(self, input_tokens: int, output_tokens: int) -> float:
        """Tokens x price (PROTOCOL §7); an unpriced endpoint (a free local one) costs 0."""
        return input_tokens / 1e6 * (self.price_input_per_mtok or 0.0) + output_tokens / 1e6 * (
            self.price_output_per_mtok or 0.0
        )

    def api_key(self) -> str | None:
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise MissingApiKeyError(
                f"endpoint {self.public_url} (model {self.model}) needs an API key in ${self.api_key_env}, which is unset or empty"
            )
        return key

    def secrets(self) -> list[str]:
        """Every string that must never be written: the URL's secrets and the API key, also in base64
        and JSON-escaped, longest first."""
        found = set(url_secrets(self.base_url))
        key = os.environ.get(self.api_key_env or "", "").strip() if self.api_key_env else ""
        if key:
            found |= {key, base64.b64encode(key.encode()).decode("ascii")}
        found |= {json.dumps(s, ensure_ascii=False)[1:-1] for s in found}
        return sorted((s for s in found if s), key=len, reverse=True)

    def scrub(self, text: str) -> str:
        """`text` with the URL's secrets and the API key replaced, for error messages."""
        for secret in self.secrets():
            text = text.replace(secret, REDACTED)
        return text

    def redact_line(self, line: dict) -> dict:
        """A result line with every secret replaced, wherever an endpoint echoed it (issue 23 item 8):
        the answer, the served model's name, the call log. A query-string secret in what the endpoint
        reports about itself (model, provider) is replaced even when it is not one we sent."""
        text = self.scrub(json.dumps(line, ensure_ascii=False))
        out = json.loads(text)
        # The line's `model` is our setting; `served_model` and each call's `model` are the endpoint's word.
        reported = [(out, ("served_model", "provider"))] + [
            (c, ("model", "provider")) for c in out.get("call_log") or []
        ]
        for record, names in reported:
            for name in names:
                if isinstance(record.get(name), str):
                    record[name] = _QUERY_SECRET.sub(rf"\1={REDACTED}", record[name])
        return out

    def settings(self) -> dict:
        """What a result receipt records and a resumed run must match (never a key or a credential)."""
        return {
            "base_url": self.public_url,
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens_ladder": [self.max_tokens, self.retry_max_tokens],
            "reasoning_effort": self.reasoning_effort,
            **({"extra_body": dict(self.extra_body)} if self.extra_body else {}),
            **({"server": dict(self.server)} if self.server else {}),
        }


@dataclass(frozen=True)
class ChatReply:
    """One completed chat call, after retries (and the §4 re-ask at the larger budget)."""

    content: str | None
    tool_calls: list[dict]
    finish_reason: str | None
    model: str | None  # the model that actually answered (response `model`)
    provider: str  # response `provider` when the endpoint names one, else the endpoint's host
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None  # as reported by the endpoint (`usage.cost`), never estimated
    latency_s: float  # time spent in requests; the back-off sleeps between retries are not in it (§7)
    attempts: int
    max_tokens: int
    message: dict = field(default_factory=dict)  # the assistant message verbatim (PROTOCOL §5 appends it)
    requests: int = 1  # completions paid for (2 after the §4 re-ask)
    retries: int = 0  # failed attempts retried before them (§4 backoff)

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


def _body_error_code(body: Any) -> int | None:
    """The numeric code of an `{"error": {"code": ...}}` body (OpenRouter answers some failures with 200)."""
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    try:
        return int(code)  # type: ignore[arg-type]  # whatever the body holds; not a number is None below
    except (TypeError, ValueError):
        return None


def _blank(reply: ChatReply) -> bool:
    return not reply.tool_calls and not (reply.content or "").strip()


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
        # httpx would glue a base URL's query onto every path, so query keys travel as params.
        parts = urlsplit(config.base_url)
        # User info in the URL is Basic auth, which httpx would put in place of the Bearer key: the
        # key named by api_key_env wins, and the user info is sent only when there is no key.
        basic = (parts.username or "", parts.password or "") if parts.username or parts.password else None
        host = parts.netloc.rsplit("@", 1)[-1]
        self._http = httpx.Client(
            base_url=urlunsplit((parts.scheme, host, parts.path.rstrip("/") + "/", "", "")),
            params=parts.query,  # httpx parses it, blank values kept
            headers=headers,
            auth=httpx.BasicAuth(*basic) if basic and not key else None,
            timeout=config.timeout_s,
            transport=transport,
        )
        self._sleep = sleep
        self._backoff = threading.local()  # per worker thread: each answers one item at a time

    def backoff_s(self) -> float:
        """Seconds this thread has slept between retries so far; a line's latency excludes them (§7)."""
        return getattr(self._backoff, "total", 0.0)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _error(self, problem: str) -> ModelCallError:
        return ModelCallError(self.config.scrub(f"{self.config.public_url} model {self.config.model}: {problem}"))

    def check(self) -> None:
        """Pre-flight: the endpoint answers and accepts the key. Raises EndpointUnreachableError.

        Uses GET models, which costs nothing; a 404 still proves something is listening there."""
        url = self.config.public_url
        try:
            resp = self._http.get("models", timeout=min(self.config.timeout_s, 10.0))
        except httpx.HTTPError as exc:
            raise EndpointUnreachableError(self.config.scrub(f"endpoint {url} is unreachable: {exc!r}")) from None
        if resp.status_code in (401, 403):
            raise EndpointUnreachableError(
                f"endpoint {url} rejected the API key from ${self.config.api_key_env} (HTTP {resp.status_code})"
            )

    def chat(
        self, messages: list[dict], *, tools: list[dict] | None = None, tool_choice: str | None = None
    ) -> ChatReply:
        """One completion; re-asked once at the larger budget when cut off (`length`) or blank without
        tool calls, and the second reply accepted whatever it is (PROTOCOL §4)."""
        reply = self._complete(messages, tools, tool_choice, self.config.max_tokens)
        if (reply.finish_reason == "length" or _blank(reply)) and self.config.retry_max_tokens > self.config.max_tokens:
            retry = self._complete(messages, tools, tool_choice, self.config.retry_max_tokens)
            # Both calls were paid for, so tokens, cost and latency add up.
            reply = replace(
                retry,
                prompt_tokens=_add(reply.prompt_tokens, retry.prompt_tokens),
                completion_tokens=_add(reply.completion_tokens, retry.completion_tokens),
                cost=_add(reply.cost, retry.cost),
                latency_s=reply.latency_s + retry.latency_s,
                attempts=reply.attempts + retry.attempts,
                requests=reply.requests + retry.requests,
                retries=reply.retries + retry.retries,
            )
        return reply

    def payload(self, messages, tools, tool_choice, max_tokens: int) -> dict[str, Any]:
        """The request body of PROTOCOL §4: `tools`/`tool_choice` only when set."""
        body: dict[str, Any] = {
            **dict(self.config.extra_body),
            "model": self.config.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": self.config.temperature,
            "usage": {"include": True},
        }
        if tools:
            body["tools"] = tools
        if tool_choice:
            body["tool_choice"] = tool_choice
        if self.config.reasoning_effort:
            body["reasoning"] = {"effort": self.config.reasoning_effort}
        return body

    def _complete(self, messages, tools, tool_choice, max_tokens: int) -> ChatReply:
        payload = self.payload(messages, tools, tool_choice, max_tokens)
        started, slept = time.monotonic(), 0.0
        policy = self.config.retry
        for attempt in range(1, policy.attempts + 1):
            retry_after = None
            try:
                resp = self._post(payload)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                try:
                    body = resp.json()
                except ValueError:
                    body = None
                code = _body_error_code(body)
                if resp.status_code == 200 and code is None:
                    return self._parse(resp, body, attempt, time.monotonic() - started - slept, max_tokens)
                problem = (
                    f"HTTP {resp.status_code}" + (f" (error code {code})" if code else "") + f": {resp.text[:300]}"
                )
                if resp.status_code not in policy.retry_statuses and code not in policy.retry_statuses:
                    raise self._error(problem)
                retry_after = resp.headers.get("Retry-After")
            if attempt == policy.attempts:
                break
            try:
                delay = policy.delay(attempt, retry_after)
            except RetryAfterTooLong as exc:
                raise self._error(f"{problem}; {exc}") from None
            t0 = time.monotonic()
            self._sleep(delay)
            waited = time.monotonic() - t0
            slept += waited
            self._backoff.total = self.backoff_s() + waited
        raise self._error(f"gave up after {policy.attempts} attempts, last: {problem}")

    def _post(self, payload: dict) -> httpx.Response:
        """POST chat/completions, the whole request within `timeout_s` (issue 23 item 8): httpx's
        timeout bounds each read, so an endpoint trickling a byte at a time held a call for minutes.
        The body is read in chunks against one deadline (so the call ends at most one read after
        it) and refused past MAX_RESPONSE_BYTES."""
        deadline = time.monotonic() + self.config.timeout_s
        with self._http.stream("POST", "chat/completions", json=payload) as streamed:
            chunks, size = [], 0
            for chunk in streamed.iter_raw():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise self._error(f"the answer is over {MAX_RESPONSE_BYTES} bytes; refused")
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout(
                        f"the whole request took over --timeout {self.config.timeout_s:g} s ({size} bytes received)",
                        request=streamed.request,
                    )
                chunks.append(chunk)
        # Raw bytes, so the Response decodes any content-encoding itself, once.
        return httpx.Response(
            streamed.status_code, headers=streamed.headers, content=b"".join(chunks), request=streamed.request
        )

    def _parse(self, resp: httpx.Response, body: Any, attempts: int, latency: float, max_tokens: int) -> ChatReply:
        try:
            choice = body["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise self._error(f"malformed reply ({exc!r}): {resp.text[:300]}") from None
        if not isinstance(message, dict):
            raise self._error(f"malformed reply, message is {type(message).__name__}")
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
            message=message,
            retries=attempts - 1,
        )

    def supports_tool_calls(self) -> bool:
        """Issue 14 item 5: does the endpoint answer a trivial tool request with a tool call?
        (llama.cpp without a tool-aware chat template silently drops `tools`.) Free on a local server."""
        probe = [
            {
                "type": "function",
                "function": {
                    "name": "get_time",
                    "description": "Current time in a city.",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                },
            }
        ]
        messages = [{"role": "user", "content": "What time is it in Bern? Use the get_time tool."}]
        body = {**self.payload(messages, probe, "required", 64), "max_tokens": 64}
        try:
            resp = self._http.post("chat/completions", json=body)
            return resp.status_code == 200 and bool(resp.json()["choices"][0]["message"].get("tool_calls"))
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError, AttributeError):
            return False


def _add(a, b):
    if a is None and b is None:
        return None
    return (a or 0) + (b or 0)


def estimate_cost(config: EndpointConfig, n_items: int, input_tokens: int, output_tokens: int) -> dict:
    """PROTOCOL §7/§8 `estimate[<slug>]`: token totals over all items, priced by the config.

    An unpriced paid endpoint is refused here, before any call; a loopback one is free."""
    if not config.priced and not config.is_local:
        raise UnpricedModelError(
            f"no price for model '{config.model}' at {config.public_url}: pass --price-in and --price-out "
            f"(USD per 1M tokens) or set price_input_per_mtok/price_output_per_mtok in the run config"
        )
    return {
        "items": n_items,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "usd": config.usd(input_tokens, output_tokens),
    }


def dry_run_estimate(estimates: Mapping[str, dict]) -> dict:
    """The published estimate object (PROTOCOL §7 dry run, §8 `estimate`): `{<model slug>: {items,
    input_tokens, output_tokens, usd}, ..., total_usd}`, keyed by the slug sent to the endpoint."""
    return {**estimates, "total_usd": sum(e["usd"] for e in estimates.values())}


def spend_confirmed(confirm: bool = False) -> bool:
    return confirm or "1" in (os.environ.get(CONFIRM_ENV), os.environ.get(PUBLISHED_CONFIRM_ENV))


def cost_gate(
    config: EndpointConfig, estimate: dict, *, confirm: bool = False, echo: Callable[[str], None] | None = None
) -> bool:
    """R3, PROTOCOL §7: before a run against a non-loopback endpoint, print the estimate and refuse
    without confirmation (`confirm`, CHPIT_CONFIRM_SPEND=1 or the published CHPIT_CONFIRM=1).

    Returns True when the run may spend money (confirmed), False for a free local endpoint."""
    if config.is_local:
        return False
    shown = dry_run_estimate({config.model: estimate})
    (echo or (lambda s: print(s, file=sys.stderr)))("CH-PiT cost estimate: " + json.dumps(shown, ensure_ascii=False))
    if spend_confirmed(confirm):
        return True
    raise SpendNotConfirmedError(
        f"refusing to run {estimate['items']} items against {config.public_url} (est. ${round(estimate['usd'], 4)}) "
        f"without confirmation: pass --confirm-spend or set {CONFIRM_ENV}=1 (or {PUBLISHED_CONFIRM_ENV}=1)",
        estimate,
    )
