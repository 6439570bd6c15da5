"""`pause` / `resume`: freeze the broker's processes with the cgroup freezer (docker pause),
then thaw them. The JVM keeps its state and sockets; it just stops answering."""

from __future__ import annotations

import time

from docker.errors import APIError

from kafka_chaos.harness.node import KafkaNode
from kafka_chaos.nemesis.docker_ops import container, wait_status

FREEZE_ATTEMPTS = 3


def pause(node: KafkaNode) -> None:
    """runc gives up ("unable to freeze") when a task does not reach the frozen state in time, for
    example in the middle of heavy I/O; it thaws the container again, so trying again is safe."""
    for attempt in range(1, FREEZE_ATTEMPTS + 1):
        c = container(node)
        if c.status == "paused":
            break
        if c.status != "running":  # down (a kill held at once, nemesis/overlap.py): nothing to freeze
            raise RuntimeError(f"{node.alias} is {c.status}: only a running container can be paused")
        try:
            c.pause()
            break
        except APIError as exc:
            if "unable to freeze" not in str(exc) or attempt == FREEZE_ATTEMPTS:
                raise
            time.sleep(0.1 * attempt)
    wait_status(node, {"paused"})


def resume(node: KafkaNode) -> None:
    c = container(node)
    if c.status == "paused":
        c.unpause()
    wait_status(node, {"running", "exited"})
