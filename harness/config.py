"""Cluster shapes and the server.properties of each node.

Pure functions of the cluster's description, so they are unit-tested without Docker. One
rendering serves every version from 3.4 to 4.x: a static `controller.quorum.voters` (the
official image keeps it too "for broader compatibility") and no CONTROLLER listener in
`advertised.listeners` (3.x rejects it). A dynamic quorum (KIP-853, 3.9.0 on) names the
controllers in `controller.quorum.bootstrap.servers` instead; its voters are written into the
controllers' storage when they are formatted (harness/node.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.versions import KafkaVersion, metadata_version_key
from kafka_chaos.history.kraft import DYNAMIC, QUORUMS, STATIC

INTERNAL_PORT = 9092  # broker-to-broker and container-to-container clients
CONTROLLER_PORT = 9093  # KRaft quorum
EXTERNAL_PORT = 9094  # published on 127.0.0.1 for host clients
#: A dynamic quorum (KIP-853) needs this release and this metadata version at least.
DYNAMIC_QUORUM_SINCE = "3.9.0"
DYNAMIC_QUORUM_MV = "3.9-IV0"  # kraft.version 1
DATA_DIR = "/var/lib/kafka/data"
LOG_DIR = "/var/log/kafka"
CONFIG_DIR = "/etc/kafka"

#: Settings under which a fault takes effect within its hold: a silent follower leaves the ISR
#: after 3 s, the controller fences a silent broker after 4 s, and the KRaft voters elect a new
#: active controller about 1 to 1.5 s after the old one falls silent. With Kafka's own defaults
#: (30 s, 9 s, and a 2 s fetch timeout plus a 1 to 2 s election) a paused, killed or cut-off
#: broker held for under 9 s is never fenced nor dropped from the ISR: every acks=all write of
#: every partition waits out the fault, so the run measures a stall, not a failover; and a fault
#: on the active controller spent about 3 s on the election before the new controller's session
#: timeout even began (docs/measurements.md, 2026-11-24). `run` applies these under a random or scripted nemesis
#: unless the user sets them (--config); config.json records what ran.
FAULT_DETECTION = {
    "replica.lag.time.max.ms": "3000",
    "broker.session.timeout.ms": "4000",
    "broker.heartbeat.interval.ms": "500",
    "controller.quorum.fetch.timeout.ms": "1000",
    "controller.quorum.election.timeout.ms": "500",
    "controller.quorum.election.backoff.max.ms": "500",
}


@dataclass(frozen=True)
class NodeSpec:
    """One node of the cluster: its id, roles and the name other nodes reach it by."""

    node_id: int
    roles: tuple[str, ...]  # ("broker", "controller"), ("broker",) or ("controller",)

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles

    @property
    def alias(self) -> str:
        """Stable network alias: kafka-N (combined), broker-N or controller-N (dedicated)."""
        if self.is_broker and self.is_controller:
            return f"kafka-{self.node_id}"
        return f"{'broker' if self.is_broker else 'controller'}-{self.node_id}"


@dataclass(frozen=True)
class ClusterShape:
    """Combined nodes (controllers == 0) or dedicated controllers plus brokers."""

    brokers: int = 3
    controllers: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.brokers, int) or self.brokers < 1:
            raise UsageError(f"a cluster needs at least 1 node, got {self.brokers!r}")
        if not isinstance(self.controllers, int) or self.controllers < 0:
            raise UsageError(f"the controller count must be 0 (combined nodes) or more, got {self.controllers!r}")

    @property
    def combined(self) -> bool:
        return self.controllers == 0

    def nodes(self) -> list[NodeSpec]:
        """Controllers take ids 1..C and brokers C+1..C+B; combined nodes 1..B."""
        if self.combined:
            return [NodeSpec(i, ("broker", "controller")) for i in range(1, self.brokers + 1)]
        controllers = [NodeSpec(i, ("controller",)) for i in range(1, self.controllers + 1)]
        brokers = [NodeSpec(self.controllers + i, ("broker",)) for i in range(1, self.brokers + 1)]
        return controllers + brokers

    def describe(self) -> str:
        if self.combined:
            return f"{self.brokers} combined node{'s' if self.brokers != 1 else ''}"
        return f"{self.controllers} controllers + {self.brokers} brokers"


def default_broker_config(broker_count: int) -> dict[str, str]:
    """Kafka's defaults, except what a chaos cluster needs to be meaningful and quick.

    Internal topics are replicated as widely as the cluster allows (up to 3), topics are never
    created by accident with a default replication factor, and group joins do not wait 3 s.
    Everything here can be overridden.
    """
    rf = str(min(3, broker_count))
    return {
        "offsets.topic.replication.factor": rf,
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": str(min(2, broker_count)),
        "default.replication.factor": rf,
        "auto.create.topics.enable": "false",
        "group.initial.rebalance.delay.ms": "0",
        "unclean.leader.election.enable": "false",
    }


def render_server_properties(
    node: NodeSpec,
    all_nodes: list[NodeSpec],
    external_port: int | None,
    overrides: Mapping[str, str] | None = None,
    quorum: str = STATIC,
) -> str:
    """The server.properties text of one node.

    external_port is the host port published for this node's EXTERNAL listener (brokers only);
    host clients are told to reach it at 127.0.0.1:external_port.
    """
    controllers = [n for n in all_nodes if n.is_controller]
    if not controllers:
        raise UsageError("a cluster needs at least one controller")
    if quorum == DYNAMIC:
        quorum_key, quorum_value = (
            "controller.quorum.bootstrap.servers",
            ",".join(f"{n.alias}:{CONTROLLER_PORT}" for n in controllers),
        )
    else:
        quorum_key = "controller.quorum.voters"
        quorum_value = ",".join(f"{n.node_id}@{n.alias}:{CONTROLLER_PORT}" for n in controllers)
    props: dict[str, str] = {
        "process.roles": ",".join(node.roles),
        "node.id": str(node.node_id),
        quorum_key: quorum_value,
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT",
        "log.dirs": DATA_DIR,
    }
    listeners = []
    if node.is_broker:
        if external_port is None:
            raise ValueError(f"broker {node.alias} needs an external port")
        listeners += [f"PLAINTEXT://:{INTERNAL_PORT}", f"EXTERNAL://:{EXTERNAL_PORT}"]
        props["advertised.listeners"] = f"PLAINTEXT://{node.alias}:{INTERNAL_PORT},EXTERNAL://127.0.0.1:{external_port}"
        props["inter.broker.listener.name"] = "PLAINTEXT"
        props.update(default_broker_config(sum(1 for n in all_nodes if n.is_broker)))
    if node.is_controller:
        listeners.append(f"CONTROLLER://:{CONTROLLER_PORT}")
    props["listeners"] = ",".join(listeners)
    for key, value in (overrides or {}).items():
        props[str(key)] = str(value)
    lines = [f"# {node.alias}: written by kafka-chaos (harness/config.py)"]
    lines += [f"{key}={value}" for key, value in props.items()]
    return "\n".join(lines) + "\n"


def initial_controllers(all_nodes: list[NodeSpec], directory_ids: Mapping[int, str]) -> str:
    """The format tool's `--initial-controllers` of a dynamic quorum: id@host:port:directory-id of
    each controller, the directory id its metadata log directory is formatted with."""
    return ",".join(
        f"{n.node_id}@{n.alias}:{CONTROLLER_PORT}:{directory_ids[n.node_id]}" for n in all_nodes if n.is_controller
    )


def check_quorum(quorum: str, version: str, metadata_version: str | None = None) -> None:
    """UsageError for a quorum mode the version (or pinned metadata version) cannot run, before
    any container starts: a dynamic quorum needs kraft.version 1, which needs 3.9-IV0."""
    if quorum not in QUORUMS:
        raise UsageError(f"unknown quorum {quorum!r}: expected one of {', '.join(QUORUMS)}")
    if quorum != DYNAMIC:
        return
    if KafkaVersion.parse(version) < KafkaVersion.parse(DYNAMIC_QUORUM_SINCE):
        raise UsageError(f"a dynamic quorum (KIP-853) needs Kafka {DYNAMIC_QUORUM_SINCE} or later, not {version}")
    if metadata_version and metadata_version_key(metadata_version) < metadata_version_key(DYNAMIC_QUORUM_MV):
        raise UsageError(
            f"a dynamic quorum (KIP-853) needs metadata version {DYNAMIC_QUORUM_MV} or later, not {metadata_version}"
        )


def parse_overrides(items: list[str]) -> dict[str, str]:
    """`key=value` strings from the command line, as a dict; UsageError on a malformed one."""
    overrides: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"malformed config override {item!r}: expected key=value")
        overrides[key.strip()] = value.strip()
    return overrides
