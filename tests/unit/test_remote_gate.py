"""The remote storage's gate, its logic alone: which operations each mode fails or delays."""

import errno
import time

import pytest

from kafka_chaos.harness.remote_gate import MAX_DELAY_MS, Gate, check_delay


def test_an_open_gate_passes_everything():
    gate = Gate()
    for op in ("getattr", "readdir", "create", "write", "read", "unlink", "rename"):
        gate.check(op, "/kafka-tiered-storage/x")
    assert gate.state() == {"mode": "open", "delay_ms": 0, "failed": 0, "delayed": 0}


def test_an_unavailable_gate_fails_all_but_its_root_and_the_closing_of_files():
    gate = Gate()
    assert gate.answer("unavailable")["mode"] == "unavailable"
    for op, path in (("getattr", "/kafka-tiered-storage"), ("readdir", "/"), ("create", "/a"), ("read", "/a")):
        with pytest.raises(OSError) as failed:
            gate.check(op, path)
        assert failed.value.errno == errno.EIO
    gate.check("getattr", "/")  # Docker stats a bind's source when a container starts
    gate.check("statfs", "/")
    gate.check("release", "/a")  # a descriptor the gate opened is still closed
    assert gate.state()["failed"] == 4
    gate.answer("open")
    gate.check("read", "/a")
    assert gate.state()["mode"] == "open" and gate.state()["failed"] == 4


def test_a_slow_gate_delays_create_read_and_write_only():
    gate = Gate()
    assert gate.answer("slow 120") == {"mode": "slow", "delay_ms": 120, "failed": 0, "delayed": 0}
    began = time.monotonic()
    gate.check("getattr", "/a")
    gate.check("readdir", "/")
    assert time.monotonic() - began < 0.1
    began = time.monotonic()
    gate.check("write", "/a")
    assert time.monotonic() - began >= 0.12
    assert gate.state()["delayed"] == 1


@pytest.mark.parametrize("command", ["slow", "slow fast", "slow 0", f"slow {MAX_DELAY_MS + 1}", "close", ""])
def test_a_command_the_gate_does_not_take_is_answered_with_an_error(command):
    gate = Gate()
    try:
        reply = gate.answer(command)
    except ValueError:
        reply = {"error": "raised"}  # the control server answers an exception as an error
    assert "error" in reply
    assert gate.state()["mode"] == "open"


@pytest.mark.parametrize("value", [0, -5, 1.5, "200", True, MAX_DELAY_MS + 1])
def test_a_delay_is_a_whole_number_of_milliseconds(value):
    with pytest.raises(ValueError):
        check_delay(value)
    assert check_delay(200) == 200
