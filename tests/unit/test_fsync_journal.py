"""The fsync-tracking disk's journal (harness/fsync_disk.py) on plain files: what a crash keeps."""

import os

import pytest

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.fsync_disk import FileState, Journal, check_disk


def write(journal: Journal, path, data: bytes, offset: int, *, create: bool = False, fsync: bool = False) -> None:
    fd = os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o644)
    try:
        if create:
            journal.created(fd)
        journal.before_write(fd, offset, len(data))
        os.pwrite(fd, data, offset)
        if fsync:
            journal.synced(fd)
    finally:
        os.close(fd)


def test_a_crash_keeps_what_was_fsynced_and_drops_the_rest(tmp_path):
    journal = Journal()
    write(journal, tmp_path / "log", b"durable", 0, create=True, fsync=True)
    write(journal, tmp_path / "log", b"+lost", 7)
    reverted = journal.crash(tmp_path)
    assert (tmp_path / "log").read_bytes() == b"durable"
    assert reverted == [{"file": "log", "size": 12, "durable_size": 7}]


def test_a_file_fsynced_after_its_last_write_loses_nothing(tmp_path):
    journal = Journal()
    write(journal, tmp_path / "log", b"durable", 0, create=True)
    write(journal, tmp_path / "log", b"+kept", 7, fsync=True)
    assert journal.crash(tmp_path) == []
    assert (tmp_path / "log").read_bytes() == b"durable+kept"


def test_a_checkpoint_renamed_into_place_without_fsync_comes_back_empty(tmp_path):
    """KAFKA-16541's write: a new file, no fsync, renamed over the old one."""
    journal = Journal()
    write(journal, tmp_path / "cp", b"0\n1\n0 0\n", 0, create=True, fsync=True)
    write(journal, tmp_path / "cp.tmp", b"0\n1\n0 5\n", 0, create=True)
    os.rename(tmp_path / "cp.tmp", tmp_path / "cp")
    journal.crash(tmp_path)
    assert (tmp_path / "cp").read_bytes() == b""


def test_the_same_checkpoint_fsynced_before_the_rename_survives(tmp_path):
    journal = Journal()
    write(journal, tmp_path / "cp.tmp", b"0\n1\n0 5\n", 0, create=True, fsync=True)
    os.rename(tmp_path / "cp.tmp", tmp_path / "cp")
    journal.crash(tmp_path)
    assert (tmp_path / "cp").read_bytes() == b"0\n1\n0 5\n"


def test_an_overwrite_of_durable_bytes_is_undone(tmp_path):
    journal = Journal()
    write(journal, tmp_path / "index", b"abcdef", 0, create=True, fsync=True)
    write(journal, tmp_path / "index", b"XY", 2)
    write(journal, tmp_path / "index", b"ZZZ", 1)  # overlaps the first overwrite: its saved bytes stay
    journal.crash(tmp_path)
    assert (tmp_path / "index").read_bytes() == b"abcdef"


def test_the_flusher_makes_a_file_dirty_for_long_enough_durable(tmp_path):
    """Linux writes back a file dirty for 30 s; a power loss after that keeps it."""
    journal = Journal()
    write(journal, tmp_path / "old", b"meta.properties", 0, create=True)
    write(journal, tmp_path / "new", b"recent", 0, create=True)
    journal.files[os.stat(tmp_path / "old").st_ino].dirtied_at -= 31
    assert journal.write_back() == 1
    journal.crash(tmp_path)
    assert (tmp_path / "old").read_bytes() == b"meta.properties"
    assert (tmp_path / "new").read_bytes() == b""


def test_the_parts_of_a_write_not_saved_yet():
    state = FileState(durable_size=10, saved={2: b"ab"})
    assert state.covered(0, 6) == [(0, 2), (4, 6)]
    assert state.covered(8, 10) == [(8, 10)]  # nothing past the durable size needs keeping
    assert state.covered(2, 2) == []


def test_an_unknown_disk_is_a_usage_error():
    with pytest.raises(UsageError, match="disk 'tmpfs'"):
        check_disk("tmpfs")
    check_disk("page-cache")


def test_a_truncate_is_durable_at_once_and_the_bytes_written_before_it_are_not(tmp_path):
    """Kafka trims each index it rolls and does not fsync it again: the trim must stand (an index
    back at its preallocated size reads as timestamp 0, which retention deletes)."""
    journal = Journal()
    index = tmp_path / "index"
    write(journal, index, b"IDX!" + bytes(3 << 20), 0, create=True, fsync=True)
    write(journal, index, b"new!", 0)
    fd = os.open(index, os.O_RDWR)
    try:
        journal.resized(fd, 8)  # what the FUSE truncate asks before cutting
        os.ftruncate(fd, 8)
    finally:
        os.close(fd)
    journal.crash(tmp_path)
    assert index.read_bytes() == b"IDX!" + bytes(4)


def test_a_file_grown_past_unsynced_writes_keeps_its_size_and_loses_their_bytes(tmp_path):
    journal = Journal()
    log = tmp_path / "log"
    write(journal, log, b"durable", 0, create=True, fsync=True)
    write(journal, log, b"unsynced", 7)
    fd = os.open(log, os.O_RDWR)
    try:
        journal.resized(fd, 20)
        os.ftruncate(fd, 20)
    finally:
        os.close(fd)
    journal.crash(tmp_path)
    assert log.read_bytes() == b"durable" + bytes(13)
