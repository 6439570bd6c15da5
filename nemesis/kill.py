"""`kill`: SIGKILL the broker (the JVM is the container's main process, so the container
stops); `start`: start it again with its disk as it was."""

from __future__ import annotations

from harness.node import KafkaNode
from nemesis.docker_ops import container, wait_status


def kill(node: KafkaNode) -> None:
    c = container(node)
    if c.status == "paused":  # a frozen process cannot take a signal until thawed
        c.unpause()
    if c.status in ("running", "paused", "restarting"):
        c.kill(signal="SIGKILL")
    wait_status(node, {"exited", "dead", "created"})


def start(node: KafkaNode) -> None:
    c = container(node)
    if c.status == "paused":
        c.unpause()
    elif c.status != "running":
        c.start()
    wait_status(node, {"running"})
