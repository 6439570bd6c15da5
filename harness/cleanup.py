"""Labels on everything the harness creates, and removal by label.

Testcontainers' reaper cannot run where no image can be pulled, so every container and
network carries `org.kafka-chaos.run=<run id>`; a cluster removes its own on exit, and
`kafka-chaos clean` removes what a killed run left behind.

Every container and network also names its owner, the process that created it (this host's
boot id, the pid and the pid's start time, so a reused pid is not mistaken for the owner; and the
pid namespace the pid is read in). `clean` removes only what no living process owns: a nightly
job, a pytest worker or a second `kafka-chaos up` on the same engine keeps its cluster while
another cleans up; `--all` removes every kafka-chaos container, live runs' too.

Every cluster's start does what `clean` does first (`reap`), as Testcontainers' reaper would: a
campaign of runs, or a run after one killed with SIGKILL, finds no leftovers of dead owners
(containers, networks, dead FUSE mounts of fsync-tracked disks and remote-storage gates, the
temporary folders of their clusters). Only
what is provably dead goes: an owner of another boot, or whose pid is gone or names a process
started at another time. An owner in another pid namespace (a harness in a container sharing the
engine) cannot be seen, so it counts as alive.
"""

from __future__ import annotations

import fcntl
import glob
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import docker
from docker.errors import APIError, DockerException, NotFound

logger = logging.getLogger(__name__)

MANAGED = "org.kafka-chaos.managed"
RUN = "org.kafka-chaos.run"
NODE = "org.kafka-chaos.node"
OWNER = "org.kafka-chaos.owner"
#: The pid namespace the owner's pid is read in (absent on objects made before it was recorded).
OWNER_PIDNS = "org.kafka-chaos.owner-pidns"
#: Taken shared by every reaper (a cluster's start, the test suite's checks), exclusively by
#: whoever makes leftovers on purpose and needs them to stay a moment (a test that SIGKILLs a
#: run): one file per machine, as there is one engine.
REAP_LOCK = Path(tempfile.gettempdir()) / "kafka-chaos-reap.lock"
#: How long a start waits for an exclusive holder before it starts without reaping.
REAP_WAIT_S = 60.0


def temporary_workdir(run_id: str) -> Path:
    """A new folder for a cluster given no workdir, named for its run so that a reaper can find
    and remove it once the run is dead (a SIGKILLed run's data would stay in the temp folder)."""
    return Path(tempfile.mkdtemp(prefix=f"kafka-chaos-{run_id}-"))


def _temporary_workdirs(run_id: str) -> list[Path]:
    return sorted(Path(tempfile.gettempdir()).glob(f"kafka-chaos-{glob.escape(run_id)}-*"))


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22); None when
    there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()[19]


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return "unknown"


def owner_of(pid: int | None = None) -> str:
    """The owner label of process `pid` (this process by default)."""
    pid = os.getpid() if pid is None else pid
    return f"{_boot_id()}:{pid}:{_start_time(pid) or '?'}"


def _owner(labels: dict[str, str]) -> tuple[str, int, str] | None:
    """The owner label's boot id, pid and start time (None when there is no valid one)."""
    parts = labels.get(OWNER, "").split(":")
    return (parts[0], int(parts[1]), parts[2]) if len(parts) == 3 and parts[1].isdigit() else None


def owner_pid(labels: dict[str, str]) -> int | None:
    """The pid of the process that created a labelled object (None when it was not labelled)."""
    owner = _owner(labels)
    return owner[1] if owner else None


def owner_alive(labels: dict[str, str]) -> bool:
    """Whether the process that created a labelled object still runs on this host. An object with
    no owner label (made by an older version) or from another boot has none."""
    owner = _owner(labels)
    if owner is None or owner[0] != _boot_id():
        return False
    if labels.get(OWNER_PIDNS, _pid_namespace()) != _pid_namespace():
        return True  # its pid means nothing here: not provably dead
    return _start_time(owner[1]) == owner[2]


def labels_for(run_id: str, **extra: str) -> dict[str, str]:
    return {
        MANAGED: "true",
        RUN: run_id,
        OWNER: owner_of(),
        OWNER_PIDNS: _pid_namespace(),
        **{f"org.kafka-chaos.{k}": v for k, v in extra.items()},
    }


def find_by_label(client: docker.DockerClient, run_id: str | None = None) -> tuple[list, list]:
    """Containers and networks of one run (or of every kafka-chaos run)."""
    selector = f"{RUN}={run_id}" if run_id else f"{MANAGED}=true"
    return (
        # Another run may remove a container between the listing and its inspection.
        client.containers.list(all=True, filters={"label": selector}, ignore_removed=True),
        client.networks.list(filters={"label": selector}),
    )


def _where(client: docker.DockerClient, keep: Callable[[dict[str, str]], bool]) -> tuple[list, list]:
    """Containers and networks of every kafka-chaos run whose labels `keep` accepts."""
    containers, networks = find_by_label(client)
    return (
        [c for c in containers if keep(c.labels)],
        [n for n in networks if keep(n.attrs.get("Labels") or {})],
    )


def leftovers(client: docker.DockerClient) -> tuple[list, list]:
    """Containers and networks of kafka-chaos runs whose owner process is gone."""
    return _where(client, lambda labels: not owner_alive(labels))


def owned_by(client: docker.DockerClient, pid: int) -> tuple[list, list]:
    """Containers and networks that process `pid` created."""
    return _where(client, lambda labels: owner_pid(labels) == pid)


