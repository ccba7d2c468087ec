"""Issue 23.7/23.8: Ctrl-C reaches the CLI's driver at once, even inside Dagster's `asyncio.run` of a
backfill iteration, so the driver cancels the backfill before that iteration can finish it as failed
(found by tests/test_cli_interrupt.py, which failed now and then with COMPLETED_FAILED)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import weakref

import pytest

from chpit_assets.orchestration.invocation import interrupts_at_once


@pytest.fixture
def default_sigint():
    """SIGINT as an interactive Python has it (a test runner may have set it otherwise)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _iteration(reached: list[str]):
    async def iteration() -> None:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the iteration does synchronous work
        sum(range(200_000))
        reached.append("after the interrupt")  # what Dagster's iteration would go on to write
        await asyncio.sleep(0)

    return iteration()


def test_asyncio_alone_lets_the_iteration_go_on_after_ctrl_c(default_sigint):
    reached: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(_iteration(reached))
    assert reached == ["after the interrupt"]  # the cause: cancelled only at its next await


def test_with_the_driver_handler_ctrl_c_stops_the_iteration_where_it_is(default_sigint):
    reached: list[str] = []
    with pytest.raises(KeyboardInterrupt), interrupts_at_once():
        asyncio.run(_iteration(reached))
    assert reached == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_an_ignored_sigint_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts_at_once():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_lost_inside_a_garbage_collector_callback_is_still_recorded(default_sigint, monkeypatch):
    """Seen in CI: SIGINT arrived while the driver ran SQLAlchemy's `_collection_gced`, a weakref
    callback. Python prints an exception raised there as "Exception ignored" and drops it; the press
    must still reach the driver (backfill.drive checks the event)."""
    lost: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: lost.append(unraisable.exc_type))

    class Collected:
        pass

    with interrupts_at_once() as pressed:
        collected = Collected()
        ref = weakref.ref(collected, lambda _: signal.raise_signal(signal.SIGINT))
        del collected  # the callback runs here; the KeyboardInterrupt does not propagate
        assert ref() is None
        assert lost == [KeyboardInterrupt]
        assert pressed.is_set()
