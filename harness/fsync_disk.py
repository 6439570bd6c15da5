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

It runs as its own process (`python -m kafka_chaos.harness.fsync_disk BACKING MOUNT SOCKET`),
because libfuse owns the signals of the process it runs in, and answers on a Unix socket:
`crash` (drop what was not fsynced; only while nothing has the disk open, that is the node is
down), `sync` and `stats`. The cluster syncs every disk once it is ready: a real cluster is
not formatted seconds before its power loss, and Kafka's format does not fsync meta.properties.
`FsyncDisk` starts, asks and stops it.
"""

from __future__ import annotations

import errno
import json
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_chaos.harness.errors import ClusterStartError, KafkaChaosError, UsageError

MODULE = "kafka_chaos.harness.fsync_disk"  # the layer's process runs this module
FSNAME = "kafka-chaos-disk"
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


class Journal:
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


def _operations(root: Path, journal: Journal):  # noqa: C901 - one passthrough, one method per call
    from fuse import FuseOSError, Operations

    def real(path: str) -> str:
        return str(root) + path

    def oserror(fn):
        def wrapped(*args):
            try:
                return fn(*args)
            except OSError as e:
                raise FuseOSError(e.errno or errno.EIO) from None

        return wrapped

    class Passthrough(Operations):
        @oserror
        def access(self, path, mode):
            if not os.access(real(path), mode):
                raise FuseOSError(errno.EACCES)

        @oserror
        def chmod(self, path, mode):
            os.chmod(real(path), mode)

        @oserror
        def chown(self, path, uid, gid):
            os.chown(real(path), uid, gid)

        @oserror
        def getattr(self, path, fh=None):
            st = os.fstat(fh) if fh is not None else os.lstat(real(path))
            keys = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime", "st_mtime", "st_ctime")
            return {k: getattr(st, k) for k in keys}

        @oserror
        def readdir(self, path, fh):
            return [".", "..", *os.listdir(real(path))]

        @oserror
        def readlink(self, path):
            return os.readlink(real(path))

        @oserror
        def mknod(self, path, mode, dev):
            os.mknod(real(path), mode, dev)

        @oserror
        def mkdir(self, path, mode):
            os.mkdir(real(path), mode)

        @oserror
        def rmdir(self, path):
            os.rmdir(real(path))

        @oserror
        def unlink(self, path):
            st = os.lstat(real(path))
            os.unlink(real(path))
            if st.st_nlink == 1:
                journal.forget(st.st_ino)

        @oserror
        def symlink(self, target, source):
            os.symlink(source, real(target))

        @oserror
        def link(self, target, source):
            os.link(real(source), real(target))

        @oserror
        def rename(self, old, new):
            try:
                replaced = os.lstat(real(new))
            except FileNotFoundError:
                replaced = None
            os.rename(real(old), real(new))
            if replaced is not None and replaced.st_nlink == 1:
                journal.forget(replaced.st_ino)

        @oserror
        def utimens(self, path, times=None):
            os.utime(real(path), times)

        @oserror
        def statfs(self, path):
            sv = os.statvfs(real(path))
            keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag")
            return {k: getattr(sv, k) for k in (*keys, "f_frsize", "f_namemax")}

        @oserror
        def open(self, path, flags):
            # Read-write whatever was asked: a write must first read the durable bytes it replaces.
            # (The kernel sends O_TRUNC as a truncate of its own unless atomic_o_trunc is on.)
            if (flags & os.O_ACCMODE) == os.O_WRONLY:
                flags = (flags & ~os.O_ACCMODE) | os.O_RDWR
            fd = os.open(real(path), flags & ~(os.O_TRUNC | getattr(os, "O_DIRECT", 0)))
            if flags & os.O_TRUNC:
                self.truncate(path, 0, fd)
            return fd

        @oserror
        def create(self, path, mode, fi=None):
            existed = os.path.exists(real(path))
            fd = os.open(real(path), os.O_RDWR | os.O_CREAT, mode)
            if not existed:
                journal.created(fd)
            return fd

        @oserror
        def read(self, path, size, offset, fh):
            return os.pread(fh, size, offset)

        @oserror
        def write(self, path, data, offset, fh):
            journal.before_write(fh, offset, len(data))
            return os.pwrite(fh, data, offset)

        @oserror
        def truncate(self, path, length, fh=None):
            fd = fh if fh is not None else os.open(real(path), os.O_RDWR)
            try:
                journal.resized(fd, length)
                os.ftruncate(fd, length)
            finally:
                if fh is None:
                    os.close(fd)

        def flush(self, path, fh):
            return 0

        @oserror
        def release(self, path, fh):
            os.close(fh)

        @oserror
        def fsync(self, path, datasync, fh):
            os.fsync(fh)
            journal.synced(fh)

        def fsyncdir(self, path, datasync, fh):
            return 0

    return Passthrough()


def _serve_control(sock_path: Path, root: Path, journal: Journal) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(sock_path))
    server.listen(4)
    while True:
        conn, _ = server.accept()
        with conn:
            try:
                command = conn.makefile().readline().strip()
                if command == "crash":
                    reply: dict[str, Any] = {"reverted": journal.crash(root)}
                elif command == "sync":
                    reply = {"synced": journal.write_back(expire_s=0)}
                elif command == "stats":
                    with journal.lock:
                        reply = {"unsynced_files": len(journal.files), "saved_bytes": journal.saved_bytes}
                else:
                    reply = {"error": f"unknown command {command!r}"}
            except Exception as exc:  # answered, and the server goes on
                reply = {"error": f"{command!r} failed: {type(exc).__name__}: {exc}"}
            try:
                conn.sendall((json.dumps(reply) + "\n").encode())
            except OSError:
                pass  # the asker gave up


def _flusher(journal: Journal) -> None:
    while True:
        time.sleep(WRITEBACK_EVERY_S)
        journal.write_back()


def _unmount_when_orphaned(mount: Path) -> None:
    """A harness killed outright leaves no mount behind: unmounting ends the FUSE loop."""
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(1)
    unmount(mount)


def main(argv: list[str]) -> None:
    from fuse import FUSE

    backing, mount, sock = (Path(a) for a in argv)
    journal = Journal()
    threading.Thread(target=_serve_control, args=(sock, backing, journal), daemon=True).start()
    threading.Thread(target=_unmount_when_orphaned, args=(mount,), daemon=True).start()
    threading.Thread(target=_flusher, args=(journal,), daemon=True).start()
    FUSE(
        _operations(backing, journal),
        str(mount),
        foreground=True,
        nothreads=False,
        allow_other=True,
        fsname=FSNAME,
        attr_timeout=0,
        entry_timeout=0,
        negative_timeout=0,
    )


class FsyncDisk:
    """The layer of one node: mount MOUNT over BACKING; `crash()` while the node is down."""

    def __init__(self, backing: Path, mount: Path, control: Path) -> None:
        self.backing, self.mount, self.control = backing, mount, control
        self.process: subprocess.Popen | None = None

    def start(self) -> FsyncDisk:
        unmount(self.mount)  # a dead layer's mount left at this path
        self.backing.mkdir(parents=True, exist_ok=True)
        self.mount.mkdir(parents=True, exist_ok=True)
        self.control.unlink(missing_ok=True)
        log_path = self.mount.parent / "fsync-disk.log"
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    MODULE,
                    *map(str, (self.backing, self.mount, self.control)),
                ],
                stdout=log,
                stderr=log,
                start_new_session=True,  # a Ctrl-C of the harness must not end the disk under a node
            )
        deadline = time.monotonic() + 15
        while not (self.mount in mounted_under(self.mount) and self.control.exists()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
                raise ClusterStartError(f"{self.mount}: the fsync-tracked disk did not mount: {' / '.join(tail)}")
            time.sleep(0.05)
        return self

    def ask(self, command: str) -> dict:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(120)
            s.connect(str(self.control))
            s.sendall(f"{command}\n".encode())
            reply = json.loads(s.makefile().readline())
        if "error" in reply:
            raise KafkaChaosError(f"{self.mount}: the fsync-tracked disk: {reply['error']}")
        return reply

    def sync(self) -> int:
        """Everything written so far is on the disk now, as after sync(1); how many files were not."""
        return int(self.ask("sync")["synced"])

    def crash(self) -> list[dict]:
        """Drop every write not fsynced; call with the node down (nothing may have a file open)."""
        return self.ask("crash")["reverted"]

    def stop(self) -> None:
        unmount(self.mount)
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.control.unlink(missing_ok=True)


def check_disk(disk: str) -> None:
    """UsageError unless `disk` is a known disk (what this machine can mount: `check_mountable`)."""
    if disk not in DISKS:
        raise UsageError(f"disk {disk!r}: expected one of {', '.join(DISKS)}")


def check_mountable(disk: str) -> None:
    """UsageError unless this machine can mount `disk`: for this layer, root, /dev/fuse, libfuse2."""
    if disk == FSYNC_TRACKED:
        try:
            import fuse  # noqa: F401 - loads libfuse.so.2
        except (ImportError, OSError) as exc:
            raise UsageError(f"disk {FSYNC_TRACKED} needs libfuse2 (Debian: apt-get install libfuse2): {exc}") from None
        if not os.path.exists("/dev/fuse") or os.geteuid() != 0:
            raise UsageError(f"disk {FSYNC_TRACKED} needs /dev/fuse and root, to mount a node's disk")


def unmount(mount: Path) -> None:
    """Lazily: a mount still in use goes once the last user lets go. (No ismount() first: it
    stats the mount, which fails on a dead one.)"""
    if mount in mounted_under(mount):
        subprocess.run(["umount", "-l", str(mount)], check=False, capture_output=True)


def unmount_stale() -> int:
    """Unmount this layer's mounts whose process is gone (killed outright: its mount answers
    ENOTCONN), every run's; how many. A live layer's mount is its run's, whoever owns it."""
    stale = 0
    for mount in mounted_under(Path("/")):
        try:
            os.stat(mount)
        except OSError as exc:
            if exc.errno == errno.ENOTCONN:
                unmount(mount)
                stale += mount not in mounted_under(mount)
    return stale


def mounted_under(folder: Path) -> list[Path]:
    """This layer's mounts under folder (a run's, or every run's), from /proc/mounts."""
    try:
        table = Path("/proc/mounts").read_text()
    except OSError:
        return []  # not Linux: nothing of this layer's can be mounted
    mounts = []
    for line in table.splitlines():
        fsname, point = line.split()[:2]
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), point)  # \040 is a space
        if fsname == FSNAME and Path(point).is_relative_to(folder):
            mounts.append(Path(point))
    return mounts


if __name__ == "__main__":
    main(sys.argv[1:])
