"""The `quorum-leader` cut on combined nodes, verified by its effect: the other voters are brokers
too, so only the controller listener's port is cut between the active controller and them; their
broker listeners still reach each other (replication goes on), and the peers elect a leader in a
later epoch."""

import pytest

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.config import INTERNAL_PORT
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.nemesis import partition
from kafka_chaos.nemesis.core import Nemesis
from tests.integration.quorum import agreed_leader, peers_elect_a_later_epoch, reaches, views

pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("quorum-combined-cluster")]


def test_the_quorum_leader_cut_on_combined_nodes_is_of_the_controller_port_alone(tmp_path):
    with KafkaCluster(DEFAULT_VERSION).with_nodes(3) as cluster:
        node = cluster.node(agreed_leader(cluster))
        peers = [n for n in cluster.nodes if n.alias != node.alias]
        network = cluster.network.name
        epoch = views(cluster)[node.alias]["leader_epoch"]
        with HistoryWriter(tmp_path / "history.jsonl") as history:
            nemesis = Nemesis(cluster, history, seed=1)
            try:
                done = nemesis.run("partition", "random", shape="quorum-leader")
                assert (done["port"], done["listener"]) == (9093, "CONTROLLER")
                assert done["grudge"] == {
                    node.alias: sorted(p.alias for p in peers),
                    **{p.alias: [node.alias] for p in peers},
                }
                assert all(not reaches(p, node, network) and not reaches(node, p, network) for p in peers)
                assert all(
                    reaches(p, node, network, INTERNAL_PORT, attempts=3)
                    and reaches(node, p, network, INTERNAL_PORT, attempts=3)
                    for p in peers
                )
                assert reaches(peers[0], peers[1], network, attempts=3)
                peers_elect_a_later_epoch(cluster, node, peers, epoch)
            finally:
                nemesis.run("heal")
        assert partition.rules(node) == [] and reaches(peers[0], node, network, attempts=3)
