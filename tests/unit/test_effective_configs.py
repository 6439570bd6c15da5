"""The settings each client records in config.json (`effective_producer_config`,
`effective_consumer_config`, `effective_member_config`), pinned for every client under the default
options and a few others: a change to how a client is given its settings must leave them equal.

Each client is built as a run builds it (`open_client`), with no broker behind it: kafka-python's
bootstrap is stood in for (its constructors wait for a broker), the Java driver is a stand-in
that answers with the settings it was sent (the real driver answers with the client's own view
of them), and librdkafka runs as it is (it connects in the background). The Java client's
commands are pinned too: what the driver is sent is all of the Java settings that is ours.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from kafka.net.manager import KafkaConnectionManager
from kafka.protocol.broker_version_data import BrokerVersionData

from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.workloads.clients import java, open_client
from kafka_chaos.workloads.clients.api import CLIENTS, Group
from kafka_chaos.workloads.options import WorkloadOptions

PINNED = Path(__file__).with_name("effective_configs.json")
#: Options the pins are taken under: the defaults, and others that move every derived setting
#: (a request timeout under and over the consumers' floor, max.block.ms of its own).
OPTIONS: dict[str, dict[str, Any]] = {
    "default": {},
    "unsafe-short-timeouts": {
        "acks": "1",
        "enable_idempotence": False,
        "retries": 3,
        "delivery_timeout_ms": 7000,
        "request_timeout_ms": 2000,
        "max_in_flight_requests_per_connection": 1,
        "auto_offset_reset": "earliest",
        "max_poll_records": 100,
        "session_timeout_ms": 6000,
        "max_poll_interval_ms": 20000,
    },
    "long-timeouts": {"request_timeout_ms": 8000, "max_block_ms": 30000, "auto_offset_reset": "latest"},
}


class FakeDriver:
    """The Java driver's stand-in: each handle's settings come back as sent."""

    def __init__(self, home: Any, version: KafkaVersion, log_dir: Any) -> None:
        self.version, self.died, self.commands = version, None, []

    def call(self, op: str, name: str, **fields: Any) -> java._Pending:
        self.commands.append({"op": op, "name": name, **fields})
        pending = java._Pending(op)
        pending.complete({"ok": {"config": fields.get("config", {})}})
        return pending

    def close(self) -> None:
        pass


def _bootstrapped(manager: KafkaConnectionManager, timeout_ms: Any = None, refresh: bool = True) -> None:
    manager.broker_version_data = BrokerVersionData((4, 0))


def observed(client: str, options: dict[str, Any]) -> dict[str, Any]:
    """What `client` records under `options`: each kind of producer and consumer a run builds."""
    opts = WorkloadOptions(client=client, **options)
    opened = open_client(opts, "127.0.0.1:9", KafkaVersion(4, 3, 1))
    built: list[Any] = []
    try:
        producer = opened.producer("kafka-chaos-pin-p0")
        # A transactional producer needs idempotence (the txn workload's rule, workloads/registry.py).
        transactional = opts.enable_idempotence
        txn_producer = opened.producer("kafka-chaos-pin-p1", "kafka-chaos-pin-txn-1") if transactional else None
        consumer = opened.consumer("kafka-chaos-pin-c0", "read_uncommitted")
        txn_consumer = opened.consumer("kafka-chaos-pin-c1", "read_committed")
        member = opened.consumer("kafka-chaos-pin-c2", "read_uncommitted", Group("kafka-chaos-pin-group"))
        auto_member = opened.consumer("kafka-chaos-pin-c3", "read_committed", Group("kafka-chaos-pin-group", True))
        built = [h for h in (producer, txn_producer, consumer, txn_consumer, member, auto_member) if h is not None]
        seen: dict[str, Any] = {
            "producer": producer.config,
            "txn_producer": txn_producer and txn_producer.config,
            "consumer": consumer.config,
            "txn_consumer": txn_consumer.config,
            "member": member.config,
            "auto_member": auto_member.config,
        }
        if client == "java":
            seen["driver_commands"] = opened.driver.commands
        return json.loads(json.dumps(seen, sort_keys=True))  # as config.json writes them
    finally:
        for handle in built:
            handle.close(0) if hasattr(handle, "send") else handle.close()
        opened.close()


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setattr(KafkaConnectionManager, "bootstrap", _bootstrapped)
    monkeypatch.setattr(java, "build_driver", lambda version, log=None: Path("/nonexistent"))
    monkeypatch.setattr(java, "JavaDriver", FakeDriver)


@pytest.mark.parametrize("name", OPTIONS)
@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_records_the_settings_it_always_recorded(offline, client, name):
    pinned = json.loads(PINNED.read_text())
    assert observed(client, OPTIONS[name]) == pinned[client][name]


def pins() -> dict[str, Any]:
    """Every pin, as PINNED holds them (taken once, before a change that must keep them)."""
    return {client: {name: observed(client, options) for name, options in OPTIONS.items()} for client in CLIENTS}
