"""kafka-python behind the client interface (workloads/clients/api.py): KafkaProducer and an
assigned KafkaConsumer, the settings each is given, its error tables, and its record (`CLIENT`).

kafka-python's own failure modes (a producer that wedges after an expired batch, a close that
raises) are handled in workloads/producers.py; its transactional calls can block without limit,
so the txn workload runs them under a watchdog (workloads/txn.py).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import kafka
from kafka import ConsumerRebalanceListener, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaConfigurationError
from kafka.structs import OffsetAndMetadata

from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.workloads.clients.api import ClientConfigError, Group, split_key
from kafka_chaos.workloads.clients.record import ClientRecord
from kafka_chaos.workloads.clients.settings import blocking_ms, consumer_timeout_ms
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.producers import close_producer, wedged
from kafka_chaos.workloads.values import encode

#: The producer settings config.json records, as kafka-python names them.
REPORTED = (
    "acks",
    "enable_idempotence",
    "retries",
    "delivery_timeout_ms",
    "request_timeout_ms",
    "max_in_flight_requests_per_connection",
    "linger_ms",
    "transactional_id",
)
REPORTED_CONSUMER = (
    "isolation_level",
    "auto_offset_reset",
    "enable_auto_commit",
    "request_timeout_ms",
    "max_poll_records",
    "group_id",
    "session_timeout_ms",
    "heartbeat_interval_ms",
    "max_poll_interval_ms",
    "auto_commit_interval_ms",
)


def producer_config(opts: WorkloadOptions) -> dict[str, Any]:
    """kafka-python producer settings, every safety-relevant one explicit (idempotence too:
    kafka-python silently turns it off on conflicting settings)."""
    config: dict[str, Any] = {
        "acks": "all" if opts.acks == "all" else int(opts.acks),
        "enable_idempotence": opts.enable_idempotence,
        "delivery_timeout_ms": opts.delivery_timeout_ms,
        "request_timeout_ms": opts.request_timeout_ms,
        "max_in_flight_requests_per_connection": opts.max_in_flight_requests_per_connection,
        "linger_ms": 0,
        "max_block_ms": blocking_ms(opts),
        # Clients are rebuilt during faults: a bootstrap that met a paused broker tries
        # another within this, instead of kafka-python's 30 s.
        "bootstrap_timeout_ms": 2 * opts.request_timeout_ms,
    }
    if opts.retries is not None:
        config["retries"] = opts.retries
    return config


def consumer_config(opts: WorkloadOptions, isolation_level: str = "read_uncommitted") -> dict[str, Any]:
    """kafka-python consumer settings; the isolation level is the workload's (workloads/registry.py)."""
    timeout = consumer_timeout_ms(opts)
    return {
        "enable_auto_commit": False,
        "group_id": None,
        "auto_offset_reset": opts.auto_offset_reset,
        "isolation_level": isolation_level,
        "request_timeout_ms": timeout,
        "bootstrap_timeout_ms": 2 * timeout,
        "max_poll_records": opts.max_poll_records,
    }


def group_config(opts: WorkloadOptions, group: Group) -> dict[str, Any]:
    """What a group member adds to consumer_config's (workloads/group.py); the group protocol and
    assignors stay the client's own, as applications run them."""
    return {
        "group_id": group.group_id,
        "enable_auto_commit": group.auto_commit,
        "session_timeout_ms": opts.session_timeout_ms,
        "heartbeat_interval_ms": opts.heartbeat_interval_ms,
        "max_poll_interval_ms": opts.max_poll_interval_ms,
    }


def _tp(key: str) -> TopicPartition:
    return TopicPartition(*split_key(key))


def _offsets(offsets: dict[str, int]) -> dict[TopicPartition, OffsetAndMetadata]:
    """{key: next offset} as kafka-python commits it (a consumer's commit, a transaction's)."""
    return {_tp(k): OffsetAndMetadata(o, "", -1) for k, o in offsets.items()}


