"""A node's disk that remembers what was fsynced, so a power loss can drop the rest exactly.

Kafka does not fsync every write, and a SIGKILL keeps the page cache: a kill alone loses
nothing. A power loss loses every byte written since the file's last fsync. Without knowing
which writes were fsynced, a harness can only guess (`lose-unflushed` cuts logs back to their
recovery point, and leaves every checkpoint file as it is). This layer knows: it is a FUSE
passthrough over a backing folder that records, per file, what its content was at its last
fsync, and on `crash` puts every file back to that content. That is how Jepsen's lazyfs models a
power loss; it is what KAFKA-16541 needs, a checkpoint file written without fsync.

The model: file data is durable at fsync (or fdatasync), or once the kernel's flusher has
written it back: Linux writes back a file whose pages have been dirty for 30 s
(`vm.dirty_expire_centisecs`, looked at every 5 s), so a file untouched for that long survives
too. lazyfs keeps unsynced data forever instead, which would lose a meta.properties formatted
an hour before (Kafka does not fsync it) and is no power loss Kafka could meet. The namespace
(create, rename, unlink, mkdir) is durable at once, and so is a file's size set by truncate
(ext4 journals both within seconds): Kafka trims each index it rolls and never fsyncs it again,
and an index that came back at its preallocated 10 MB would read as a timestamp of 0, which
retention deletes at once. A size reached by writing is not (ext4 sets it at writeback): a file
created and not written back comes back empty.

It runs as its own process (`python -m kafka_chaos.harness.fsync_disk BACKING MOUNT SOCKET`,
harness/fuse_layer.py: the passthrough and its process, shared with the remote storage's gate)
and answers on a Unix socket:
`crash` (drop what was not fsynced; only while nothing has the disk open, that is the node is
down), `sync` and `stats`. The cluster syncs every disk once it is ready: a real cluster is
not formatted seconds before its power loss, and Kafka's format does not fsync meta.properties.
`FsyncDisk` starts, asks and stops it.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_chaos.harness import fuse_layer
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.fuse_layer import DISK_FSNAME, FuseProcess, Hooks, check_fuse, passthrough, serve

MODULE = "kafka_chaos.harness.fsync_disk"  # the layer's process runs this module
FSNAME = DISK_FSNAME
PAGE_CACHE = "page-cache"  # a node's disk by default: the host's, where a kill loses nothing
FSYNC_TRACKED = "fsync-tracked"  # this layer
DISKS = (PAGE_CACHE, FSYNC_TRACKED)
_SAVED_LIMIT = 256 << 20  # bytes of overwritten durable content kept per disk before giving up
_CHUNK = 1 << 20
DIRTY_EXPIRE_S = 30.0  # Linux's vm.dirty_expire_centisecs default
WRITEBACK_EVERY_S = 5.0  # Linux's vm.dirty_writeback_centisecs default


@dataclass
class FileState:
    """What a file's content was at its last fsync, as far as the writes since then changed it."""

    durable_size: int
    # offset -> the durable bytes overwritten since, or the length of a run of zeros (Kafka trims
    # its preallocated 10 MB indexes: those are zeros, kept as a number)
    saved: dict[int, bytes | int] = field(default_factory=dict)
    dirtied_at: float = field(default_factory=time.monotonic)  # the first write since it was durable

    def covered(self, offset: int, length: int) -> list[tuple[int, int]]:
        """The parts of [offset, offset+length) below durable_size not saved yet."""
        end = min(offset + length, self.durable_size)
        gaps, pos = [], offset
        for start in sorted(self.saved):
            stop = start + _length(self.saved[start])
            if stop <= pos or start >= end:
                continue
            if start > pos:
                gaps.append((pos, start))
            pos = max(pos, stop)
        if pos < end:
            gaps.append((pos, end))
        return gaps


def _length(saved: bytes | int) -> int:
    return saved if isinstance(saved, int) else len(saved)


