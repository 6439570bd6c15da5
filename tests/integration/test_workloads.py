"""Workloads against real clusters, with no faults: what was acknowledged is read back. The two
fault-free runs share the module's cluster (one xdist group); the Ctrl-C test owns its own."""

import json
import time

import pytest
from kafka import KafkaAdminClient

from kafka_chaos.checkers.check import check_history
from kafka_chaos.harness.admin import raise_producer_epoch
from kafka_chaos.harness.names import new_run_id, transactional_id
from kafka_chaos.history.events import FIELDS
from kafka_chaos.history.file import HistoryWriter, ReadReport, read_history
from kafka_chaos.workloads.options import WorkloadOptions
from tests.integration.history_facts import sent_and_read
from tests.integration.leftovers import assert_no_leftovers
from tests.integration.processes import ONE_NODE, cli, interrupt, kill_and_clean

pytestmark = pytest.mark.cluster


@pytest.mark.xdist_group("workloads-cluster")
def test_queue_run_reads_back_every_acknowledged_send(shared_cluster, tmp_path):
    opts = WorkloadOptions(time_limit=10, concurrency=8, rate=500, send_values=2)
    done = shared_cluster.run(opts, tmp_path / "store", seed=7)
    run_dir, summary = done.run_dir, done.summary
    report = ReadReport()
    events = list(read_history(run_dir / "history.jsonl", report))
    assert report.warnings == []
    ok_sent, _, read, offsets = sent_and_read(events)
    # Enough sends to mean something, not a throughput target: a healthy run in CI's load can be
    # slow (docs/measurements.md, 2026-11-24); the bench measures rates.
    assert len(ok_sent) > 100, summary
    assert ok_sent <= read, f"acknowledged but never read: {sorted(ok_sent - read)[:10]}"
    assert all(len(values) == 1 for values in offsets.values()), "an offset carried two values"
    assert summary.final_read_complete
    assert {e["f"] for e in events} == {"assign", "send", "poll"}
    # The final read's events, and only they, say so: from the first of them on, every event.
    first_final = next(i for i, e in enumerate(events) if e.get("phase") == "final")
    assert all(e.get("phase") == "final" for e in events[first_final:])
    assert not any(e.get("phase") for e in events[:first_final])
    # The checker on this real no-fault run: valid; at most the allowed interleaving of sends
    # (one operation's values are separate records, other producers' records land between them).
    result = check_history(run_dir)
    assert result.valid is True, result.anomalies
    assert result.errors == [] and set(result.anomalies) <= {"int-send-skip"}
    assert result.stats["values"]["acknowledged"] == len(ok_sent)
    assert (run_dir / "results.json").exists() and (run_dir / "report.html").exists()
    # Every invoke has exactly one completion by the same process, in order.
    open_ops = {}
    for e in events:
        if e["type"] == "invoke":
            assert e["process"] not in open_ops
            open_ops[e["process"]] = e["f"]
        else:
            assert open_ops.pop(e["process"]) == e["f"]
    assert open_ops == {}
    config = json.loads((run_dir / "config.json").read_text())
    assert config["effective_producer_config"]["enable_idempotence"] is True
    assert config["effective_producer_config"]["acks"] == -1
    assert (run_dir.parent / "latest").resolve() == run_dir
    assert json.loads((run_dir / "summary.json").read_text())["complete"] is True

    # The history round-trips through the writer and the reader.
    with HistoryWriter(tmp_path / "copy.jsonl") as copy:
        for e in events:
            extra = {k: v for k, v in e.items() if k not in FIELDS}  # the final read's "phase"
            copy.write(e["process"], e["type"], e["f"], e["value"], e.get("error"), **extra)
    again = list(read_history(tmp_path / "copy.jsonl"))
    assert [{k: v for k, v in e.items() if k != "time"} for e in again] == [
        {k: v for k, v in e.items() if k != "time"} for e in events
    ]


@pytest.mark.xdist_group("workloads-cluster")
def test_txn_run_commits_are_read_and_aborts_are_not(shared_cluster, tmp_path):
    opts = WorkloadOptions(workload="txn", time_limit=10, concurrency=4, rate=100, txn_abort_fraction=0.3)
    done = shared_cluster.run(opts, tmp_path / "store", seed=11)
    run_dir, summary = done.run_dir, done.summary
    events = list(read_history(run_dir / "history.jsonl"))
    ok_sent, failed_sent, read, _ = sent_and_read(events)
    txns = [e for e in events if e["f"] == "txn" and e["type"] != "invoke"]
    assert any(e["type"] == "ok" for e in txns) and any(e.get("error") == "deliberate abort" for e in txns)
    # Live from the start: the transaction coordinator was made ready before the clock started
    # (workloads/txn.py prepare_transactions), so no process spends the run timing out in init.
    assert min(e["time"] for e in txns if e["type"] == "ok") < 5e9
    assert ok_sent and failed_sent
    assert ok_sent <= read, f"committed but never read: {sorted(ok_sent - read)[:10]}"
    assert not failed_sent & read, f"aborted but read (read_committed): {sorted(failed_sent & read)[:10]}"
    assert summary.final_read_complete
    result = check_history(run_dir, report=False)
    assert result.valid is True, result.anomalies
    assert "G1a" not in result.anomalies and "precommitted-read" not in result.anomalies


@pytest.mark.xdist_group("workloads-cluster")
def test_a_txn_run_starts_its_transactional_ids_at_the_epoch_asked(shared_cluster, tmp_path):
    """--txn-start-epoch: InitProducerId requests raise each process's id one epoch at a time, and
    the process's own producer then starts one above; its transactions, of two sends or more, commit."""
    opts = WorkloadOptions(
        workload="txn", time_limit=5, concurrency=2, rate=50, txn_start_epoch=30, txn_min_ops=2, poll_fraction=0.0
    )
    done = shared_cluster.run(opts, tmp_path / "store", seed=13)
    events = list(read_history(done.run_dir / "history.jsonl"))
    ok = [e for e in events if e["f"] == "txn" and e["type"] == "ok"]
    assert ok and all(2 <= sum(op[0] == "send" for op in e["value"]) <= 4 for e in ok)  # txn_min_ops to max
    run_id = json.loads((done.run_dir / "config.json").read_text())["run_id"]
    with KafkaAdminClient(bootstrap_servers=shared_cluster.cluster.bootstrap_servers) as admin:
        # One more request on process 0's id: the producer's init took it to 31, each commit one on
        # (transactions version 2) or none (version 1): above 31 either way, as Kafka kept it.
        assert raise_producer_epoch(admin, transactional_id(run_id, 0), 31) > 31
        fresh = f"kafka-chaos-{new_run_id()}-fresh"
        assert raise_producer_epoch(admin, fresh, 4) == 4  # a new id starts at 0: five requests
        assert raise_producer_epoch(admin, fresh, 4) == 5  # asked again: one more, never fewer


def test_sigint_leaves_a_readable_history_and_no_containers(tmp_path, docker_api):
    proc = cli(
        [
            "run",
            *ONE_NODE,
            "--time-limit",
            "120",
            "--store",
            str(tmp_path),
            "--quiet",
        ]
    )
    history = tmp_path / "queue" / "latest" / "history.jsonl"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if history.exists() and len(history.read_text().splitlines()) > 200:
            break
        time.sleep(0.5)
    try:
        code, _, err = interrupt(proc, 90)
    finally:
        kill_and_clean(docker_api, proc)
    assert code == 130, err
    events = list(read_history(history))
    assert len(events) > 200
    summary = json.loads((history.parent / "summary.json").read_text())
    assert summary["complete"] is False
    assert_no_leftovers(docker_api)