def _json_safe(value: Any) -> Any:
    """kafka-python's unlimited retries is float('inf'), which JSON cannot hold."""
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "unlimited"
    return value


class _Delivery:
    def __init__(self, future: Any) -> None:
        self.future = future

    def result(self, timeout_s: float) -> int | None:
        offset = self.future.get(timeout=timeout_s).offset
        return offset if offset is not None and offset >= 0 else None  # acks=0 reports -1

    def done(self) -> bool:
        return bool(self.future.is_done)


class PythonProducer:
    def __init__(self, bootstrap: str, opts: WorkloadOptions, client_id: str, transactional_id: str | None) -> None:
        extra = {"transactional_id": transactional_id} if transactional_id else {}
        if transactional_id and opts.transaction_timeout_ms is not None:
            extra["transaction_timeout_ms"] = opts.transaction_timeout_ms
        try:
            self.producer = KafkaProducer(
                bootstrap_servers=bootstrap, client_id=client_id, **extra, **producer_config(opts)
            )
        except KafkaConfigurationError as exc:
            raise ClientConfigError(f"kafka-python refused its producer settings: {exc}") from exc
        self.config = {k: _json_safe(self.producer.config.get(k)) for k in REPORTED}

    def send(self, key: str, value: int) -> _Delivery:
        topic, partition = split_key(key)
        return _Delivery(self.producer.send(topic, value=encode(value), partition=partition))

    def broken(self) -> str | None:
        return wedged(self.producer)

    def init_transactions(self, timeout_s: float) -> None:
        self.producer.init_transactions()

    def begin_transaction(self) -> None:
        self.producer.begin_transaction()

    def commit_transaction(self, timeout_s: float) -> None:
        self.producer.commit_transaction()

    def abort_transaction(self, timeout_s: float) -> None:
        self.producer.abort_transaction()

    def send_offsets(self, offsets: dict[str, int], consumer: PythonConsumer, timeout_s: float) -> None:
        self.producer.send_offsets_to_transaction(_offsets(offsets), consumer.consumer.group_metadata())

    def close(self, timeout_s: float = 5.0) -> None:
        close_producer(self.producer, timeout_s)


def _key(tp: TopicPartition) -> str:
    return f"{tp.topic}/{tp.partition}"


class _Rebalances(ConsumerRebalanceListener):
    """Notes what the member holds after each revocation and each assignment (the eager
    protocol revokes everything, and the assignment may complete in a later poll), and whether
    a rebalance is under way (revoked, not yet assigned); kafka-python calls it from its IO
    thread while poll() waits."""

    def __init__(self) -> None:
        self.current: set[str] = set()
        self.held: list[str] | None = None
        self.rebalancing = False
        self._lock = threading.Lock()

    def on_partitions_revoked(self, revoked: Any) -> None:
        with self._lock:
            self.current -= {_key(tp) for tp in revoked}
            self.held = sorted(self.current)
            self.rebalancing = True

    def on_partitions_assigned(self, assigned: Any) -> None:
        with self._lock:
            self.current = {_key(tp) for tp in assigned}
            self.held = sorted(self.current)
            self.rebalancing = False

    def take(self) -> list[str] | None:
        """What the member holds since the last call, if a rebalance changed it (else None)."""
        with self._lock:
            held, self.held = self.held, None
            return held


