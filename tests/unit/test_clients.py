"""The client layer's pure logic: the outcome table of each client, the settings each client is
given, and the Java driver's completions. Real clients on real clusters: tests/integration/test_clients.py."""

import pytest
from kafka.errors import CommitFailedError, KafkaTimeoutError

from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.workloads.clients import java, librdkafka
from kafka_chaos.workloads.clients.api import CLIENTS, ClientDied, ClientError
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.outcomes import COMMIT_DEFINITE, DEFINITE, NOT_DEFINITE, classify, classify_commit, describe


@pytest.mark.parametrize(
    ("client", "name", "outcome"),
    [
        ("java", "RecordTooLargeException", "fail"),
        ("java", "TimeoutException", "info"),
        ("java", "NotLeaderOrFollowerException", "info"),
        ("java", "MessageSizeTooLargeError", "info"),  # kafka-python's name means nothing to Java
        ("librdkafka", "MSG_SIZE_TOO_LARGE", "fail"),
        ("librdkafka", "_MSG_TIMED_OUT", "info"),
        ("librdkafka", "RecordTooLargeException", "info"),
    ],
)
def test_each_client_is_classified_by_its_own_names(client, name, outcome):
    assert classify(ClientError(name, "x"), client) == outcome


def test_a_record_the_client_refused_is_fail_whatever_its_name():
    assert classify(ClientError("TimeoutException", "metadata", refused=True), "java") == "fail"
    assert classify(ClientError("TimeoutException", "metadata"), "java") == "info"


def test_the_tables_cover_every_client_and_never_disagree():
    assert set(DEFINITE) == set(NOT_DEFINITE) == set(CLIENTS)
    for client in CLIENTS:
        assert not set(DEFINITE[client]) & set(NOT_DEFINITE[client])
        assert all(classify(ClientError(n), client) == "info" for n in NOT_DEFINITE[client])
    assert classify(ClientDied("gone"), "java") == "info"


def test_a_commit_is_fail_only_when_the_group_refused_it():
    assert set(COMMIT_DEFINITE) == set(CLIENTS)
    assert classify_commit(CommitFailedError()) == "fail"
    assert classify_commit(KafkaTimeoutError()) == "info"  # the coordinator may have stored it
    assert classify_commit(ClientError("REBALANCE_IN_PROGRESS"), "librdkafka") == "fail"
    assert classify_commit(ClientError("_TIMED_OUT"), "librdkafka") == "info"
    assert classify_commit(ClientError("CommitFailedException"), "java") == "fail"
    assert classify_commit(ClientError("TimeoutException"), "java") == "info"


def test_a_client_error_is_described_by_its_own_name():
    assert (
        describe(ClientError("_MSG_TIMED_OUT", "Local: Message timed out"))
        == "_MSG_TIMED_OUT: Local: Message timed out"
    )
    assert describe(ClientError("TimeoutException")) == "TimeoutException"


@pytest.mark.parametrize("module", [librdkafka, java])
def test_safety_settings_are_explicit_even_where_they_are_the_client_default(module):
    unsafe = WorkloadOptions(acks="1", enable_idempotence=False, retries=0, delivery_timeout_ms=7000)
    config = module.producer_config(unsafe)
    assert config["acks"] == "1" and config["enable.idempotence"] is False and config["retries"] == 0
    assert config["delivery.timeout.ms"] == 7000 and config["max.in.flight.requests.per.connection"] == 5
    assert "retries" not in module.producer_config(WorkloadOptions())  # unlimited within the timeout
    consumer = module.consumer_config(WorkloadOptions(), "read_uncommitted")
    assert consumer["isolation.level"] == "read_uncommitted"  # librdkafka's default is read_committed
    assert consumer["enable.auto.commit"] is False


def test_a_missing_offset_is_an_error_in_each_clients_words():
    assert librdkafka.consumer_config(WorkloadOptions(), "read_committed")["auto.offset.reset"] == "error"
    assert java.consumer_config(WorkloadOptions(), "read_committed")["auto.offset.reset"] == "none"
    earliest = WorkloadOptions(auto_offset_reset="earliest")
    assert librdkafka.consumer_config(earliest, "read_committed")["auto.offset.reset"] == "earliest"


def test_the_java_driver_gets_its_settings_as_java_strings():
    assert java._strings({"enable.idempotence": True, "retries": 0, "acks": "all"}) == {
        "enable.idempotence": "true",
        "retries": "0",
        "acks": "all",
    }


def test_a_driver_completion_becomes_a_result_or_the_clients_error():
    ok = java._Pending("send")
    ok.complete({"id": 3, "ok": {"offset": 41}})
    assert java._Delivery(ok).result(0) == 41 and ok.done()
    refused = java._Pending("send")
    refused.complete({"id": 4, "error": {"name": "TimeoutException", "message": "m", "thrown_by_send": True}})
    with pytest.raises(ClientError) as caught:
        refused.result(0)
    assert caught.value.name == "TimeoutException" and caught.value.refused
    dead = java._Pending("poll")
    dead.die("the java client (kafka-clients 3.9.1) driver exited with code -9")
    with pytest.raises(ClientDied, match="kafka-clients 3.9.1"):
        dead.result(0)
    with pytest.raises(TimeoutError):
        java._Pending("poll").result(0.01)


def test_the_java_client_version_is_the_clusters_unless_given():
    assert WorkloadOptions(client="java").java_version(KafkaVersion(3, 9, 1)) == KafkaVersion(3, 9, 1)
    given = WorkloadOptions(client="java", client_version="4.0.0")
    assert given.java_version(KafkaVersion(3, 9, 1)) == KafkaVersion(4, 0, 0)


def test_the_driver_cache_changes_with_the_driver_source(tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKA_CHAOS_CACHE", str(tmp_path))
    before = java.driver_dir(KafkaVersion(3, 9, 1))
    source = tmp_path / "java"
    source.mkdir()
    (source / "Driver.java").write_text("class Driver {}")
    monkeypatch.setattr(java, "SOURCE", source)
    assert java.driver_dir(KafkaVersion(3, 9, 1)) != before
    assert java.driver_dir(KafkaVersion(3, 9, 1)).parent == tmp_path / "clients"


def test_the_settings_table_in_the_docs_is_the_codes():
    from pathlib import Path

    from kafka_chaos.workloads.clients import settings_table

    docs = Path(__file__).parents[2] / "docs" / "clients.md"
    assert settings_table() in docs.read_text()


def test_every_client_has_one_record_found_by_its_name():
    from kafka_chaos.workloads.clients import RECORDS, get

    assert tuple(RECORDS) == CLIENTS  # the flag's values, in order: the first is the default
    assert all(get(name).name == name for name in CLIENTS)
    assert {name: get(name).definite for name in CLIENTS} == DEFINITE
