"""A dynamic quorum (KIP-853) on a live cluster: its controllers formatted as the first voters,
each with the directory id it was given, and a controller whose disk is lost comes back formatted
as a replaced disk is (a new directory id, no voters): an observer, not a voter again.

The cluster is pinned at the oldest metadata version a dynamic quorum runs (3.9-IV0), so that every
format goes through Kafka's own tool (the first voters' with --release-version, the wiped one's
with --no-initial-controllers) rather than the image's formatted template, which the static
quorum's wipe test covers."""

import time

import pytest

from kafka_chaos.harness.admin import describe_quorum
from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.control_plane import replication
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.nemesis.core import Nemesis
from tests.integration.quorum import agreed_leader
from tests.integration.storage import meta_properties

pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("dynamic-quorum-cluster")]


@pytest.fixture(scope="module")
def cluster():
    cluster = KafkaCluster(DEFAULT_VERSION).with_dedicated_controllers(3, 1).with_metadata_version("3.9-IV0")
    with cluster.with_quorum("dynamic") as c:
        yield c


def quorum(cluster: KafkaCluster) -> dict:
    with cluster.admin() as admin:
        return replication(describe_quorum(admin))


def test_the_controllers_are_formatted_as_the_first_voters(cluster):
    for node in cluster.controllers:
        assert f"{node.node_id}@{node.alias}:9093:{meta_properties(node)['directory.id']}" in node.initial_controllers
        text = (node.node_dir / "config" / "server.properties").read_text()
        assert "controller.quorum.bootstrap.servers=" in text and "controller.quorum.voters" not in text
    seen = quorum(cluster)
    assert sorted(v["id"] for v in seen["voters"]) == [1, 2, 3]
    assert [o["id"] for o in seen["observers"]] == [4]


def test_a_wiped_controller_rejoins_as_an_observer_not_a_voter(cluster, tmp_path):
    leader = agreed_leader(cluster)
    peer = next(n for n in cluster.controllers if n.node_id != leader)
    before = meta_properties(peer)["directory.id"]
    with HistoryWriter(tmp_path / "history.jsonl") as history:
        Nemesis(cluster, history, seed=1).run("wipe", peer.alias)
    assert meta_properties(peer)["directory.id"] != before
    deadline = time.monotonic() + 60
    while True:
        seen = quorum(cluster)
        if peer.node_id in [o["id"] for o in seen["observers"]]:
            break
        assert time.monotonic() < deadline, seen
        time.sleep(0.5)
    assert sorted(v["id"] for v in seen["voters"]) == [1, 2, 3]  # its old directory still holds the seat
