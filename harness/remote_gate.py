"""A broker's gate to the tiered cluster's remote storage: what the remote-storage faults act on.

Every broker of a tiered cluster shares one remote storage, a folder of the workdir
(KafkaCluster.remote_dir, harness/tiered.py). Making that folder unreadable would not fail a
broker: a container's root ignores file modes, and the folder is every broker's at once. So each
broker mounts a gate of its own at REMOTE_DIR instead: a FUSE passthrough (harness/fuse_layer.py)
over the shared folder, in a mode the nemesis sets over its socket (nemesis/remote.py):

- `open`: every operation passes (the default);
- `unavailable`: every operation fails with EIO, as a store that does not answer fails its
  RemoteStorageManager; only the gate's own root still answers `getattr` (and `statfs`), so that
  Docker can bind it into a container that starts meanwhile (a broker restarted while its remote
  storage is down starts, and meets the failures in its remote log manager);
- `slow MS`: each create, read and write waits MS milliseconds first: the copy and the fetch from
  remote storage slow down, and everything else of the broker runs at its pace.

`state` answers the mode, its delay, and how many operations the gate failed and delayed since it
started. What passes the gate lands in the shared folder itself: the remote storage's content is
the same whatever the gates' modes, and `remote_dir` keeps meaning the real data.
"""

from __future__ import annotations

import errno
import sys
import threading
import time
from pathlib import Path
from typing import Any

from kafka_chaos.harness.fuse_layer import GATE_FSNAME, FuseProcess, passthrough, serve

MODULE = "kafka_chaos.harness.remote_gate"
FSNAME = GATE_FSNAME
OPEN, UNAVAILABLE, SLOW = "open", "unavailable", "slow"
MODES = (OPEN, UNAVAILABLE, SLOW)
#: What a slow gate delays: the copy to and the fetch from remote storage.
DELAYED = frozenset({"create", "read", "write"})
#: What an unavailable gate still lets through: FUSE's own start and end, and the closing of a
#: file the gate had opened (its descriptor in the gate's process would leak otherwise).
ALWAYS = frozenset({"init", "destroy", "release", "releasedir"})
#: What an unavailable gate still answers on its own root (Docker stats a bind's source).
ROOT_ALWAYS = frozenset({"getattr", "statfs"})
#: The most a slow gate may delay each operation (ms): past Kafka's request timeouts it is an
#: unavailable store, which `unavailable` is.
MAX_DELAY_MS = 60_000


def check_delay(delay_ms: Any) -> int:
    """The delay of a slow gate as an int; ValueError unless it is a whole number of ms in 1..MAX_DELAY_MS."""
    if isinstance(delay_ms, bool) or not isinstance(delay_ms, int) or not 1 <= delay_ms <= MAX_DELAY_MS:
        raise ValueError(f"delay_ms {delay_ms!r}: expected a whole number of milliseconds, 1 to {MAX_DELAY_MS}")
    return delay_ms


class Gate:
    """The mode of one gate and what it did; `check` is asked before every operation."""

    def __init__(self) -> None:
        self.mode, self.delay_ms = OPEN, 0
        self.failed = self.delayed = 0
        self._lock = threading.Lock()

    def set(self, mode: str, delay_ms: int = 0) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown gate mode {mode!r}: expected one of {', '.join(MODES)}")
        with self._lock:
            self.mode, self.delay_ms = mode, check_delay(delay_ms) if mode == SLOW else 0

    def check(self, op: str, path: str) -> None:
        """OSError(EIO) when the gate is unavailable to `op` on `path`; when it is slow, wait first."""
        with self._lock:
            mode, delay_ms = self.mode, self.delay_ms
            if mode == UNAVAILABLE and op not in ALWAYS and not (path == "/" and op in ROOT_ALWAYS):
                self.failed += 1
                raise OSError(errno.EIO, f"remote storage unavailable ({op} {path})")
            if mode == SLOW and op in DELAYED:
                self.delayed += 1
        if mode == SLOW and op in DELAYED:
            time.sleep(delay_ms / 1000)

    def state(self) -> dict[str, Any]:
        with self._lock:
            return {"mode": self.mode, "delay_ms": self.delay_ms, "failed": self.failed, "delayed": self.delayed}

    def answer(self, command: str) -> dict[str, Any]:
        """The control socket's commands: `open`, `unavailable`, `slow MS`, `state`; each answers the state."""
        words = command.split()
        if words[:1] == [SLOW] and len(words) == 2 and words[1].isdigit():
            self.set(SLOW, int(words[1]))
        elif words in ([OPEN], [UNAVAILABLE]):
            self.set(words[0])
        elif words != ["state"]:
            return {"error": f"unknown command {command!r}"}
        return self.state()


def gated(root: Path, gate: Gate) -> Any:
    """The passthrough over `root`, every operation asked of `gate` first."""
    from fuse import FuseOSError

    ops = passthrough(root)

    class Gated(type(ops)):  # type: ignore[misc] - the passthrough's class, made in passthrough()
        def __call__(self, op: str, *args: Any) -> Any:
            try:
                gate.check(op, args[0] if args and isinstance(args[0], str) else "")
            except OSError as exc:
                raise FuseOSError(exc.errno or errno.EIO) from None
            return super().__call__(op, *args)

    return Gated()


def main(argv: list[str]) -> None:
    backing, mount, sock = (Path(a) for a in argv)
    gate = Gate()
    serve(gated(backing, gate), mount, sock, gate.answer, FSNAME)


class RemoteGate(FuseProcess):
    """One broker's gate: mounts `<workdir>/remote-gate/<alias>` over the shared remote folder."""

    module = MODULE
    what = "the remote storage's gate"

    @classmethod
    def of(cls, remote: Path, alias: str) -> RemoteGate:
        """The gate of broker `alias` over `remote` (a workdir's `remote`): its mount, socket and log
        in `remote-gate/` beside it."""
        folder = remote.parent / "remote-gate"
        return cls(remote, folder / alias, folder / f"{alias}.sock")

    def set(self, mode: str, delay_ms: int = 0) -> dict[str, Any]:
        """Put the gate in `mode` (`slow` with its delay); its state after."""
        return self.ask(f"{mode} {delay_ms}" if mode == SLOW else mode)

    def state(self) -> dict[str, Any]:
        return self.ask("state")


if __name__ == "__main__":
    main(sys.argv[1:])
