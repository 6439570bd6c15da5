"""The Java client and librdkafka behind the same workloads, on real clusters, with no faults:
what was acknowledged is read back, committed transactions are read and aborted ones never,
config.json says what each client ran with, and a Java driver that dies stops the run.

kafka-python's own runs are tests/integration/test_workloads.py; the fault runs of every client
are tests/chaos/test_clients.py.
"""

import json
import re

import pytest

from kafka_chaos.checkers.check import check_history
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.file import read_history
from kafka_chaos.workloads.clients import java
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.runner import WorkloadCrash
from tests.integration.history_facts import sent_and_read
from tests.integration.processes import cli

# The runs share the module's cluster (tests/integration/conftest.py), each on its own topic; one
# worker runs them, one at a time.
pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("clients-cluster")]

CLIENTS = ["librdkafka", "java"]
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
    # No write failed. A poll may end info: librdkafka reports a broker that does not know the
    # new topic yet as `_AUTO_OFFSET_RESET` (seen once at the start of a run on a loaded machine).
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
