"""`stop`: a clean shutdown (SIGTERM, then SIGKILL if the JVM has not exited in time).

A broker that stops cleanly makes a controlled shutdown: it asks the controller to move its
leaderships away and is fenced at once, so it can register again right away. A SIGKILLed
broker keeps its session until broker.session.timeout.ms runs out, and the controller refuses
a new registration of the same id until then. Scenarios that need a broker back fast with an
empty disk (KAFKA-14139) stop it; `start` brings it back, as after `kill`.
"""

from __future__ import annotations

from kafka_chaos.harness.node import KafkaNode
from kafka_chaos.nemesis.docker_ops import container
from kafka_chaos.nemesis.kill import wait_stopped


def stop(node: KafkaNode, timeout_s: int = 30) -> None:
    c = container(node)
    if c.status == "paused":
        c.unpause()
    if c.status in ("running", "restarting"):
        c.stop(timeout=timeout_s)
    wait_stopped(node, timeout_s + 10.0)
