"""A FUSE passthrough run as a process of its own, asked over a Unix socket: what a node's
fsync-tracked disk (fsync_disk.py) and a broker's gate to the remote storage (remote_gate.py) are
made of.

It runs as its own process (`python -m MODULE BACKING MOUNT SOCKET`) because libfuse owns the
signals of the process it runs in. The process serves one line commands on the socket, each
answered with one JSON line; it unmounts itself when the harness that started it dies (a harness
killed outright leaves no mount behind), and a layer killed outright leaves a dead mount
(ENOTCONN) that `unmount_stale` removes (`kafka-chaos clean`, and every cluster's start:
harness/cleanup.py `reap`). `FuseProcess` starts, asks and stops one.
"""

from __future__ import annotations

import errno
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka_chaos.harness.errors import ClusterStartError, KafkaChaosError, UsageError

#: The fsname of each kind of layer in /proc/mounts: what `mounted_under` and `unmount_stale` know.
DISK_FSNAME = "kafka-chaos-disk"
GATE_FSNAME = "kafka-chaos-remote"
FSNAMES = (DISK_FSNAME, GATE_FSNAME)


class Hooks:
    """What a passthrough tells of the writes it passes (the fsync-tracked disk keeps its books
    by them: fsync_disk.py Journal); nothing by default."""

    def before_write(self, fd: int, offset: int, length: int) -> None: ...

    def resized(self, fd: int, length: int) -> None: ...

    def created(self, fd: int) -> None: ...

    def synced(self, fd: int) -> None: ...

    def forget(self, ino: int) -> None: ...


def passthrough(root: Path, journal: Hooks | None = None):  # noqa: C901 - one passthrough, one method per call
    """The operations of a FUSE passthrough over `root`, telling `journal` of what changes a file's
    content (the fsync-tracked disk's books; none by default)."""
    from fuse import FuseOSError, Operations

    journal = journal if journal is not None else Hooks()

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


def serve_control(sock_path: Path, answer: Callable[[str], dict[str, Any]]) -> None:
    """Answer each connection's one line command with `answer`'s JSON; an exception is answered
    as an error, and the server goes on."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(sock_path))
    server.listen(4)
    while True:
        conn, _ = server.accept()
        with conn:
            command = ""
            try:
                command = conn.makefile().readline().strip()
                reply = answer(command)
            except Exception as exc:  # answered, and the server goes on
                reply = {"error": f"{command!r} failed: {type(exc).__name__}: {exc}"}
            try:
                conn.sendall((json.dumps(reply) + "\n").encode())
            except OSError:
                pass  # the asker gave up


def _unmount_when_orphaned(mount: Path) -> None:
    """A harness killed outright leaves no mount behind: unmounting ends the FUSE loop."""
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(1)
    unmount(mount)


def serve(operations: Any, mount: Path, sock: Path, answer: Callable[[str], dict[str, Any]], fsname: str) -> None:
    """Mount `operations` at `mount` and serve until unmounted, answering commands on `sock`."""
    from fuse import FUSE

    threading.Thread(target=serve_control, args=(sock, answer), daemon=True).start()
    threading.Thread(target=_unmount_when_orphaned, args=(mount,), daemon=True).start()
    FUSE(
        operations,
        str(mount),
        foreground=True,
        nothreads=False,
        allow_other=True,
        fsname=fsname,
        attr_timeout=0,
        entry_timeout=0,
        negative_timeout=0,
    )


class FuseProcess:
    """One layer's process: `module` mounts MOUNT over BACKING and answers on CONTROL; its output
    goes to `log`. `what` names it in errors ("the fsync-tracked disk")."""

    module: str = ""
    what: str = "the FUSE layer"

    def __init__(self, backing: Path, mount: Path, control: Path, log: Path | None = None) -> None:
        self.backing, self.mount, self.control = backing, mount, control
        self.log = log if log is not None else mount.parent / f"{mount.name}.log"
        self.process: subprocess.Popen | None = None

    def start(self) -> FuseProcess:
        unmount(self.mount)  # a dead layer's mount left at this path
        self.backing.mkdir(parents=True, exist_ok=True)
        self.mount.mkdir(parents=True, exist_ok=True)
        self.control.unlink(missing_ok=True)
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", self.module, *map(str, (self.backing, self.mount, self.control))],
                stdout=log,
                stderr=log,
                start_new_session=True,  # a Ctrl-C of the harness must not end the layer under a node
            )
        deadline = time.monotonic() + 15
        while not (self.mount in mounted_under(self.mount) and self.control.exists()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = self.log.read_text(errors="replace").strip().splitlines()[-3:]
                raise ClusterStartError(f"{self.mount}: {self.what} did not mount: {' / '.join(tail)}")
            time.sleep(0.05)
        return self

    def ask(self, command: str) -> dict:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(120)
            s.connect(str(self.control))
            s.sendall(f"{command}\n".encode())
            reply = json.loads(s.makefile().readline())
        if "error" in reply:
            raise KafkaChaosError(f"{self.mount}: {self.what}: {reply['error']}")
        return reply

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


def check_fuse(what: str) -> None:
    """UsageError unless this machine can mount a layer: root, /dev/fuse, libfuse2. `what` names
    the option that needs it."""
    try:
        import fuse  # noqa: F401 - loads libfuse.so.2
    except (ImportError, OSError) as exc:
        raise UsageError(f"{what} needs libfuse2 (Debian: apt-get install libfuse2): {exc}") from None
    if not os.path.exists("/dev/fuse") or os.geteuid() != 0:
        raise UsageError(f"{what} needs /dev/fuse and root, to mount a FUSE layer")


def unmount(mount: Path) -> None:
    """Lazily: a mount still in use goes once the last user lets go. (No ismount() first: it
    stats the mount, which fails on a dead one.)"""
    if mount in mounted_under(mount):
        subprocess.run(["umount", "-l", str(mount)], check=False, capture_output=True)


def unmount_stale() -> int:
    """Unmount the layers' mounts whose process is gone (killed outright: its mount answers
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


def mounted_under(folder: Path, fsnames: tuple[str, ...] = FSNAMES) -> list[Path]:
    """The layers' mounts under folder (a run's, or every run's), from /proc/mounts: of every
    kind, or of the kinds `fsnames` names."""
    try:
        table = Path("/proc/mounts").read_text()
    except OSError:
        return []  # not Linux: nothing of these layers can be mounted
    mounts = []
    for line in table.splitlines():
        fsname, point = line.split()[:2]
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), point)  # \040 is a space
        if fsname in fsnames and Path(point).is_relative_to(folder):
            mounts.append(Path(point))
    return mounts
