"""`lose-unflushed` on fsync-tracked disks (harness/fsync_disk.py), against a real cluster: the
power loss drops what Kafka did not fsync, and nothing Kafka did."""

import pytest

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.fsync_disk import FSYNC_TRACKED, mounted_under
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.nemesis.core import Nemesis
from tests.integration.test_nemesis import FAST, isr, new_topic, produce, wait_for

pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("fsync-disk-cluster")]


@pytest.fixture(scope="module")
def cluster():
    with KafkaCluster(DEFAULT_VERSION).with_nodes(3).with_config(FAST).with_disk(FSYNC_TRACKED) as c:
        workdir = c.workdir
        yield c
    assert mounted_under(workdir) == []  # stop unmounts every disk


@pytest.fixture
def nemesis(cluster, tmp_path):
    with HistoryWriter(tmp_path / "history.jsonl") as history:
        yield Nemesis(cluster, history, seed=1)


def lose_power(cluster, nemesis, alias: str, topic: str) -> list[dict]:
    """A power loss of one node; the files it reverted under `topic`'s partition 0."""
    done = nemesis.run("lose-unflushed", alias)
    assert "error" not in done, done
    wait_for(lambda: len(isr(cluster, topic=topic)) == 3, 90, f"{alias} to rejoin {topic}/0's ISR")
    return [r for r in done["reverted"] if r["file"].startswith(f"{topic}-0/")]


def test_a_power_loss_drops_the_log_kafka_did_not_fsync(cluster, nemesis):
    """Kafka's default fsyncs a segment only when it rolls: the records just written are lost."""
    new_topic(cluster, "unsynced", {"min.insync.replicas": "2"})
    produce(cluster, 2000, topic="unsynced")
    reverted = {r["file"]: r for r in lose_power(cluster, nemesis, "kafka-1", "unsynced")}
    log = reverted["unsynced-0/00000000000000000000.log"]
    assert log["durable_size"] < log["size"]


def test_a_power_loss_keeps_a_log_fsynced_on_every_message(cluster, nemesis):
    """The near-identical case: `flush.messages=1`, and the log survives whole."""
    new_topic(cluster, "synced", {"min.insync.replicas": "2", "flush.messages": "1"})
    produce(cluster, 300, topic="synced")
    reverted = lose_power(cluster, nemesis, "kafka-2", "synced")
    assert [r for r in reverted if r["file"].endswith(".log")] == []


def test_each_node_runs_on_its_own_mount(cluster):
    mounts = {m.parent.name for m in mounted_under(cluster.workdir)}
    assert mounts == {n.alias for n in cluster.nodes}
