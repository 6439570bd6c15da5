"""The quorum as the integration tests wait for it: the leader every running controller's own
quorum-state file names (harness/quorum_state.py)."""

import time

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.quorum_state import path_of, read_view


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
