"""The Java client and librdkafka behind the same workloads, on real clusters, with no faults:
what was acknowledged is read back, committed transactions are read and aborted ones never,
config.json says what each client ran with, and a Java driver that dies stops the run.

kafka-python's own runs are tests/integration/test_workloads.py; the fault runs of every client
are tests/chaos/test_clients.py.
"""

import json
import logging
import re
import time

import confluent_kafka
import pytest

from kafka_chaos.checkers.check import check_history
from kafka_chaos.harness.names import new_run_id
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.file import read_history
from kafka_chaos.nemesis.pause import pause, resume
from kafka_chaos.workloads.clients import java, librdkafka
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.runner import WorkloadCrash
from tests.integration.history_facts import sent_and_read
from tests.integration.processes import cli

# The runs share the module's cluster (tests/integration/conftest.py), each on its own topic; one
# worker runs them, one at a time.
pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("clients-cluster")]

CLIENTS = ["librdkafka", "java"]
#: The workload's librdkafka consumer settings, before a test adds librdkafka's debug log to them.
CONSUMER_CONFIG = librdkafka.consumer_config
#: What each client reports as its producer's acks and idempotence under the safe defaults.
SAFE_PRODUCER = {
    "librdkafka": {"acks": "all", "enable.idempotence": True},
    "java": {"acks": "-1", "enable.idempotence": "true"},
}


def _events_by_client(events):
    return {e.get("client") for e in events if e["type"] == "invoke"}


@pytest.mark.parametrize("client", CLIENTS)
def test_queue_run_reads_back_every_acknowledged_send(shared_cluster, tmp_path, client):
    # 20 s: librdkafka ramps up over its first 10 s on a fresh cluster (docs/measurements.md, 2026-11-25).
    opts = WorkloadOptions(client=client, time_limit=20, concurrency=8, rate=500, send_values=2)
    done = shared_cluster.run(opts, tmp_path / "store", seed=7)
    run_dir, summary = done.run_dir, done.summary
    events = list(read_history(run_dir / "history.jsonl"))
    ok_sent, _, read, offsets = sent_and_read(events)
    assert len(ok_sent) > 50, summary  # see test_workloads.py: enough to mean something, not a rate
    assert ok_sent <= read, f"acknowledged but never read: {sorted(ok_sent - read)[:10]}"
    assert all(len(values) == 1 for values in offsets.values()), "an offset carried two values"
    assert summary.final_read_complete
    # No write failed. An assign or a poll may end info: a broker that does not know the new topic
    # yet fails librdkafka's lookup of the start of the log (seen at the start of a run on a loaded
    # machine; docs/clients.md).
    assert summary.counts.get("send:fail", 0) == 0 and summary.counts.get("send:info", 0) == 0, summary.counts
    assert _events_by_client(events) == {client}
    result = check_history(run_dir, report=False)
    assert result.valid is True, result.anomalies
    config = json.loads((run_dir / "config.json").read_text())
    assert config["client"] == client and config["client_version"]
    produced = config["effective_producer_config"]
    assert {k: produced[k] for k in SAFE_PRODUCER[client]} == SAFE_PRODUCER[client], produced
    assert config["effective_consumer_config"]["isolation.level"] == "read_uncommitted"
    if client == "java":
        assert config["client_version"] == DEFAULT_VERSION  # the cluster's, by default
        assert produced["delivery.timeout.ms"] == "10000"  # the Java client's own view of it


