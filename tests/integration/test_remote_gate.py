"""The remote storage's gate mounted for real (FUSE): what a broker behind it sees in each mode."""

import errno
import os
import time

import pytest

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.fuse_layer import check_fuse, mounted_under
from kafka_chaos.harness.remote_gate import RemoteGate


@pytest.fixture
def gate(tmp_path):
    try:
        check_fuse("the gate")
    except UsageError as exc:
        pytest.skip(str(exc))
    gate = RemoteGate.of(tmp_path / "remote", "kafka-1").start()
    yield gate
    gate.stop()


def test_the_gate_passes_fails_and_slows_what_lands_in_the_shared_folder(gate, tmp_path):
    m = gate.mount
    assert m == tmp_path / "remote-gate" / "kafka-1" and mounted_under(tmp_path) == [m]
    (m / "segment.log").write_bytes(b"copied")
    assert (tmp_path / "remote" / "segment.log").read_bytes() == b"copied"  # the real data, shared

    assert gate.set("unavailable")["mode"] == "unavailable"
    for attempt in (
        lambda: (m / "segment.log").read_bytes(),
        lambda: (m / "new.log").write_bytes(b"x"),
        lambda: list(m.iterdir()),
    ):
        with pytest.raises(OSError) as failed:
            attempt()
        assert failed.value.errno == errno.EIO
    os.stat(m)  # its root still answers: Docker can bind it into a starting container
    assert not (tmp_path / "remote" / "new.log").exists()
    assert gate.state()["failed"] >= 3

    gate.set("slow", 150)
    began = time.monotonic()
    assert (m / "segment.log").read_bytes() == b"copied"
    assert time.monotonic() - began >= 0.15
    assert gate.state()["delayed"] >= 1

    assert gate.set("open") == {**gate.state(), "mode": "open", "delay_ms": 0}
    (m / "new.log").write_bytes(b"after")
    assert (tmp_path / "remote" / "new.log").read_bytes() == b"after"


def test_a_stopped_gate_leaves_no_mount_and_no_process(gate, tmp_path):
    gate.stop()
    assert mounted_under(tmp_path) == []
    assert gate.process is not None and gate.process.poll() is not None
    assert not gate.control.exists()
    assert (tmp_path / "remote").is_dir()  # the remote storage itself stays with the workdir
