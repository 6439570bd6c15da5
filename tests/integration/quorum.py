"""The quorum as the integration tests see it: each controller's own quorum-state file
(harness/quorum_state.py), the leader they agree on, and TCP reachability between nodes."""

import time

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.config import CONTROLLER_PORT
from kafka_chaos.harness.quorum_state import path_of, read_view
from kafka_chaos.nemesis.docker_ops import exec_root, network_ip


def views(cluster: KafkaCluster) -> dict[str, dict]:
    return {n.alias: read_view(path_of(n)) for n in cluster.controllers}


def reaches(source, target, network: str, port: int = CONTROLLER_PORT, attempts: int = 1) -> bool:
    """Whether `source` can open a TCP connection to `target`'s `port` (its controller listener)
    within 2 s, in any of `attempts` tries. A cut connection stays shut however often it is tried;
    an open one can miss 2 s on a loaded machine (a CI run's did): ask more than once where the
    answer should be open."""
    probe = f"timeout 2 bash -c '</dev/tcp/{network_ip(target, network)}/{port}' && echo open || echo shut"
    return any(exec_root(source, "sh", "-c", probe).strip() == "open" for _ in range(attempts))


def peers_elect_a_later_epoch(cluster: KafkaCluster, cut_off, peers, epoch: int, timeout_s: float = 30.0) -> None:
    """Wait until every peer holds a leader other than `cut_off` in an epoch above `epoch`."""
    deadline = time.monotonic() + timeout_s
    while True:
        seen = [views(cluster)[p.alias] for p in peers]
        if all(v["leader_epoch"] > epoch and v["leader_id"] not in (-1, cut_off.node_id) for v in seen):
            return
        assert time.monotonic() < deadline, seen
        time.sleep(0.25)


def agreed_leader(cluster: KafkaCluster, not_: int | None = None, timeout_s: float = 30.0) -> int:
    """The leader every running controller's file names, once they agree (on one other than `not_`)."""
    deadline = time.monotonic() + timeout_s
    while True:
        views = [read_view(path_of(n)) for n in cluster.controllers if n.state() == "running"]
        leaders = {v["leader_id"] for v in views}
        if len(leaders) == 1 and next(iter(leaders)) not in (None, -1, not_):
            return next(iter(leaders))
        assert time.monotonic() < deadline, views
        time.sleep(0.2)
