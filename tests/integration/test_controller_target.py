"""The `controller` target resolves to the quorum's leader on every supported release (from the
controllers' own quorum-state files, cross-checked with DescribeQuorum where the client can read
it), with dedicated controllers and with combined nodes; and after that leader is killed, to the
one the others elected."""

import random
import time

import pytest

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.quorum_state import path_of, read_view
from kafka_chaos.nemesis.kill import kill, wait_stopped
from kafka_chaos.nemesis.targets import resolve

pytestmark = pytest.mark.cluster

VERSIONS = ["3.4.1", "3.6.2", "3.7.2", "4.3.1"]


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


@pytest.mark.parametrize("shape", ["dedicated", "combined"])
@pytest.mark.parametrize("version", VERSIONS)
def test_the_controller_target_is_the_quorum_leader(version, shape, assert_nothing_left):
    cluster = KafkaCluster(version)
    cluster = cluster.with_dedicated_controllers(3, 1) if shape == "dedicated" else cluster.with_nodes(3)
    rng = random.Random(0)
    with cluster:
        run_id = cluster.run_id
        leader = agreed_leader(cluster)
        assert [n.node_id for n in resolve(cluster, "controller", rng)] == [leader]
        kill(cluster.node(leader))
        wait_stopped(cluster.node(leader))
        successor = agreed_leader(cluster, not_=leader)
        assert [n.node_id for n in resolve(cluster, "controller", rng)] == [successor]
    assert_nothing_left(run_id)
