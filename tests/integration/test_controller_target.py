"""The `controller` target resolves to the quorum's leader on every supported release (from the
controllers' own quorum-state files, cross-checked with DescribeQuorum where the client can read
it), with dedicated controllers and with combined nodes; and after that leader is killed, to the
one the others elected."""

import random

import pytest

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.nemesis.kill import kill, wait_stopped
from kafka_chaos.nemesis.targets import resolve
from tests.integration.quorum import agreed_leader

pytestmark = pytest.mark.cluster

#: Every release line with dedicated controllers, and combined nodes on the oldest and the
#: newest: the shape decides which nodes are asked, not how a release answers (its quorum-state
#: file, and DescribeQuorum where the client can read it).
CASES = [
    *[(version, "dedicated") for version in ("3.4.1", "3.6.2", "3.7.2", "4.3.1")],
    *[(version, "combined") for version in ("3.4.1", "4.3.1")],
]


@pytest.mark.parametrize(("version", "shape"), CASES)
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
