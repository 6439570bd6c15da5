"""`pause` / `resume`: freeze the broker's processes with the cgroup freezer (docker pause),
then thaw them. The JVM keeps its state and sockets; it just stops answering."""

from __future__ import annotations

from harness.node import KafkaNode
from nemesis.docker_ops import container, wait_status


def pause(node: KafkaNode) -> None:
    c = container(node)
    if c.status == "running":
        c.pause()
    wait_status(node, {"paused"})


def resume(node: KafkaNode) -> None:
    c = container(node)
    if c.status == "paused":
        c.unpause()
    wait_status(node, {"running", "exited"})
