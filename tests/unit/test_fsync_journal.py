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


def truncate(journal: Journal, path, length: int) -> None:
    """What the FUSE truncate does: tell the journal, then cut."""
    fd = os.open(path, os.O_RDWR)
    try:
        journal.resized(fd, length)
        os.ftruncate(fd, length)
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


@pytest.mark.parametrize(("fsynced", "after"), [(False, b""), (True, b"0\n1\n0 5\n")])
def test_a_checkpoint_renamed_into_place_survives_only_if_fsynced(tmp_path, fsynced, after):
    """KAFKA-16541's write: a new file renamed over the old one, fsynced first (3.6, 3.8+) or not
    (3.7's truncation)."""
    journal = Journal()
    write(journal, tmp_path / "cp", b"0\n1\n0 0\n", 0, create=True, fsync=True)
    write(journal, tmp_path / "cp.tmp", b"0\n1\n0 5\n", 0, create=True, fsync=fsynced)
    os.rename(tmp_path / "cp.tmp", tmp_path / "cp")
    journal.crash(tmp_path)
    assert (tmp_path / "cp").read_bytes() == after


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
    truncate(journal, index, 8)
    journal.crash(tmp_path)
    assert index.read_bytes() == b"IDX!" + bytes(4)


def test_a_file_grown_past_unsynced_writes_keeps_its_size_and_loses_their_bytes(tmp_path):
    journal = Journal()
    log = tmp_path / "log"
    write(journal, log, b"durable", 0, create=True, fsync=True)
    write(journal, log, b"unsynced", 7)
    truncate(journal, log, 20)
    journal.crash(tmp_path)
    assert log.read_bytes() == b"durable" + bytes(13)


def test_the_passthrough_keeps_its_books_across_create_rename_unlink_and_truncate(tmp_path):
    """The layer's own operations (no mount): a rename over a file forgets the file it replaced,
    an unlink forgets the file, a truncate through a file handle is durable at once."""
    from kafka_chaos.harness.fuse_layer import passthrough as _operations

    journal = Journal()
    ops = _operations(tmp_path, journal)
    old = ops.create("/cp", 0o644)
    ops.write("/cp", b"0\n1\n0 0\n", 0, old)
    ops.fsync("/cp", 0, old)
    old_ino = os.fstat(old).st_ino
    ops.release("/cp", old)
    tmp = ops.create("/cp.tmp", 0o644)
    ops.write("/cp.tmp", b"0\n1\n0 5\n", 0, tmp)
    ops.release("/cp.tmp", tmp)
    ops.rename("/cp.tmp", "/cp")
    assert old_ino not in journal.files and len(journal.files) == 1
    gone = ops.create("/gone", 0o644)
    ops.write("/gone", b"x", 0, gone)
    ops.release("/gone", gone)
    ops.unlink("/gone")
    assert len(journal.files) == 1
    wo = ops.open("/cp", os.O_WRONLY)  # a write-only open can still save what it overwrites
    ops.truncate("/cp", 4, wo)
    ops.write("/cp", b"!", 0, wo)
    ops.release("/cp", wo)
    assert journal.crash(tmp_path) == [{"file": "cp", "size": 4, "durable_size": 4}]
    assert (tmp_path / "cp").read_bytes() == bytes(4)  # its size durable, its unsynced bytes not


def test_overwritten_zeros_are_kept_as_a_length_and_written_back_as_zeros(tmp_path):
    journal = Journal()
    index = tmp_path / "index"
    write(journal, index, bytes(3 << 20), 0, create=True, fsync=True)
    write(journal, index, b"\x01" * (2 << 20), 1 << 20)  # two 1 MB chunks of zeros overwritten
    assert journal.saved_bytes == 0
    journal.crash(tmp_path)
    assert index.read_bytes() == bytes(3 << 20)
