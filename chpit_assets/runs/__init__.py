"""Runs (R1, R3): a model client, the six systems, resumable scored runs with receipts.

Public API: `EndpointConfig`, `ChatClient`, `cost_gate`, `parse_system_key`, `build_system`,
`prepare_system`, `run_items`, `results_path`, `scored_view`, and the typed errors in `errors`.
"""

from .client import CONFIRM_ENV, ChatClient, EndpointConfig, cost_gate, estimate_cost
from .errors import (
    EndpointUnreachableError,
    MissingApiKeyError,
    ModelCallError,
    RunError,
    SpendNotConfirmedError,
    UnknownSystemError,
)
from .runner import (
    load_log,
    prepare_system,
    results_path,
    run_items,
    scored_path,
    scored_view,
)
from .systems import build_system, parse_system_key

__all__ = [
    "CONFIRM_ENV", "ChatClient", "EndpointConfig", "EndpointUnreachableError", "MissingApiKeyError",
    "ModelCallError", "RunError", "SpendNotConfirmedError", "UnknownSystemError", "build_system",
    "cost_gate", "estimate_cost", "load_log", "parse_system_key", "prepare_system", "results_path",
    "run_items", "scored_path", "scored_view",
]
