"""Labels on everything the harness creates, and removal by label.

Testcontainers' reaper cannot run where no image can be pulled, so every container and
network carries `org.kafka-chaos.run=<run id>`; a cluster removes its own on exit, and
`kafka-chaos clean` removes what a killed run left behind.
"""

from __future__ import annotations

import docker
from docker.errors import APIError, NotFound

MANAGED = "org.kafka-chaos.managed"
RUN = "org.kafka-chaos.run"
NODE = "org.kafka-chaos.node"


def labels_for(run_id: str, **extra: str) -> dict[str, str]:
    return {MANAGED: "true", RUN: run_id, **{f"org.kafka-chaos.{k}": v for k, v in extra.items()}}


def find_by_label(client: docker.DockerClient, run_id: str | None = None) -> tuple[list, list]:
    """Containers and networks of one run (or of every kafka-chaos run)."""
    selector = f"{RUN}={run_id}" if run_id else f"{MANAGED}=true"
    return (
        client.containers.list(all=True, filters={"label": selector}),
        client.networks.list(filters={"label": selector}),
    )


def remove_by_label(client: docker.DockerClient, run_id: str | None = None) -> tuple[int, int]:
    """Remove containers, then networks, of one run (or of every run); returns the counts."""
    containers, networks = find_by_label(client, run_id)
    for container in containers:
        try:
            container.remove(force=True, v=True)
        except NotFound:
            pass
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
    return len(containers), len(networks)
