"""Ctrl-C held back for one Docker create call (harness/interrupts.py), on this process's own signals."""

import os
import signal
import threading

import pytest

from kafka_chaos.harness.interrupts import held_interrupts


@pytest.fixture(autouse=True)
def python_sigint():
    """Python's own SIGINT handler for each test, and whatever was in place after it: a test
    worker that has run Spark holds Spark's handler (it cancels jobs, then raises the same)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_a_ctrl_c_inside_the_block_comes_when_it_ends():
    done = []
    with pytest.raises(KeyboardInterrupt):
        with held_interrupts():
            os.kill(os.getpid(), signal.SIGINT)
            done.append("the block went on")  # the create call finishes: its object exists
    assert done == ["the block went on"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_block_without_a_signal_ends_as_it_is_and_restores_the_handlers():
    """The near miss: no signal, no interrupt; the handlers in place before are back."""
    seen = []
    previous = signal.signal(signal.SIGTERM, lambda s, f: seen.append(s))
    try:
        with held_interrupts():
            pass
        assert seen == [] and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        os.kill(os.getpid(), signal.SIGTERM)
        assert seen == [signal.SIGTERM]  # the caller's own handler, not the hold
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_the_callers_own_handler_gets_a_held_sigterm():
    seen = []
    previous = signal.signal(signal.SIGTERM, lambda s, f: seen.append(s))
    try:
        with held_interrupts():
            os.kill(os.getpid(), signal.SIGTERM)
            assert seen == []
        assert seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_outside_the_main_thread_nothing_is_held():
    """Only the main thread can set handlers or receive signals: elsewhere the block runs as it is."""
    errors = []

    def body():
        try:
            with held_interrupts():
                pass
        except Exception as exc:  # ValueError: signal only works in main thread
            errors.append(exc)

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert errors == []