def _removal_in_progress(error: APIError) -> bool:
    """Whether the engine refused a removal because another one of the same container runs."""
    return error.status_code == 409 and "already in progress" in str(error.explanation or "")


def remove_container(container, patience_s: float = 60.0) -> None:
    """Remove one container, volumes with it. Another cleaner may be at the same container at the
    same moment (a second `clean`, another pytest worker's start, the run's own exit): the engine
    then answers 409 "removal already in progress". That is not a failure, but its network can
    only go once the container is gone, so wait for that (up to `patience_s`)."""
    try:
        container.remove(force=True, v=True)
        return
    except NotFound:
        return
    except APIError as error:
        if not _removal_in_progress(error):
            raise
    deadline = time.monotonic() + patience_s
    while time.monotonic() < deadline:
        try:
            container.reload()
        except NotFound:
            return
        time.sleep(0.2)


def remove_by_label(
    client: docker.DockerClient, run_id: str | None = None, everything: bool = False
) -> tuple[int, int, list[str]]:
    """Remove containers, then networks, of one run; with no run, what dead runs left (or, with
    `everything`, every kafka-chaos run's); returns the counts and the runs they were of."""
    if run_id or everything:
        containers, networks = find_by_label(client, run_id)
    else:
        containers, networks = leftovers(client)
    remove(containers, networks)
    return len(containers), len(networks), run_ids(containers, networks)


def remove(containers: list, networks: list) -> None:
    """Containers first (volumes with them), then their networks."""
    for container in containers:
        remove_container(container)
    for network in networks:
        try:
            network.remove()
        except NotFound:
            pass
        except APIError:
            # A container of another tool still attached: disconnect it and try once more.
            network.reload()
            for attached in network.containers:
                network.disconnect(attached, force=True)
            network.remove()


_exclusive_here = 0  # how many exclusive holds of REAP_LOCK this process has open


@contextmanager
def reap_lock(exclusive: bool = False, wait_s: float | None = None) -> Iterator[bool]:
    """REAP_LOCK, shared or exclusive; yields whether it was taken (False after `wait_s` seconds of
    waiting; None: wait as long as it takes). Within this process's own exclusive hold a shared
    take succeeds at once: the holder's own cluster start reaps what it made on purpose."""
    global _exclusive_here
    if not exclusive and _exclusive_here:
        yield True
        return
    try:
        fh = open(REAP_LOCK, "a")  # closed by the with-block below, after the lock is let go
    except OSError as exc:  # another user's file, a read-only temp folder: reap unlocked
        logger.warning("cannot open %s: %s", REAP_LOCK, exc)
        yield True
        return
    with fh:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        deadline = None if wait_s is None else time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fh, mode | (fcntl.LOCK_NB if deadline is not None else 0))
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:  # type: ignore[operator]
                    yield False
                    return
                time.sleep(0.2)
        _exclusive_here += exclusive
        try:
            yield True
        finally:
            _exclusive_here -= exclusive
            fcntl.flock(fh, fcntl.LOCK_UN)


@dataclass
class Reaped:
    """What `reap` removed: dead owners' containers and networks (and the runs they were of), and
    FUSE mounts (fsync-tracked disks, remote-storage gates) whose layer was dead, and the
    temporary workdirs of the runs reaped."""

    containers: int = 0
    networks: int = 0
    mounts: int = 0
    workdirs: int = 0
    runs: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.containers or self.networks or self.mounts or self.workdirs)

    def describe(self) -> str:
        parts = [f"{self.containers} container(s)", f"{self.networks} network(s)"]
        if self.mounts:
            parts.append(f"{self.mounts} dead FUSE mount(s)")
        if self.workdirs:
            parts.append(f"{self.workdirs} temporary workdir(s)")
        runs = f" (run {', '.join(self.runs)})" if self.runs else ""
        return f"removed {', '.join(parts)} that dead owners left{runs}"


def reap(client: docker.DockerClient, wait_s: float = REAP_WAIT_S) -> Reaped:
    """Remove what dead owners left (`leftovers`) and unmount dead FUSE layers: what every
    cluster's start does first, as Testcontainers' reaper would. Never fails the caller: a removal
    the engine refuses is logged, and the leftovers stay for the next reaper or `clean`."""
    from kafka_chaos.harness.fuse_layer import unmount_stale

    reaped = Reaped()
    with reap_lock(wait_s=wait_s) as taken:
        if not taken:
            logger.warning("not reaping: %s held for over %g s", REAP_LOCK, wait_s)
            return reaped
        try:
            containers, networks = leftovers(client)
            reaped.runs = run_ids(containers, networks)
            remove(containers, networks)
            reaped.containers, reaped.networks = len(containers), len(networks)
        except DockerException as exc:
            logger.warning("could not remove every leftover of dead runs: %s", exc)
        reaped.mounts = unmount_stale()
        reaped.workdirs = remove_workdirs(reaped.runs)  # after the mounts: nothing under them is served
    return reaped


def remove_workdirs(run_ids: list[str]) -> int:
    """Remove the temporary workdirs (`temporary_workdir`) of these runs; how many went."""
    removed = 0
    for run_id in run_ids:
        for workdir in _temporary_workdirs(run_id):
            shutil.rmtree(workdir, ignore_errors=True)
            removed += not workdir.exists()
    return removed


def run_ids(containers: list, networks: list) -> list[str]:
    """The runs these containers and networks belong to, from their labels."""
    labels = [c.labels or {} for c in containers] + [n.attrs.get("Labels") or {} for n in networks]
    return sorted({lab[RUN] for lab in labels if RUN in lab})
