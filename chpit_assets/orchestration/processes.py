"""Which process a `host:pid` tag names, and whether it still lives.

One reading for every tag that names a process of ours (the driver of a backfill, the worker of a
run): both the orphan check of the next invocation and the run launcher's health checks judge a
process by it, so they can never disagree about the same pid. Standard library only: the run
launcher's fork server imports this before every run.
"""

from __future__ import annotations

import os
import socket


def process_tag(pid: int | None = None) -> str:
    """`host:pid` of this process (or of `pid`, a child of it)."""
    return f"{socket.gethostname()}:{os.getpid() if pid is None else pid}"


def local_pid(tag: str) -> int | None:
    """The pid a tag names on this machine; None for another host's process or a malformed tag.

    Split at the last ":" so a host name with a colon in it (an IPv6 literal) still parses."""
    host, _, pid = tag.rpartition(":")
    return int(pid) if pid.isdigit() and host == socket.gethostname() else None


def process_alive(pid: int) -> bool:
    """Whether the process exists and has not exited. A zombie (exited, its parent has not reaped it
    yet) is dead: a run worker's parent reaps it only at its next poll, and a dead run must not be
    reported running until then."""
    try:
        # The command name in parentheses can hold any bytes: decode leniently, read after the last ")".
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # it exists, under another user
            return True
        return True
