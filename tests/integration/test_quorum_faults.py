"""The quorum's targets and the `quorum-leader` partition on a live cluster with dedicated
controllers, verified by their effect: the targets are the active controller's peers, and the
cut leaves the leader unreachable from its peers but not from the broker, while the peers elect
a leader in a later epoch."""

import random
import time

import pytest

from kafka_chaos.harness.admin import describe_quorum
from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.control_plane import replication
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.nemesis import partition
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.targets import resolve
from tests.integration.quorum import agreed_leader, peers_elect_a_later_epoch, reaches, views
from tests.integration.storage import meta_properties

pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("quorum-cluster")]


@pytest.fixture(scope="module")
def cluster():
    with KafkaCluster(DEFAULT_VERSION).with_dedicated_controllers(3, 1) as c:
        yield c


def test_quorum_targets_are_the_active_controllers_peers(cluster):
    leader = cluster.node(agreed_leader(cluster)).alias
    peers = sorted(n.alias for n in cluster.controllers if n.alias != leader)
    rng = random.Random(3)
    assert sorted(n.alias for n in resolve(cluster, "controller", rng)) == [leader]
    assert sorted(n.alias for n in resolve(cluster, "voters", rng)) == peers
    assert sorted(n.alias for n in resolve(cluster, "quorum-majority", rng)) == peers
    minority = [n.alias for n in resolve(cluster, "quorum-minority", rng)]
    assert len(minority) == 1 and minority[0] in peers


def test_the_quorum_leader_cut_keeps_the_broker_reaching_it(cluster, tmp_path):
    leader = cluster.node(agreed_leader(cluster)).alias
    node = cluster.node(leader)
    peers = [n for n in cluster.controllers if n.alias != leader]
    broker = cluster.brokers[0]
    network = cluster.network.name
    epoch = views(cluster)[leader]["leader_epoch"]
    with HistoryWriter(tmp_path / "history.jsonl") as history:
        nemesis = Nemesis(cluster, history, seed=1)
        try:
            done = nemesis.run("partition", "random", shape="quorum-leader")
            assert done["grudge"] == {leader: sorted(p.alias for p in peers), **{p.alias: [leader] for p in peers}}
            assert all(not reaches(p, node, network) and not reaches(node, p, network) for p in peers)
            assert reaches(broker, node, network, attempts=3) and reaches(peers[0], peers[1], network, attempts=3)
            peers_elect_a_later_epoch(cluster, node, peers, epoch)  # cut off from their leader
        finally:
            nemesis.run("heal")
    assert partition.rules(node) == [] and reaches(peers[0], node, network, attempts=3)
    agreed_leader(cluster, timeout_s=60)  # the quorum whole again


def test_a_wiped_controller_comes_back_empty_formatted_as_the_cluster_and_rejoins(cluster, tmp_path):
    """The static quorum's controller disk lost: formatted again with the cluster's id (a new
    directory id where the version writes one), it follows the leader and copies its log again."""
    leader = cluster.node(agreed_leader(cluster)).alias
    peer = next(n for n in cluster.controllers if n.alias != leader)
    before = meta_properties(peer)
    metadata_dir = peer.data_dir / "__cluster_metadata-0"
    with HistoryWriter(tmp_path / "history.jsonl") as history:
        done = Nemesis(cluster, history, seed=1).run("wipe", peer.alias)
    assert done["nodes"] == [peer.alias]
    after = meta_properties(peer)
    assert after["cluster.id"] == before["cluster.id"] and after["node.id"] == before["node.id"]
    assert after.get("directory.id") != before.get("directory.id")
    deadline = time.monotonic() + 60
    while not (metadata_dir.exists() and any(p.stat().st_size > 0 for p in metadata_dir.glob("*.log"))):
        assert time.monotonic() < deadline, "the wiped controller never copied the metadata log again"
        time.sleep(0.5)
    assert agreed_leader(cluster, timeout_s=60) == cluster.node(leader).node_id
    with cluster.admin() as admin:  # the static quorum's seat is the id's: a voter again
        seen = replication(describe_quorum(admin))
    assert peer.node_id in [v["id"] for v in seen["voters"]]
    assert peer.node_id not in [o["id"] for o in seen["observers"]]
