"""A tiered cluster (harness/tiered.py) on a real Kafka: what its brokers write goes to the one
remote storage they share, their local copies are deleted, and a read from the start gets every
acknowledged record back from remote storage. And a tiered run: valid, most of its final read
from remote storage, with retention shown unable to delete what it wrote. And the remote storage
unavailable to every broker, healed: the copy resumes, nothing is lost, nothing is left behind.
One cluster for all three (the remote fault heals on it), on the default version, 4.4.0, whose
remote storage is ours where Maven Central has no test jar of its minor line, as here
(docs/cluster.md); LocalTieredStorage, the other storage, is Kafka's own and loaded by the same
settings (tests/unit/test_tiered.py)."""

from __future__ import annotations

import json
import time
from contextlib import closing

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from kafka_chaos.checkers.check import check_history
from kafka_chaos.harness.cleanup import find_by_label
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.fuse_layer import mounted_under
from kafka_chaos.harness.tiered import local_log_starts, remote_segments, topic_config
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.workloads.options import WorkloadOptions
from tests.integration.conftest import serve_shared

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(600), pytest.mark.xdist_group("tiered")]
TOPIC = "tiered"
TIERED_VERSION = "4.4.0"


@pytest.fixture(scope="module")
def tiered_cluster(docker_api, tmp_path_factory):
    shared = serve_shared(ClusterSpec(TIERED_VERSION, tiered=True), tmp_path_factory)
    cluster = next(shared)
    workdir, gates = cluster.cluster.workdir, [n.gate for n in cluster.cluster.brokers]
    assert workdir is not None and len(mounted_under(workdir)) == len(gates) == 3  # a gate per broker
    yield cluster
    next(shared, None)  # the cluster removed
    assert find_by_label(docker_api, cluster.cluster.run_id) == ([], [])
    assert mounted_under(workdir) == []  # no gate's mount left: not in /proc/mounts
    assert all(g.process.poll() is not None for g in gates)  # and no gate's process


def test_a_tiered_cluster_serves_a_read_from_the_start_out_of_remote_storage(tiered_cluster):
    cluster = tiered_cluster.cluster
    assert cluster.tiered_plugin is not None and cluster.remote_dir.is_dir()
    cluster.create_topic(TOPIC, 1, 3, {**topic_config(100, 30), "min.insync.replicas": "2"})
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", linger_ms=5)
    sent = []
    with closing(producer):
        for second in range(8):  # segments roll every second: one or more a second
            futures = [producer.send(TOPIC, f"{second}-{i}".encode(), partition=0) for i in range(200)]
            producer.flush()
            sent += [f.get(timeout=10).offset for f in futures]
            time.sleep(1)
    assert sent == list(range(len(sent)))

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        remote = remote_segments(cluster.remote_dir)
        starts = [local_log_starts([n.data_dir], [f"{TOPIC}/0"])[f"{TOPIC}/0"] for n in cluster.brokers]
        if sum(len(s) for s in remote.values()) >= 3 and all(s and s > 0 for s in starts):
            break
        time.sleep(1)
    assert sum(len(s) for s in remote.values()) >= 3, remote
    assert all(s and s > 0 for s in starts), starts  # every local copy begins past offset 0

    assert _read_from_start(cluster, TOPIC, len(sent)) == sent  # below every local start: from remote storage


def _read_from_start(cluster, topic: str, count: int) -> list[int]:
    """The offsets of partition 0 read from its start, until `count` came or a minute passed."""
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, enable_auto_commit=False)
    with closing(consumer):
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got: list[int] = []
        deadline = time.monotonic() + 60
        while len(got) < count and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=1000).values():
                got += [r.offset for r in records]
    return got


