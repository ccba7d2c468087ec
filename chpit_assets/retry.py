"""One retry policy for every HTTP client here: Fedlex (SPARQL, filestore) and model endpoints.

What is transient (a status set), how long to wait (exponential backoff with a cap and optional
jitter, raised to what a Retry-After header asks, in either of its forms), and when to give up (a
number of tries; a server asking for a longer pause than `max_retry_after`). Each client keeps its
own loop, because what a response means differs (a model's error code can sit in a 200 body), but
none decides these numbers itself. Plain standard library: httpx's transport retries only
connection failures, and tenacity would replace these twenty lines with a dependency.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


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

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """The wait before try `attempt + 1`: our backoff, or longer when the server asks for it.

        Raises RetryAfterTooLong when the server asks for more than `max_retry_after` seconds."""
        delay = self.backoff(attempt)
        asked = retry_after_seconds(retry_after)
        if asked is None:
            return delay
        if asked > self.max_retry_after:
            raise RetryAfterTooLong(asked, self.max_retry_after)
        return max(delay, asked)  # the server knows its own rate window better than our backoff does


class RetryAfterTooLong(Exception):
    def __init__(self, asked: float, limit: float):
        super().__init__(f"server asks to retry after {asked:.0f}s, more than the {limit:.0f}s we wait")
        self.asked, self.limit = asked, limit


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