class Journal(Hooks):
    """Per inode of the backing folder, the durable state of each file written since its fsync."""

    def __init__(self) -> None:
        self.files: dict[int, FileState] = {}
        self.saved_bytes = 0
        self.lock = threading.Lock()

    def before_write(self, fd: int, offset: int, length: int) -> None:
        """Keep the durable bytes a write is about to replace."""
        with self.lock:
            st = os.fstat(fd)
            state = self.files.get(st.st_ino)
            if state is None:
                state = self.files[st.st_ino] = FileState(durable_size=st.st_size)
            for start, stop in state.covered(offset, length):
                for at in range(start, stop, _CHUNK):
                    data = os.pread(fd, min(_CHUNK, stop - at), at)
                    if data.count(0) == len(data):
                        state.saved[at] = len(data)
                    else:
                        state.saved[at] = data
                        self.saved_bytes += len(data)
            if self.saved_bytes > _SAVED_LIMIT:
                raise OSError(errno.ENOSPC, "fsync_disk: too much unsynced overwrite to remember")

    def resized(self, fd: int, length: int) -> None:
        """A truncate to `length` (before it happens): the new size is durable at once; bytes
        written past the old durable size and not written back read as zeros after a crash."""
        with self.lock:
            st = os.fstat(fd)
            state = self.files.get(st.st_ino)
            if state is None:
                return  # nothing unsynced: the file is durable at its new size too
            for offset in [o for o in state.saved if o + _length(state.saved[o]) > length]:
                kept = max(0, length - offset)
                data = state.saved.pop(offset)
                if isinstance(data, bytes):
                    self.saved_bytes -= len(data) - kept
                if kept:
                    state.saved[offset] = data[:kept] if isinstance(data, bytes) else kept
            if length > state.durable_size and min(st.st_size, length) > state.durable_size:
                state.saved[state.durable_size] = min(st.st_size, length) - state.durable_size
            state.durable_size = length

    def created(self, fd: int) -> None:
        with self.lock:
            self.files[os.fstat(fd).st_ino] = FileState(durable_size=0)

    def synced(self, fd: int) -> None:
        self.forget(os.fstat(fd).st_ino)

    def forget(self, ino: int) -> None:
        with self.lock:
            self._forget(ino)

    def _forget(self, ino: int) -> None:
        state = self.files.pop(ino, None)
        if state:
            self.saved_bytes -= sum(len(b) for b in state.saved.values() if isinstance(b, bytes))

    def write_back(self, expire_s: float = DIRTY_EXPIRE_S) -> int:
        """What the kernel's flusher does: files dirty for expire_s are on the disk now."""
        cutoff = time.monotonic() - expire_s
        with self.lock:
            expired = [ino for ino, state in self.files.items() if state.dirtied_at <= cutoff]
            for ino in expired:
                self._forget(ino)
        return len(expired)

    def crash(self, root: Path) -> list[dict]:
        """Put every file under root back to its content at its last fsync; what was changed."""
        with self.lock:
            # The whole plan first: a file that fails to revert leaves the journal as it was.
            plan = []
            for directory, _, names in os.walk(root):
                for name in names:
                    path = Path(directory, name)
                    st = path.lstat()
                    if stat.S_ISREG(st.st_mode) and st.st_ino in self.files:
                        plan.append((path, st.st_size, self.files[st.st_ino]))
            for path, _, state in plan:
                with open(path, "r+b") as f:
                    f.truncate(state.durable_size)
                    for offset, data in state.saved.items():
                        f.seek(offset)
                        f.write(bytes(data) if isinstance(data, int) else data)
            self.files.clear()
            self.saved_bytes = 0
            return sorted(
                (
                    {"file": str(path.relative_to(root)), "size": size, "durable_size": state.durable_size}
                    for path, size, state in plan
                ),
                key=lambda r: r["file"],
            )


def _flusher(journal: Journal) -> None:
    while True:
        time.sleep(WRITEBACK_EVERY_S)
        journal.write_back()


def _answer(root: Path, journal: Journal) -> Callable[[str], dict[str, Any]]:
    def answer(command: str) -> dict[str, Any]:
        if command == "crash":
            return {"reverted": journal.crash(root)}
        if command == "sync":
            return {"synced": journal.write_back(expire_s=0)}
        if command == "stats":
            with journal.lock:
                return {"unsynced_files": len(journal.files), "saved_bytes": journal.saved_bytes}
        return {"error": f"unknown command {command!r}"}

    return answer


def main(argv: list[str]) -> None:
    backing, mount, sock = (Path(a) for a in argv)
    journal = Journal()
    threading.Thread(target=_flusher, args=(journal,), daemon=True).start()
    serve(passthrough(backing, journal), mount, sock, _answer(backing, journal), FSNAME)


class FsyncDisk(FuseProcess):
    """The layer of one node: mount MOUNT over BACKING; `crash()` while the node is down."""

    module = MODULE
    what = "the fsync-tracked disk"

    def __init__(self, backing: Path, mount: Path, control: Path) -> None:
        super().__init__(backing, mount, control, mount.parent / "fsync-disk.log")

    def sync(self) -> int:
        """Everything written so far is on the disk now, as after sync(1); how many files were not."""
        return int(self.ask("sync")["synced"])

    def crash(self) -> list[dict]:
        """Drop every write not fsynced; call with the node down (nothing may have a file open)."""
        return self.ask("crash")["reverted"]


def check_disk(disk: str) -> None:
    """UsageError unless `disk` is a known disk (what this machine can mount: `check_mountable`)."""
    if disk not in DISKS:
        raise UsageError(f"disk {disk!r}: expected one of {', '.join(DISKS)}")


def check_mountable(disk: str) -> None:
    """UsageError unless this machine can mount `disk`: for this layer, root, /dev/fuse, libfuse2."""
    if disk == FSYNC_TRACKED:
        check_fuse(f"disk {FSYNC_TRACKED}")


def mounted_under(folder: Path) -> list[Path]:
    """This layer's mounts under folder (a run's, or every run's)."""
    return fuse_layer.mounted_under(folder, (FSNAME,))


if __name__ == "__main__":
    main(sys.argv[1:])
