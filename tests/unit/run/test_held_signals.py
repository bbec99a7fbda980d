"""An interrupt during a child's start is delivered once the handle is stored."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from lockscope.run.held_signals import interrupts_held


@pytest.fixture
def sigint_raises():
    """Python's own SIGINT handler for the test: a shell starts background jobs with
    SIGINT ignored (nohup, `&`), and Python then keeps it ignored."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_sigint_inside_the_block_raises_after_it(sigint_raises):
    stored = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_held():
            os.kill(os.getpid(), signal.SIGINT)
            child = subprocess.Popen(["sleep", "30"])
            stored.append(child)          # reached: the interrupt waited
    assert stored, "the handle was not stored before the interrupt"
    stored[0].kill()
    stored[0].wait()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_ignored_sigint_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts_held():
            os.kill(os.getpid(), signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_sigterm_goes_to_the_handler_that_was_there():
    seen = []
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: seen.append(signum))
    try:
        with interrupts_held():
            os.kill(os.getpid(), signal.SIGTERM)
            assert seen == []
        assert seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_nothing_held_without_a_signal(sigint_raises):
    with interrupts_held():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