class PythonConsumer:
    def __init__(
        self, bootstrap: str, opts: WorkloadOptions, client_id: str, isolation_level: str, group: Group | None = None
    ) -> None:
        self.opts = opts
        config = consumer_config(opts, isolation_level)
        if group is not None:
            config.update(group_config(opts, group))
        self.consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id=client_id, **config)
        self.config = {k: self.consumer.config.get(k) for k in REPORTED_CONSUMER}
        self._rebalances = _Rebalances()

    def assign(self, keys: list[str]) -> None:
        parts = [_tp(k) for k in keys]
        self.consumer.assign(parts)
        self.consumer.seek_to_beginning(*parts)

    def poll(self, timeout_ms: int) -> dict[str, list[tuple[int, bytes | None]]]:
        """A member in a rebalance waits `rebalance_poll_timeout_ms` at least (WorkloadOptions:
        kafka-python completes a join only inside a poll that is waiting for it)."""
        if self._rebalances.rebalancing:
            timeout_ms = max(timeout_ms, self.opts.rebalance_poll_timeout_ms)
        batches = self.consumer.poll(timeout_ms=timeout_ms, max_records=self.opts.max_poll_records)
        return {_key(tp): [(r.offset, r.value) for r in records] for tp, records in batches.items()}

    def position(self, key: str) -> int:
        return self.consumer.position(_tp(key))

    def seek(self, key: str, offset: int) -> None:
        self.consumer.seek(_tp(key), offset)

    def subscribe(self, topics: list[str]) -> None:
        self.consumer.subscribe(topics, listener=self._rebalances)

    def rebalanced(self) -> list[str] | None:
        return self._rebalances.take()

    def commit(self, offsets: dict[str, int]) -> None:
        self.consumer.commit(_offsets(offsets), timeout_ms=self.opts.request_timeout_ms)

    def close(self) -> None:
        """Close, leaving the group; with auto-commit on, kafka-python commits what poll returned first."""
        try:
            self.consumer.close(autocommit=bool(self.consumer.config.get("enable_auto_commit")))
        except Exception:
            pass


class KafkaPythonClient:
    name = "kafka-python"
    version = kafka.__version__

    def __init__(self, bootstrap: str, opts: WorkloadOptions) -> None:
        self.bootstrap, self.opts = bootstrap, opts

    def producer(self, client_id: str, transactional_id: str | None = None) -> PythonProducer:
        return PythonProducer(self.bootstrap, self.opts, client_id, transactional_id)

    def consumer(self, client_id: str, isolation_level: str, group: Group | None = None) -> PythonConsumer:
        return PythonConsumer(self.bootstrap, self.opts, client_id, isolation_level, group)

    def died(self) -> str | None:
        return None

    def close(self) -> None:
        pass


def _open(
    bootstrap: str, opts: WorkloadOptions, cluster_version: KafkaVersion, log_dir: Path | None
) -> KafkaPythonClient:
    return KafkaPythonClient(bootstrap, opts)


CLIENT = ClientRecord(
    name=KafkaPythonClient.name,
    open=_open,
    producer_settings=producer_config,
    consumer_settings=consumer_config,
    group_settings=group_config,
    definite={
        "MessageSizeTooLargeError": "the record is over the size limit; every attempt is rejected",
        "RecordListTooLargeError": "the batch is over the size limit; every attempt is rejected",
        "InvalidRecordError": "the broker rejects the record itself; every attempt is rejected",
        "InvalidTopicError": "the topic name is invalid; nothing is appended",
        "InvalidRequiredAcksError": "the acks setting is refused before any append",
        "TopicAuthorizationFailedError": "not authorized to write; nothing is appended",
        "ClusterAuthorizationFailedError": "not authorized; nothing is appended",
        "TransactionalIdAuthorizationFailedError": "not authorized to use the transactional id",
        "UnsupportedVersionError": "the broker cannot take the request at all",
    },
    not_definite={
        "KafkaTimeoutError": "an attempt may have been appended before the timeout",
        "NotEnoughReplicasAfterAppendError": "the leader appended the record before it found too few replicas",
        "NotLeaderForPartitionError": "an earlier attempt may have been appended by the old leader",
    },
    commit_definite={
        "CommitFailedError": "the group rebalanced and gave the member's keys away; nothing was stored",
        "RebalanceInProgressError": "the group is rebalancing; the coordinator stored nothing",
        "IllegalGenerationError": "the member's generation is over; the coordinator stored nothing",
        "UnknownMemberIdError": "the member was removed from the group; the coordinator stored nothing",
    },
)
