"""The run launcher's fork server (orchestration/launcher.py), startable before Dagster is imported.

Standard library only: `python -m chpit_assets run|nightly` starts it first thing, so its import of
Dagster and the code location (2-3 s, more under load) runs on the other core while the command's
own process imports the same, instead of after it, when the first run is launched (issue 27.2).
Started by a command whose runs a daemon then launches, it stays idle and exits with the command.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import multiprocessing.forkserver

PRELOAD = [
    "dagster",
    "chpit_assets.definitions",
    "chpit_assets.orchestration.preload",
    "chpit_assets.orchestration.launcher",
]
"""What the fork server imports once: the code location, its repository and jobs resolved (preload),
and the launcher last (so it sees what the others loaded; it also imports what every run imports
before its first step, `launcher.RUN_IMPORTS`); a run whose code location is another module imports
it itself."""


def context() -> multiprocessing.context.ForkServerContext:
    """The forkserver context, with the preload set (it applies to a server not started yet)."""
    found = multiprocessing.get_context("forkserver")
    found.set_forkserver_preload(PRELOAD)
    return found


def start() -> None:
    """Start this process's fork server unless it runs already; returns at once (the server imports
    PRELOAD in its own process; the first fork waits for it). Idempotent."""
    context()
    multiprocessing.forkserver.ensure_running()