@pytest.mark.parametrize("client", CLIENTS)
def test_txn_run_commits_are_read_and_aborts_are_not(shared_cluster, tmp_path, client):
    # The Java client of another release than the cluster's (--client-version): 3.9.1 on 4.3.1.
    version = {"client_version": "3.9.1"} if client == "java" else {}
    # 20 s, not 10: librdkafka's slow start, as in the queue test above (docs/measurements.md, 2026-11-25).
    opts = WorkloadOptions(
        client=client, workload="txn", time_limit=20, concurrency=4, rate=100, txn_abort_fraction=0.3, **version
    )
    done = shared_cluster.run(opts, tmp_path / "store", seed=11)
    events = list(read_history(done.run_dir / "history.jsonl"))
    ok_sent, failed_sent, read, _ = sent_and_read(events)
    txns = [e for e in events if e["f"] == "txn" and e["type"] != "invoke"]
    assert any(e["type"] == "ok" for e in txns) and any(e.get("error") == "deliberate abort" for e in txns)
    assert ok_sent and failed_sent
    assert ok_sent <= read, f"committed but never read: {sorted(ok_sent - read)[:10]}"
    assert not failed_sent & read, f"aborted but read (read_committed): {sorted(failed_sent & read)[:10]}"
    assert done.summary.final_read_complete
    result = check_history(done.run_dir, report=False)
    assert result.valid is True, result.anomalies
    config = json.loads((done.run_dir / "config.json").read_text())
    assert config["effective_consumer_config"]["isolation.level"] == "read_committed"
    assert config["effective_producer_config"]["transactional.id"]
    if client == "java":
        assert config["client_version"] == "3.9.1" and config["kafka_version"] == DEFAULT_VERSION


#: Records in the rewind tests' partition; the seek goes to SOUGHT.
RECORDS, SOUGHT = 60, 10


@pytest.fixture
def one_partition(shared_cluster):
    """A topic of one partition holding RECORDS records, and the node that leads it."""
    topic = f"rewind-{new_run_id()}"
    cluster = shared_cluster.cluster
    cluster.create_topic(topic, 1, 3)
    producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    for value in range(RECORDS):
        producer.produce(topic, value=str(value).encode(), partition=0)
    assert producer.flush(30) == 0
    probe = confluent_kafka.Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": topic})
    leader_id = probe.list_topics(topic, timeout=10).topics[topic].partitions[0].leader
    probe.close()
    return topic, next(n for n in cluster.nodes if n.node_id == leader_id)


def _offsets_read(poll, seconds: float) -> list[int]:
    offsets, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        offsets += poll()
    return offsets


def test_librdkafka_rewinds_a_consumer_sought_while_it_looks_up_the_start_of_the_log(shared_cluster, one_partition):
    """A finding, pinned (docs/clients.md, "librdkafka: a seek during an offset lookup rewinds the
    consumer"): a consumer assigned at OFFSET_BEGINNING looks that offset up; sought elsewhere while
    the answer is on its way (here: its leader paused), it takes the stale answer as a reason to
    look up OFFSET_BEGINNING again, half a second later, and starts over from there, unasked. The
    Java client and kafka-python drop such an answer. When this fails, librdkafka changed: update
    the docs, and the workload's consumer may go back to logical offsets."""
    topic, leader = one_partition
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": shared_cluster.cluster.bootstrap_servers,
            "group.id": topic,
            "enable.auto.commit": False,
            "auto.offset.reset": "error",
            "isolation.level": "read_committed",
        }
    )
    try:
        consumer.list_topics(topic, timeout=10)  # its leader known: the lookup is sent at once
        pause(leader)
        try:
            consumer.assign([confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])
            time.sleep(0.3)
            consumer.seek(confluent_kafka.TopicPartition(topic, 0, SOUGHT))
        finally:
            resume(leader)
        read = _offsets_read(lambda: [m.offset() for m in consumer.consume(100, 0.05) if m.error() is None], 4)
    finally:
        consumer.close()
    # The application sought to SOUGHT; librdkafka read from the start of the log on its own (after
    # what it had fetched from SOUGHT on, when that fetch was out before the stale answer came).
    assert 0 in read and set(read) == set(range(RECORDS)), read[:20]


