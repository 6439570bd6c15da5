from pathlib import Path

import pytest
from kafka.errors import KafkaTimeoutError, MessageSizeTooLargeError, NotEnoughReplicasAfterAppendError

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.outcomes import classify, describe, markdown_table

DOCS = Path(__file__).resolve().parents[2] / "docs" / "history.md"


def test_defaults_are_the_safe_configuration():
    opts = WorkloadOptions().validate()
    config = opts.producer_config()
    assert config["acks"] == "all" and config["enable_idempotence"] is True
    assert opts.replication_factor == 3 and opts.min_insync_replicas == 2
    assert opts.consumer_config()["auto_offset_reset"] == "none"
    assert "retries" not in config  # kafka-python's unlimited default, bounded by the delivery timeout


def test_idempotence_is_always_passed_explicitly():
    assert WorkloadOptions(acks="1", enable_idempotence=False).producer_config()["enable_idempotence"] is False
    assert WorkloadOptions(acks="1").producer_config()["acks"] == 1


def test_txn_reads_committed_only():
    assert WorkloadOptions(workload="txn").consumer_config()["isolation_level"] == "read_committed"
    assert WorkloadOptions().consumer_config()["isolation_level"] == "read_uncommitted"


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"rate": 0}, "--rate must be greater than 0"), ({"rate": -5}, "--rate"),
     ({"workload": "bank"}, "unknown workload 'bank'"), ({"acks": "2"}, "--acks must be one of 0, 1, all"),
     ({"acks": "-1"}, "--acks"), ({"keys": 0}, "--keys must be at least 1"),
     ({"concurrency": 0}, "--concurrency"), ({"auto_offset_reset": "smallest"}, "--auto-offset-reset"),
     ({"workload": "txn", "acks": "1"}, "txn workload needs --acks all"),
     ({"acks": "1"}, "--acks 1 needs --idempotence false")],
)  # fmt: skip
def test_bad_options_are_usage_errors(changes, message):
    with pytest.raises(UsageError, match=message):
        WorkloadOptions(**changes).validate()


def test_keys_are_topic_partitions():
    assert WorkloadOptions(topic="t", keys=3).key_names == ["t/0", "t/1", "t/2"]


def test_only_errors_that_prove_no_write_are_fail():
    assert classify(MessageSizeTooLargeError()) == "fail"
    assert classify(KafkaTimeoutError()) == "info"
    assert classify(NotEnoughReplicasAfterAppendError()) == "info"  # already in the leader's log
    assert classify(ConnectionError()) == "info"
    assert describe(KafkaTimeoutError("Batch expired")) == "KafkaTimeoutError: Batch expired"


def test_docs_show_the_classification_table_as_the_code_has_it():
    assert markdown_table() in DOCS.read_text()
