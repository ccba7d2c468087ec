"""Typed errors of the runners. Each message names what failed (system key, endpoint, item)."""

from __future__ import annotations


class RunError(RuntimeError):
    """Base class: a run could not start or an answer could not be obtained."""


class UnknownSystemError(RunError):
    """A system key that the registry cannot parse, or whose model has no configured endpoint."""


class MissingApiKeyError(RunError):
    """The endpoint config names an API-key environment variable that is unset or empty."""


class EndpointUnreachableError(RunError):
    """The endpoint did not answer a pre-flight request (refused, DNS, timeout, rejected key)."""


class SpendNotConfirmedError(RunError):
    """A run against a paid (non-loopback) endpoint without explicit confirmation (R3)."""

    def __init__(self, message: str, estimate: dict):
        super().__init__(message)
        self.estimate = estimate


class ModelCallError(RunError):
    """One chat call failed after its retries, or the reply was malformed. Recorded on the item's line."""


class UnpricedModelError(RunError):
    """A paid endpoint without a price: its spend could not be estimated, so nothing is asked (PROTOCOL §7)."""


class ToolCallsUnsupportedError(RunError):
    """An agentic run against an endpoint that returns no tool call for a trivial tool (issue 14 item 5)."""


class RunLogError(RunError):
    """A run log that cannot be trusted: an unparseable interior line, or settings that differ from
    this run's (PROTOCOL §7, issue 14 item 4). Names the file, and the line or the settings."""
