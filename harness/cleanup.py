"""Labels on everything the harness creates, and removal by label.

Testcontainers' reaper cannot run where no image can be pulled, so every container and
network carries `org.kafka-chaos.run=<run id>`; a cluster removes its own on exit, and
`kafka-chaos clean` removes what a killed run left behind.

Every container and network also names its owner, the process that created it (this host's
boot id, the pid and the pid's start time, so a reused pid is not mistaken for the owner).
`clean` removes only what no living process owns: a nightly job, a pytest worker or a second
`kafka-chaos up` on the same engine keeps its cluster while another cleans up; `--all` removes
every kafka-chaos container, live runs' too.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import docker
from docker.errors import APIError, NotFound

MANAGED = "org.kafka-chaos.managed"
RUN = "org.kafka-chaos.run"
NODE = "org.kafka-chaos.node"
OWNER = "org.kafka-chaos.owner"


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
    return owner is not None and owner[0] == _boot_id() and _start_time(owner[1]) == owner[2]


def labels_for(run_id: str, **extra: str) -> dict[str, str]:
    return {MANAGED: "true", RUN: run_id, OWNER: owner_of(), **{f"org.kafka-chaos.{k}": v for k, v in extra.items()}}


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
) -> tuple[int, int]:
    """Remove containers, then networks, of one run; with no run, what dead runs left (or, with
    `everything`, every kafka-chaos run's); returns the counts."""
    if run_id or everything:
        containers, networks = find_by_label(client, run_id)
    else:
        containers, networks = leftovers(client)
    remove(containers, networks)
    return len(containers), len(networks)


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