@pytest.mark.spark
def test_a_tiered_run_reads_most_of_its_writes_back_from_remote_storage_and_is_valid(tiered_cluster, tmp_path):
    opts = WorkloadOptions(time_limit=25, rate=300, concurrency=4, keys=2)
    done = tiered_cluster.run(opts, tmp_path, seed=3)
    config = json.loads((done.run_dir / "config.json").read_text())
    tiered = config["tiered"]
    plugin = tiered_cluster.cluster.tiered_plugin
    assert (tiered["storage"], tiered["release"]) == (plugin.storage, plugin.release)
    assert tiered["storage"] in ("LocalTieredStorage", "FolderRemoteStorageManager")
    assert tiered["retention"]["nothing_deletable"] is True, tiered
    reads = json.loads((done.run_dir / "summary.json").read_text())["tiered_reads"]
    assert reads["from_remote"] > reads["from_local"] > 0, reads  # the active segments stay local
    # Every replica was asked for its own start (the debugging replica id), and none moved.
    starts = json.loads((done.run_dir / "log-starts.json").read_text())
    assert starts["unanswered"] == {}, starts
    for key, partition in starts["partitions"].items():
        assert sorted(partition["replicas"]) == ["1", "2", "3"], (key, partition)
        assert all(r["log_start"] == 0 and r["local_log_start"] > 0 for r in partition["replicas"].values()), partition
        assert partition["remote"]["lowest_offset"] == 0 and partition["remote"]["segments"] > 0, partition
    result = check_history(done.run_dir, report=False)
    assert result.valid is True, result.anomalies
    assert result.tiered["checked"] and result.tiered["reads"] == reads


def _produce(producer: KafkaProducer, topic: str, seconds: int, tag: str) -> list[int]:
    """Two hundred records a second for `seconds`, acknowledged; their offsets."""
    offsets = []
    for second in range(seconds):
        futures = [producer.send(topic, f"{tag}{second}-{i}".encode(), partition=0) for i in range(200)]
        producer.flush()
        offsets += [f.get(timeout=10).offset for f in futures]
        time.sleep(1)
    return offsets


def _remote_logs(cluster, topic: str) -> set[str]:
    return {
        log.name
        for folder, logs in remote_segments(cluster.remote_dir).items()
        if folder.startswith(f"{topic}-0-")
        for _, log in logs
    }


def test_remote_storage_unavailable_to_every_broker_heals_and_the_copy_resumes(tiered_cluster):
    cluster = tiered_cluster.cluster
    topic = "tiered-remote-fault"
    cluster.create_topic(topic, 1, 3, {**topic_config(100, 30), "min.insync.replicas": "2"})
    nemesis = Nemesis(cluster, seed=1)
    brokers = [n.alias for n in cluster.brokers]
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", linger_ms=5)
    with closing(producer):
        sent = _produce(producer, topic, 3, "before-")
        closed = nemesis.run("remote-unavailable", ",".join(brokers))
        assert closed["nodes"] == brokers and "error" not in closed, closed
        while_closed = _remote_logs(cluster, topic)
        sent += _produce(producer, topic, 5, "during-")  # the brokers run and take writes meanwhile
        assert _remote_logs(cluster, topic) == while_closed  # no segment reached remote storage
        failed = sum(n.gate.state()["failed"] for n in cluster.brokers)
        assert failed > 0  # the remote log manager tried, and the gates failed it
        healed = nemesis.run("remote-heal")
        assert healed["nodes"] == brokers and not nemesis.open.get("remote-heal"), healed
        assert all(n.gate.state()["mode"] == "open" for n in cluster.brokers)
        sent += _produce(producer, topic, 1, "after-")
    assert sent == list(range(len(sent)))

    deadline = time.monotonic() + 60
    copied: set[str] = set()
    while time.monotonic() < deadline:
        copied = _remote_logs(cluster, topic) - while_closed
        bases = [int(name[:20]) for name in copied]
        if bases and max(bases) >= 600:  # past what was written before the fault: the fault's own
            break
        time.sleep(1)
    assert copied and max(int(name[:20]) for name in copied) >= 600, copied  # the copy resumed

    assert _read_from_start(cluster, topic, len(sent)) == sent  # every acknowledged record
