"""The fsync-tracking disk mounted for real (FUSE): writes through it, a crash, what is left."""

import errno
import mmap
import os
import subprocess
import sys
import time

import pytest

from kafka_chaos.harness.fsync_disk import FsyncDisk, mounted_under
from kafka_chaos.harness.fuse_layer import unmount_stale


def test_a_crash_drops_exactly_what_was_not_fsynced(tmp_path):
    disk = FsyncDisk(tmp_path / "backing", tmp_path / "mnt", tmp_path / "disk.sock").start()
    m = disk.mount
    try:
        assert mounted_under(tmp_path) == [m]
        with open(m / "log", "wb") as f:
            f.write(b"fsynced")
            f.flush()
            os.fsync(f.fileno())
            f.write(b"+page cache only")
        (m / "cp.tmp").write_bytes(b"0\n1\n0 5\n")  # Kafka 3.7's truncation write: no fsync
        os.rename(m / "cp.tmp", m / "cp")
        with open(m / "index", "w+b") as f:  # an index: grown, mmapped, forced (msync reaches fsync)
            f.truncate(4096)
            with mmap.mmap(f.fileno(), 4096) as mm:
                mm[:4] = b"IDX!"
                mm.flush()
        assert disk.ask("stats")["unsynced_files"] == 2

        reverted = {r["file"]: r for r in disk.crash()}

        assert set(reverted) == {"log", "cp"}
        assert (m / "log").read_bytes() == b"fsynced"
        assert (m / "cp").read_bytes() == b""
        assert (m / "index").read_bytes()[:4] == b"IDX!"
        assert (disk.backing / "log").read_bytes() == b"fsynced"  # the host's folder holds the same
    finally:
        disk.stop()
    assert mounted_under(tmp_path) == []
    assert not os.path.ismount(m)


def test_sync_makes_everything_written_so_far_durable(tmp_path):
    disk = FsyncDisk(tmp_path / "backing", tmp_path / "mnt", tmp_path / "disk.sock").start()
    try:
        (disk.mount / "meta.properties").write_text("node.id=1\n")
        assert disk.sync() == 1
        assert disk.crash() == []
        assert (disk.mount / "meta.properties").read_text() == "node.id=1\n"
    finally:
        disk.stop()


def test_the_layer_unmounts_itself_when_its_harness_dies(tmp_path):
    """A harness killed outright (SIGKILL) leaves no mount behind."""
    b, m, s = (str(tmp_path / name) for name in "bms")
    code = (
        "import time; from pathlib import Path; from kafka_chaos.harness.fsync_disk import FsyncDisk; "
        f"FsyncDisk(Path({b!r}), Path({m!r}), Path({s!r})).start(); print('up', flush=True); time.sleep(60)"
    )
    harness = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert harness.stdout.readline().strip() == "up"
        assert mounted_under(tmp_path) == [tmp_path / "m"]
    finally:
        harness.kill()
        harness.wait()
    for _ in range(50):
        if not mounted_under(tmp_path):
            break
        time.sleep(0.1)
    assert mounted_under(tmp_path) == []


def test_clean_unmounts_a_disk_whose_layer_was_killed(tmp_path):
    """A layer killed outright leaves a dead mount (ENOTCONN); `kafka-chaos clean` unmounts it."""
    disk = FsyncDisk(tmp_path / "backing", tmp_path / "mnt", tmp_path / "disk.sock").start()
    try:
        disk.process.kill()
        disk.process.wait()
        with pytest.raises(OSError) as dead:
            os.stat(disk.mount / "anything")
        assert dead.value.errno == errno.ENOTCONN
        assert unmount_stale() >= 1
        assert mounted_under(tmp_path) == []
    finally:
        disk.stop()
