"""Bad input: one line on stderr, exit code 2, before anything is started."""

import socket

import pytest

from kafka_chaos.frontends.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["up", "--kafka", "banana"], "malformed Kafka version 'banana'"),
        (["up", "--kafka", "3.3.2"], "Kafka 3.3.2 is not supported"),
        (["up", "--nodes", "0"], "at least 1 node"),
        (["demo", "--nodes", "-2"], "at least 1 node"),
        (["up", "--nodes", "three"], "expected a whole number"),
        (["up", "--controllers", "3"], "--controllers needs --brokers"),
        (["up", "--config", "novalue"], "malformed config override"),
        (["up", "--disk", "tmpfs"], "disk 'tmpfs': expected one of page-cache, fsync-tracked"),
        (["run", "--disk", "lazy"], "disk 'lazy': expected one of page-cache, fsync-tracked"),
        (["run", "--kafka", "3.5.2", "--tiered"], "--tiered needs Kafka 3.6.0 or later (tiered storage, KIP-405)"),
        (["up", "--kafka", "3.4.1", "--tiered"], "--tiered needs Kafka 3.6.0 or later"),
        (["images", "build", "--kafka", "4"], "malformed Kafka version"),
        (["explode"], "invalid choice"),
        (["demo", "--records", "0"], "--records must be at least 1"),
        (["run", "--rate", "0"], "--rate must be greater than 0"),
        (["run", "--rate", "-1"], "--rate must be greater than 0"),
        (["run", "--workload", "bank"], "unknown workload 'bank'"),
        (["run", "--acks", "2"], "--acks must be one of 0, 1, all"),
        (["run", "--keys", "0"], "--keys must be at least 1"),
        (["run", "--client", "confluent"], "--client must be one of kafka-python, librdkafka, java; got 'confluent'"),
        (["run", "--client-version", "3.9.1"], "--client-version applies to --client java only"),
        (["run", "--client", "java", "--client-version", "3.3.0"], "--client-version 3.3.0 is too old"),
        (["run", "--client", "java", "--kafka", "4.3.1", "--client-version", "4.x"], "--client-version must be"),
        (["run", "--group-protocol", "kip848"], "--group-protocol must be one of classic, consumer; got 'kip848'"),
        (
            ["run", "--consumer", "subscribe", "--group-protocol", "consumer"],
            "--group-protocol consumer needs --client java or librdkafka: kafka-python speaks only the classic",
        ),
        (
            ["run", "--client", "java", "--group-protocol", "consumer"],
            "--group-protocol consumer applies to group members: add --consumer subscribe or mixed",
        ),
        (
            ["run", "--client", "java", "--consumer", "subscribe", "--group-protocol", "consumer", "--kafka", "3.9.1"],
            "--group-protocol consumer needs Kafka 4.0.0 or later (KIP-848), the cluster is 3.9.1",
        ),
        (
            ["run", "--client", "java", "--client-version", "3.9.1", "--consumer", "subscribe"]
            + ["--group-protocol", "consumer"],
            "--group-protocol consumer needs kafka-clients 4.0.0 or later (KIP-848), --client-version is 3.9.1",
        ),
        (["run", "--nemesis", "kill", "--nemesis-targets", "all"], "unknown nemesis target pool 'all'"),
        # A target that names nothing would fail at every fault, and the run pass without faults.
        (["run", "--nemesis", "kill@kafka-4"], "unknown target 'kafka-4': expected a node (kafka-1, kafka-2, kafka-3"),
        (["run", "--controllers", "3", "--brokers", "3", "--nemesis", "pause@kafka-1"], "unknown target 'kafka-1'"),
        (["run", "--nemesis", "kill@leader:chaos"], "target 'leader:chaos': expected a key, topic/partition"),
        (["run", "--nemesis-targets", "controllers"], "--nemesis-targets picks the targets of a random fault list"),
        (["run", "--nemesis", "remote-unavailable,kill"], "fault remote-unavailable needs a tiered cluster (--tiered)"),
        (["run", "--replication-factor", "5"], "replication factor 5 needs at least as many brokers (3)"),
        (
            ["run", "--consumer", "share"],
            "--consumer share needs --client java or librdkafka: kafka-python has no share consumer",
        ),
        (["run", "--consumer", "share", "--client", "java", "--kafka", "4.0.2"], "needs Kafka 4.1.0 or later"),
        (["run", "--consumer", "share", "--client", "java", "--group-protocol", "consumer"], "for consumer groups"),
        # run keeps its cluster's files in the run directory: a --workdir it ignored was a silent lie
        (["run", "--workdir", "/tmp/elsewhere"], "unrecognized arguments: --workdir"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1, err


def test_port_in_use_is_refused():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        from kafka_chaos.harness.errors import UsageError
        from kafka_chaos.harness.ports import allocate

        with pytest.raises(UsageError, match=f"port 127.0.0.1:{port} is in use"):
            allocate(3, base=port)


def test_no_reachable_engine_is_bad_input(monkeypatch, capsys):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    assert main(["images", "build", "--kafka", "3.9.1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kafka-chaos: error: no Docker engine reachable at unix:///nonexistent/docker.sock")
    assert len(err.splitlines()) == 1
