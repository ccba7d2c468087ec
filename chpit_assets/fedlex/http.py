"""HTTP plumbing shared by the SPARQL client and the edition downloader.

One retry loop for both, with the project's one policy (chpit_assets.retry: what is
transient, how long to wait): 429, 5xx gateway/overload answers, timeouts and dropped
connections are retried a bounded number of times with exponential backoff;
every other answer goes back to the caller, who knows what it means (a 400
from the SPARQL endpoint is not the same thing as a 404 from the filestore).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import httpx

from chpit_assets.retry import RetryAfterTooLong, RetryPolicy

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
            try:
                delay = policy.delay(attempt, response.headers.get("Retry-After"))
            except RetryAfterTooLong as exc:
                raise FedlexHttpError(str(exc), url=url, purpose=purpose, status=response.status_code) from None
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
