import pytest

from kafka_chaos.harness.config import (
    ClusterShape,
    check_quorum,
    initial_controllers,
    parse_overrides,
    render_server_properties,
)
from kafka_chaos.harness.errors import UsageError


def props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def render(shape: ClusterShape, node_id: int, overrides=None, quorum="static") -> dict[str, str]:
    nodes = shape.nodes()
    node = next(n for n in nodes if n.node_id == node_id)
    port = 40000 + node_id if node.is_broker else None
    return props(render_server_properties(node, nodes, port, overrides, quorum=quorum))


def test_combined_node_has_static_voters_and_loopback_external_listener():
    p = render(ClusterShape(brokers=3), 2)
    assert p["process.roles"] == "broker,controller"
    assert p["node.id"] == "2"
    assert p["controller.quorum.voters"] == "1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093"
    assert p["listeners"] == "PLAINTEXT://:9092,EXTERNAL://:9094,CONTROLLER://:9093"
    assert p["advertised.listeners"] == "PLAINTEXT://kafka-2:9092,EXTERNAL://127.0.0.1:40002"
    assert "CONTROLLER" not in p["advertised.listeners"]  # 3.x rejects it
    assert p["inter.broker.listener.name"] == "PLAINTEXT"
    assert p["controller.listener.names"] == "CONTROLLER"
    assert p["log.dirs"] == "/var/lib/kafka/data"


def test_dedicated_shape_numbers_controllers_first():
    nodes = ClusterShape(brokers=3, controllers=3).nodes()
    assert [n.alias for n in nodes] == [
        "controller-1",
        "controller-2",
        "controller-3",
        "broker-4",
        "broker-5",
        "broker-6",
    ]


def test_dedicated_controller_has_no_broker_listeners():
    p = render(ClusterShape(brokers=3, controllers=3), 1)
    assert p["process.roles"] == "controller"
    assert p["listeners"] == "CONTROLLER://:9093"
    assert "advertised.listeners" not in p
    assert "inter.broker.listener.name" not in p
    assert p["controller.quorum.voters"] == "1@controller-1:9093,2@controller-2:9093,3@controller-3:9093"


def test_dedicated_broker_has_no_controller_listener():
    p = render(ClusterShape(brokers=3, controllers=3), 5)
    assert p["process.roles"] == "broker"
    assert p["listeners"] == "PLAINTEXT://:9092,EXTERNAL://:9094"
    assert p["advertised.listeners"] == "PLAINTEXT://broker-5:9092,EXTERNAL://127.0.0.1:40005"


@pytest.mark.parametrize("node_id", [1, 4])
def test_a_dynamic_quorum_names_the_controllers_as_bootstrap_servers_not_voters(node_id):
    p = render(ClusterShape(brokers=1, controllers=3), node_id, quorum="dynamic")
    assert "controller.quorum.voters" not in p
    assert p["controller.quorum.bootstrap.servers"] == "controller-1:9093,controller-2:9093,controller-3:9093"


def test_the_initial_controllers_give_each_voter_its_directory_id():
    nodes = ClusterShape(brokers=1, controllers=2).nodes()
    assert initial_controllers(nodes, {1: "AAAA", 2: "BBBB"}) == "1@controller-1:9093:AAAA,2@controller-2:9093:BBBB"


@pytest.mark.parametrize(
    ("quorum", "version", "mv", "message"),
    [
        ("dynamic", "3.8.1", None, "needs Kafka 3.9.0 or later"),
        ("raft", "4.3.1", None, "unknown quorum 'raft'"),
        ("dynamic", "4.3.1", "3.8-IV0", "needs metadata version 3.9-IV0 or later, not 3.8-IV0"),
        ("dynamic", "4.3.1", "4.x", "malformed metadata version '4.x'"),
    ],
)
def test_a_quorum_the_version_cannot_run_is_a_usage_error(quorum, version, mv, message):
    with pytest.raises(UsageError, match=message):
        check_quorum(quorum, version, mv)
    check_quorum("static", "3.4.1", "3.4-IV0")
    check_quorum("dynamic", "3.9.0")
    check_quorum("dynamic", "4.3.1", "3.9-IV0")


@pytest.mark.parametrize(("brokers", "rf", "min_isr"), [(1, "1", "1"), (2, "2", "2"), (3, "3", "2"), (5, "3", "2")])
def test_internal_topics_replicated_as_widely_as_the_cluster_allows(brokers, rf, min_isr):
    p = render(ClusterShape(brokers=brokers), 1)
    assert p["offsets.topic.replication.factor"] == rf
    assert p["transaction.state.log.replication.factor"] == rf
    assert p["transaction.state.log.min.isr"] == min_isr
    assert p["auto.create.topics.enable"] == "false"


def test_overrides_win_over_defaults():
    p = render(
        ClusterShape(brokers=3),
        1,
        {"min.insync.replicas": 2, "unclean.leader.election.enable": "true", "log.flush.interval.messages": "1"},
    )
    assert p["min.insync.replicas"] == "2"
    assert p["unclean.leader.election.enable"] == "true"
    assert p["log.flush.interval.messages"] == "1"


@pytest.mark.parametrize(("brokers", "controllers"), [(0, 0), (-1, 0), (3, -1)])
def test_bad_shapes_are_usage_errors(brokers, controllers):
    with pytest.raises(UsageError):
        ClusterShape(brokers=brokers, controllers=controllers)


def test_parse_overrides():
    assert parse_overrides(["a.b=1", " c = x=y "]) == {"a.b": "1", "c": "x=y"}
    with pytest.raises(UsageError, match="malformed config override 'novalue'"):
        parse_overrides(["novalue"])
    with pytest.raises(UsageError):
        parse_overrides(["=1"])