def test_the_workloads_librdkafka_consumer_never_looks_up_an_offset_itself(
    shared_cluster, one_partition, tmp_path, monkeypatch
):
    """The workload's librdkafka consumer hands librdkafka absolute offsets only (the start of the
    log found with a watermark query), so the lookup of the test above never happens: its debug
    log has none, a seek to the start of the log is a seek to offset 0, and a seek while the
    leader is paused is where it reads next, for good."""
    topic, leader = one_partition
    key = f"{topic}/0"
    monkeypatch.setattr(
        librdkafka, "consumer_config", lambda opts, iso: {**CONSUMER_CONFIG(opts, iso), "debug": "topic"}
    )
    client = librdkafka.LibrdkafkaClient(shared_cluster.cluster.bootstrap_servers, WorkloadOptions(), tmp_path)
    client.logger.setLevel(logging.DEBUG)
    consumer = client.consumer("rewind-test", "read_committed")
    try:
        consumer.assign([key])
        assert consumer.position(key) == 0
        consumer.seek(key, -1)  # the txn workload's rewind of a key it never read
        assert consumer.position(key) == 0
        pause(leader)
        try:
            consumer.seek(key, SOUGHT)
        finally:
            resume(leader)
        read = _offsets_read(lambda: [o for o, _ in consumer.poll(50).get(key, [])], 4)
    finally:
        consumer.close()
        client.close()
    assert read == list(range(SOUGHT, RECORDS)), read[:20]
    log = (tmp_path / "client-librdkafka.log").read_text()
    assert "Seek " in log  # the debug log is on
    assert "querying for logical offset" not in log, [line for line in log.splitlines() if "logical" in line][:3]


def test_a_java_driver_that_dies_stops_the_run_naming_the_client_and_keeps_the_history(
    shared_cluster, tmp_path, monkeypatch
):
    drivers = []

    class Recorded(java.JavaDriver):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            drivers.append(self)

    monkeypatch.setattr(java, "JavaDriver", Recorded)

    class Progress:
        """A reporter whose status line (every second of the workload phase: "... ops (ok N,
        fail ...)") kills the driver."""

        def __call__(self, line: str) -> None:
            pass

        def tick(self, message: str) -> None:
            # Killed once enough has been recorded, not after a fixed time (docs/measurements.md,
            # 2026-11-25).
            ok = re.search(r"\(ok (\d+),", message)
            if ok and int(ok.group(1)) > 100 and drivers[0].proc.poll() is None:
                drivers[0].proc.kill()

    opts = WorkloadOptions(client="java", time_limit=120, concurrency=4, rate=200)
    job = shared_cluster.job(opts, tmp_path, reporter=Progress())
    with pytest.raises(WorkloadCrash, match=rf"the java client \(kafka-clients {DEFAULT_VERSION}\) driver exited"):
        job.execute()
    run_dir = job.result.run_dir
    events = list(read_history(run_dir / "history.jsonl"))
    # Stopped, not run out: the history ends well before the time limit. (Not the wall clock
    # around execute(), which holds the cluster's start: a minute or more in CI's load.)
    assert max(e["time"] for e in events) < opts.time_limit * 1e9 / 2
    assert sum(e["type"] == "ok" for e in events) > 50  # the operations before the death are kept
    config = json.loads((run_dir / "config.json").read_text())
    assert config["client"] == "java"
    assert json.loads((run_dir / "summary.json").read_text())["complete"] is False


def test_a_kafka_clients_release_maven_does_not_have_is_exit_2_before_any_cluster(tmp_path, docker_api):
    proc = cli(["run", "--client", "java", "--client-version", "3.4.9", "--store", str(tmp_path), "--quiet"])
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "kafka-clients 3.4.9 is not on Maven Central" in lines[0], err
    # The list's own labels: a container another test removes meanwhile cannot fail an inspect.
    owners = [(c.get("Labels") or {}).get("org.kafka-chaos.owner", "") for c in docker_api.api.containers(all=True)]
    assert not [o for o in owners if f":{proc.pid}:" in o], owners  # it started no container
    assert not any(tmp_path.iterdir())  # no run directory either
