"""A tiered cluster (harness/tiered.py) on a real Kafka: what its brokers write goes to the one
remote storage they share, their local copies are deleted, and a read from the start gets every
acknowledged record back from remote storage. And a tiered run: valid, most of its final read
from remote storage, with retention shown unable to delete what it wrote. One cluster for both
(fault-free), on the default version, 4.4.0, whose remote storage is ours where Maven Central has
no test jar of its minor line, as here (docs/cluster.md); LocalTieredStorage, the other
storage, is Kafka's own and loaded by the same settings (tests/unit/test_tiered.py)."""

from __future__ import annotations

import json
import time
from contextlib import closing

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from kafka_chaos.checkers.check import check_history
from kafka_chaos.harness.cleanup import find_by_label
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.tiered import local_log_starts, remote_segments, topic_config
from kafka_chaos.workloads.options import WorkloadOptions
from tests.integration.conftest import serve_shared

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(600), pytest.mark.xdist_group("tiered")]
TOPIC = "tiered"
TIERED_VERSION = "4.4.0"


@pytest.fixture(scope="module")
def tiered_cluster(docker_api, tmp_path_factory):
    shared = serve_shared(ClusterSpec(TIERED_VERSION, tiered=True), tmp_path_factory)
    cluster = next(shared)
    yield cluster
    next(shared, None)  # the cluster removed
    assert find_by_label(docker_api, cluster.cluster.run_id) == ([], [])


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

    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, enable_auto_commit=False)
    with closing(consumer):
        tp = TopicPartition(TOPIC, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got: list[int] = []
        deadline = time.monotonic() + 60
        while len(got) < len(sent) and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=1000).values():
                got += [r.offset for r in records]
    assert got == sent  # offsets below every local start: served from remote storage


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
