"""Named kill points for the crash harness (tests/faults/, issue 15 point 2).

`kill_point(name)` SIGKILLs the current process when the environment variable CHPIT_KILL_AT
equals `name`, so a test can stop a real build at an exact place -- no `finally`, no `atexit`,
nothing flushed: what a power cut or the OOM killer does. The variable is read once, at import:
in a build it is unset and a kill point costs one comparison.
"""

from __future__ import annotations

import os
import signal

ENV = "CHPIT_KILL_AT"

KILL_POINTS: tuple[str, ...] = (
    "ingest.transaction",  # inside a language's store transaction, before it commits
    "items.write",  # before bench-{lang}.jsonl is written
    "publish.dataset_write",  # while the new publication is staged (after its first file)
    "publish.swap_aside",  # after data/publish -> data/publish.previous, before the new folder is in
    "publish.swap_in",  # after the new folder became data/publish, before the previous is removed
    "publish.upload",  # after the Hub repo exists, before the folder is committed to it
)
"""Every name used in the code; the harness kills at each one."""

_KILL_AT = os.environ.get(ENV)


def kill_point(name: str) -> None:
    if _KILL_AT == name:
        os.kill(os.getpid(), signal.SIGKILL)
