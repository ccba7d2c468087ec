"""HTTP plumbing shared by the SPARQL client and the edition downloader.

One retry loop for both, so "what is transient" and "how long do we wait" are
decided in one place: 429, 5xx gateway/overload answers, timeouts and dropped
connections are retried a bounded number of times with exponential backoff;
every other answer goes back to the caller, who knows what it means (a 400
from the SPARQL endpoint is not the same thing as a 404 from the filestore).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

USER_AGENT = "chpit/0.1 (CH-PiT benchmark build; +https://fedlex.data.admin.ch)"

Sleep = Callable[[float], None]


class FedlexHttpError(RuntimeError):
    """An HTTP exchange with Fedlex failed for good. Names what we asked for and where."""

    def __init__(self, detail: str, *, url: str, purpose: str, status: int | None = None):
        self.detail = detail
        self.url = url
        self.purpose = purpose
        self.status = status
        where = f"HTTP {status}" if status is not None else "no answer"
        super().__init__(f"{purpose}: {url}: {where}: {detail}")


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # total tries, not retries: 1 means "no retry"
    base_delay: float = 1.0  # first backoff; doubles each try
    max_delay: float = 60.0  # cap of our own backoff
    max_retry_after: float = 300.0  # a server asking for a longer pause than this is not waited for
    jitter: float = 0.1  # +-fraction, so parallel workers do not retry in lockstep
    retry_statuses: frozenset[int] = frozenset({429, 500, 502, 503, 504})

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"RetryPolicy.attempts must be >= 1, got {self.attempts}")

    def backoff(self, attempt: int) -> float:
        """Delay before try `attempt + 1` (attempt counts from 1)."""
        delay = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        if self.jitter:
            delay *= 1 + random.uniform(-self.jitter, self.jitter)
        return max(0.0, delay)


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds asked for by a Retry-After header (delta-seconds or an HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


# UnsupportedProtocol is a TransportError too, but retrying it can never help.
_PERMANENT_TRANSPORT = (httpx.UnsupportedProtocol,)


def request_with_retry(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    purpose: str,
    policy: RetryPolicy,
    sleep: Sleep = time.sleep,
    on_retry: Callable[[int, str], None] | None = None,
    **kwargs,
) -> httpx.Response:
    """Send one request, retrying transient failures; return the first non-transient response.

    Raises FedlexHttpError when the tries are used up (the last status or
    transport error is in the message) or when the server asks us to wait
    longer than `policy.max_retry_after`.
    """
    last = ""
    last_status: int | None = None
    for attempt in range(1, policy.attempts + 1):
        try:
            response = client.request(method, url, **kwargs)
        except _PERMANENT_TRANSPORT as exc:
            raise FedlexHttpError(f"{type(exc).__name__}: {exc}", url=url, purpose=purpose) from exc
        except httpx.TransportError as exc:  # timeouts, refused/dropped connections, truncated bodies
            last, last_status = f"{type(exc).__name__}: {str(exc) or 'no detail'}", None
            delay = policy.backoff(attempt)
        else:
            if response.status_code not in policy.retry_statuses:
                return response
            last, last_status = f"transient answer: {response.text[:200]!r}", response.status_code
            delay = policy.backoff(attempt)
            asked = retry_after_seconds(response.headers.get("Retry-After"))
            if asked is not None:
                if asked > policy.max_retry_after:
                    raise FedlexHttpError(
                        f"server asks to retry after {asked:.0f}s, more than the {policy.max_retry_after:.0f}s we wait",
                        url=url,
                        purpose=purpose,
                        status=response.status_code,
                    )
                # The server knows its own rate window better than our backoff does.
                delay = max(delay, asked)
        if attempt == policy.attempts:
            break
        if on_retry is not None:
            on_retry(attempt, last)
        sleep(delay)
    raise FedlexHttpError(
        f"gave up after {policy.attempts} tries; last: {last}", url=url, purpose=purpose, status=last_status
    )


def new_client(timeout: float) -> httpx.Client:
    """An httpx client with our User-Agent; redirects followed (the filestore redirects)."""
    return httpx.Client(timeout=timeout, headers={"User-Agent": USER_AGENT}, follow_redirects=True)


class FedlexHttpUser:
    """Owns an httpx client (or borrows the caller's), with retry settings and a context manager."""

    def __init__(self, http: httpx.Client | None, timeout: float, retry: RetryPolicy, sleep: Sleep):
        self._own_http = http is None
        self._http = http
        self._timeout = timeout
        self._http_lock = threading.Lock()
        self.retry = retry
        self.sleep = sleep

    @property
    def http(self) -> httpx.Client:
        # Built on first use: a run answered from the cache never loads the TLS certificates.
        with self._http_lock:
            if self._http is None:
                self._http = new_client(self._timeout)
            return self._http

    def close(self) -> None:
        if self._own_http and self._http is not None:  # a borrowed client is the caller's to close
            self._http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
