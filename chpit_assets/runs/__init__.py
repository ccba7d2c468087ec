"""Runs (R1, R3, PROTOCOL §4-§8): a model client, the six systems, resumable scored runs with receipts,
the §6 subsample and the §8 run report.

Public API: `EndpointConfig`, `ChatClient`, `cost_gate`, `estimate_cost`, `parse_system_key`,
`build_system`, `prepare_system`, `run_items`, `load_log`, `read_log`, `winners`, `results_path`,
`scored_view`, and the typed errors in `errors`. `sample.select_items` (§6) and `run_report.run_report`
(§8) are imported from their modules: they load the item builder, which a bad CLI argument must not wait for.
"""

from .client import CONFIRM_ENV, PUBLISHED_CONFIRM_ENV, ChatClient, EndpointConfig, cost_gate, estimate_cost
from .errors import (
    EndpointUnreachableError,
    MissingApiKeyError,
    ModelCallError,
    RunError,
    RunLogError,
    SpendNotConfirmedError,
    ToolCallsUnsupportedError,
    UnknownSystemError,
    UnpricedModelError,
)
from .runner import (
    load_log,
    prepare_system,
    read_log,
    results_path,
    run_items,
    scored_path,
    scored_view,
    winners,
)
from .systems import build_system, parse_system_key

__all__ = [
    "CONFIRM_ENV",
    "PUBLISHED_CONFIRM_ENV",
    "ChatClient",
    "EndpointConfig",
    "EndpointUnreachableError",
    "MissingApiKeyError",
    "ModelCallError",
    "RunError",
    "RunLogError",
    "SpendNotConfirmedError",
    "ToolCallsUnsupportedError",
    "UnknownSystemError",
    "UnpricedModelError",
    "build_system",
    "cost_gate",
    "estimate_cost",
    "load_log",
    "parse_system_key",
    "prepare_system",
    "read_log",
    "results_path",
    "run_items",
    "scored_path",
    "scored_view",
    "winners",
]
