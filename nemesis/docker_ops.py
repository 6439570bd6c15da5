"""Docker-level operations on a node's container, shared by the faults."""

from __future__ import annotations

import time

from kafka_chaos.harness.node import KafkaNode


def container(node: KafkaNode):
    c = node.get_wrapped_container()
    c.reload()
    return c


def wait_status(node: KafkaNode, wanted: set[str], timeout_s: float = 30.0) -> str:
    """Poll the container until its status is one of `wanted`; the status it reached."""
    deadline = time.monotonic() + timeout_s
    status = container(node).status
    while status not in wanted and time.monotonic() < deadline:
        time.sleep(0.02)
        status = container(node).status
    if status not in wanted:
        raise TimeoutError(f"{node.alias} is {status}, not {'/'.join(sorted(wanted))}, after {timeout_s:g} s")
    return status


def exec_root(node: KafkaNode, *cmd: str) -> str:
    """Run a command as root inside the node's container; RuntimeError with its output on failure."""
    code, output = container(node).exec_run(list(cmd), user="root")
    text = output.decode(errors="replace") if isinstance(output, bytes) else str(output)
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd)} on {node.alias} exited {code}: {text.strip()[:300]}")
    return text


def network_ip(node: KafkaNode, network: str) -> str:
    """The node's address on the cluster network now (a restart can change it)."""
    return container(node).attrs["NetworkSettings"]["Networks"][network]["IPAddress"]
