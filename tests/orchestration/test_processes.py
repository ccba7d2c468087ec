"""The one reading of `host:pid` tags that the driver lock and the run launcher share."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from chpit_assets.orchestration.invocation import _driver_alive
from chpit_assets.orchestration.processes import local_pid, process_alive, process_tag


def test_a_tag_of_this_machine_reads_back_its_pid() -> None:
    assert local_pid(process_tag()) == os.getpid()
    assert local_pid(process_tag(4242)) == 4242


@pytest.mark.parametrize(
    "tag", ["", "4242", f"{socket.gethostname()}:", f"{socket.gethostname()}:12a", "elsewhere:4242"]
)
def test_another_machines_or_a_malformed_tag_names_no_local_pid(tag: str) -> None:
    assert local_pid(tag) is None


def test_a_host_with_colons_is_split_at_the_last_one(monkeypatch) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: "fe80::1")
    assert local_pid("fe80::1:77") == 77


def test_an_exited_process_and_an_unreaped_zombie_are_dead() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert not process_alive(gone.pid)
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 10
        while process_alive(zombie.pid):  # exits at once; nobody reaps it while we poll /proc
            assert time.monotonic() < deadline, "the child never exited"
            time.sleep(0.02)
        assert os.path.exists(f"/proc/{zombie.pid}"), "the zombie must still be listed to test this"
    finally:
        zombie.wait()


def test_a_process_whose_name_is_not_ascii_and_holds_a_parenthesis_is_alive() -> None:
    # The kernel shows the command name unescaped in /proc/<pid>/stat: "(zü) x)" must not confuse the reading.
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys,time; open('/proc/self/comm','w').write('zü) x'); print(flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        child.stdout.readline()
        with open(f"/proc/{child.pid}/comm", "rb") as f:
            assert "ü".encode() in f.read()
        assert process_alive(child.pid)
    finally:
        child.kill()
        child.wait()


def test_the_orphan_check_judges_only_this_machines_drivers() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert not _driver_alive(process_tag(gone.pid))
    assert _driver_alive(process_tag())
    assert _driver_alive(f"elsewhere.invalid:{gone.pid}")
