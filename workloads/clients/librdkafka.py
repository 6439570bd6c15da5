"""librdkafka (confluent-kafka) behind the client interface (workloads/clients/api.py).

Its defaults differ from the Java client's where safety is decided (idempotence is off, a
consumer reads committed records only), so every such setting is passed explicitly from
WorkloadOptions and config.json records the dictionary given (librdkafka has no call that
reports its effective configuration). Its record, `CLIENT`, ends the module.

librdkafka reports through callbacks served by `poll()`: each producer has one thread that
polls, so a delivery report arrives while the workload waits on it. Errors keep librdkafka's
own code names (`_MSG_TIMED_OUT`, `NOT_ENOUGH_REPLICAS`, ...), which workloads/outcomes.py
classifies. A consumer needs a group id even when assigned by hand: each gets its own, and
never commits. librdkafka's log goes to `client-librdkafka.log` in the run directory.

A consumer is handed absolute offsets only, never OFFSET_BEGINNING: a logical offset makes
librdkafka look it up in the partition's own fetch state machine, and when a seek lands while that
lookup is in flight, the stale answer re-arms the lookup, which later moves the consumer back to
the start of the log behind the application's back (docs/clients.md, "librdkafka: a seek during
an offset lookup rewinds the consumer").
"""

from __future__ import annotations

import itertools
import logging
import threading
from pathlib import Path
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.workloads.clients.api import ClientConfigError, ClientError, Group, split_key
from kafka_chaos.workloads.clients.librdkafka_base import close_within
from kafka_chaos.workloads.clients.librdkafka_base import error_of as _error
from kafka_chaos.workloads.clients.librdkafka_base import from_exception as _from_exception
from kafka_chaos.workloads.clients.librdkafka_share import JavaAdmin, RdShareConsumer
from kafka_chaos.workloads.clients.record import ClientRecord
from kafka_chaos.workloads.clients.settings import (
    RECONNECT_BACKOFF,
    consumer_timeout_ms,
    producer_properties,
    transactional_properties,
)
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.values import encode

_numbers = itertools.count()


def _offsets(offsets: dict[str, int]) -> list[TopicPartition]:
    """{key: next offset} as librdkafka commits it (a consumer's commit, a transaction's)."""
    return [TopicPartition(*split_key(k), o) for k, o in offsets.items()]


def producer_config(opts: WorkloadOptions) -> dict[str, Any]:
    """librdkafka producer settings: the options' under Kafka's names (settings.producer_properties)."""
    return producer_properties(opts)


def consumer_config(opts: WorkloadOptions, isolation_level: str) -> dict[str, Any]:
    """librdkafka consumer settings: no commits, the workload's isolation level, and an offset
    out of range surfacing as an error when the options say `none` (librdkafka calls it `error`)."""
    return {
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "error" if opts.auto_offset_reset == "none" else opts.auto_offset_reset,
        "isolation.level": isolation_level,
        "enable.partition.eof": False,
        "socket.timeout.ms": consumer_timeout_ms(opts),
        **RECONNECT_BACKOFF,
    }


class _Delivery:
    def __init__(self) -> None:
        self._event = threading.Event()
        self._offset: int | None = None
        self._error: ClientError | None = None

    def report(self, err: KafkaError | None, msg: Any) -> None:
        if err is not None:
            self._error = _error(err)
        else:
            offset = msg.offset()
            self._offset = offset if offset is not None and offset >= 0 else None  # acks=0: none
        self._event.set()

    def result(self, timeout_s: float) -> int | None:
        if not self._event.wait(timeout_s):
            raise TimeoutError(f"no delivery report within {timeout_s:g} s")
        if self._error is not None:
            raise self._error
        return self._offset

    def done(self) -> bool:
        return self._event.is_set()


class RdProducer:
    def __init__(
        self,
        bootstrap: str,
        opts: WorkloadOptions,
        client_id: str,
        transactional_id: str | None,
        logger: logging.Logger,
    ) -> None:
        self._fatal: str | None = None
        self.config = {
            "client.id": client_id,
            **producer_config(opts),
            **transactional_properties(opts, transactional_id),
        }
        try:
            self.producer = confluent_kafka.Producer(
                {"bootstrap.servers": bootstrap, **self.config, "error_cb": self._on_error, "logger": logger}
            )
        except KafkaException as exc:
            raise ClientConfigError(f"librdkafka refused its producer settings: {exc}") from exc
        self._closed = threading.Event()
        self._poller = threading.Thread(target=self._serve, name=f"rdkafka-{client_id}", daemon=True)
        self._poller.start()

    def _on_error(self, err: KafkaError) -> None:
        if err.fatal():
            self._fatal = f"fatal error: {err.name()}: {err.str()}"

    def _serve(self) -> None:
        while not self._closed.is_set():
            self.producer.poll(0.05)

    def send(self, key: str, value: int) -> _Delivery:
        topic, partition = split_key(key)
        delivery = _Delivery()
        try:
            self.producer.produce(topic, value=encode(value), partition=partition, on_delivery=delivery.report)
        except Exception as exc:  # produce() took nothing: the record never left
            raise _from_exception(exc, refused=True) from exc
        return delivery

    def broken(self) -> str | None:
        return self._fatal

    def _call(self, method: str, *args: Any) -> None:
        try:
            getattr(self.producer, method)(*args)
        except KafkaException as exc:
            raise _from_exception(exc) from exc

    def init_transactions(self, timeout_s: float) -> None:
        self._call("init_transactions", timeout_s)

    def begin_transaction(self) -> None:
        self._call("begin_transaction")

    def commit_transaction(self, timeout_s: float) -> None:
        self._call("commit_transaction", timeout_s)

    def abort_transaction(self, timeout_s: float) -> None:
        self._call("abort_transaction", timeout_s)

    def send_offsets(self, offsets: dict[str, int], consumer: RdConsumer, timeout_s: float) -> None:
        parts = _offsets(offsets)
        self._call("send_offsets_to_transaction", parts, consumer.consumer.consumer_group_metadata(), timeout_s)

    def close(self, timeout_s: float = 5.0) -> None:
        """Flush for up to `timeout_s`, then purge what is left: its deliveries report
        `_PURGE_QUEUE` / `_PURGE_INFLIGHT` (info), as kafka-python's forced close fails its futures."""
        try:
            if timeout_s > 0:
                self.producer.flush(timeout_s)
            self.producer.purge(in_queue=True, in_flight=True, blocking=False)
            self.producer.poll(0)
        except Exception:
            pass
        self._closed.set()


def group_config(opts: WorkloadOptions, group: Group) -> dict[str, Any]:
    """A group member's settings on top of consumer_config's: with auto-commit, librdkafka
    commits the offsets it stored for what consume() returned (enable.auto.offset.store). With
    KIP-848's protocol the coordinator sets the heartbeat and session (the brokers'
    group.consumer.* settings: WorkloadOptions.broker_defaults); the client takes neither."""
    config = {
        "group.id": group.group_id,
        "enable.auto.commit": group.auto_commit,
        "enable.auto.offset.store": group.auto_commit,
    }
    if opts.group_protocol == "consumer":
        config["group.protocol"] = "consumer"
    else:
        config |= {"session.timeout.ms": opts.session_timeout_ms, "heartbeat.interval.ms": opts.heartbeat_interval_ms}
    return config | {"max.poll.interval.ms": opts.max_poll_interval_ms}


class RdConsumer:
    def __init__(
        self,
        bootstrap: str,
        opts: WorkloadOptions,
        client_id: str,
        isolation_level: str,
        logger: logging.Logger,
        group: Group | None = None,
    ) -> None:
        self.opts = opts
        self.config = {"client.id": client_id, **consumer_config(opts, isolation_level)}
        if group is not None:
            self.config.update(group_config(opts, group))
        # A group id is required even when assigned by hand: then each consumer has its own,
        # which nothing joins or commits.
        own = {} if group is not None else {"group.id": f"{client_id}-{next(_numbers)}"}
        self.consumer = confluent_kafka.Consumer(
            {"bootstrap.servers": bootstrap, **own, **self.config, "logger": logger}
        )
        self._held: list[str] | None = None
        self._group = group is not None
        self.keys: list[str] = []
        #: Where each key was last put (assign, seek) or read to; librdkafka reports no position
        #: after an assign or a seek until it has returned a record of the key again.
        self._placed: dict[str, int] = {}
        self._moved: set[str] = set()
        #: Each assigned key's first offset (its log start when it was assigned): where "the start
        #: of the log" is, as an absolute offset (the module's docstring says why).
        self._start: dict[str, int] = {}

    def _assign(self, offsets: dict[str, int]) -> None:
        """Assign the keys at these absolute offsets."""
        self.consumer.assign([TopicPartition(*split_key(k), offset) for k, offset in offsets.items()])
        for key, offset in offsets.items():
            self._placed[key] = offset
            self._moved.add(key)

    def _starts(self, keys: list[str]) -> dict[str, int]:
        """Each key's log start offset, asked of its leader (a ListOffsets of its own, outside the
        partition's fetch state machine); raises KafkaException."""
        timeout_s = consumer_timeout_ms(self.opts) / 1000
        starts = {}
        for key in keys:
            low, _ = self.consumer.get_watermark_offsets(TopicPartition(*split_key(key)), timeout_s, cached=False)
            starts[key] = low
        return starts

    def _absolute(self, key: str, offset: int) -> int:
        """An offset to hand librdkafka: `offset`, or for a negative one (the start of the log) the
        key's start as found when it was assigned, else asked of its leader now."""
        if offset >= 0:
            return offset
        if key not in self._start:
            self._start.update(self._starts([key]))
        return self._start[key]

    def assign(self, keys: list[str]) -> None:
        try:
            starts = self._starts(keys)
            self._assign(starts)
        except KafkaException as exc:
            raise _from_exception(exc) from exc
        self._start.update(starts)
        self.keys = list(keys)

    def poll(self, timeout_ms: int) -> dict[str, list[tuple[int, bytes | None]]]:
        try:
            messages = self.consumer.consume(num_messages=self.opts.max_poll_records, timeout=timeout_ms / 1000)
        except KafkaException as exc:
            raise _from_exception(exc) from exc
        read: dict[str, list[tuple[int, bytes | None]]] = {}
        for msg in messages:
            if msg.error() is not None:
                raise _error(msg.error())
            key = f"{msg.topic()}/{msg.partition()}"
            read.setdefault(key, []).append((msg.offset(), msg.value()))
            self._placed[key] = msg.offset() + 1
            self._moved.discard(key)
        return read

    def position(self, key: str) -> int:
        """The next offset to read; -1 for the start of the log (a key no assign() or seek()
        placed). librdkafka's own position (past skipped control records too) once it has
        returned a record since the key was last placed; before that, where it was placed."""
        if key in self._moved:
            return self._placed.get(key, -1)
        try:
            (tp,) = self.consumer.position([TopicPartition(*split_key(key))])
        except KafkaException as exc:
            raise _from_exception(exc) from exc
        return tp.offset if tp.offset >= 0 else self._placed.get(key, -1)

    def seek(self, key: str, offset: int) -> None:
        """Seek (a negative offset: the start of the log); a partition whose fetcher has not
        started refuses (`_STATE`), so the keys are then assigned again, each at its position."""
        try:
            target = self._absolute(key, offset)
        except KafkaException as exc:
            raise _from_exception(exc) from exc
        try:
            self.consumer.seek(TopicPartition(*split_key(key), target))
            self._placed[key] = target
            self._moved.add(key)
            return
        except KafkaException as exc:
            if self._group:  # a member's keys are the group's to assign, never its own
                raise _from_exception(exc) from exc
        try:
            offsets = {k: self._absolute(k, self.position(k)) for k in self.keys}
            self._assign({**offsets, key: target})
        except KafkaException as exc:
            raise _from_exception(exc) from exc

    def subscribe(self, topics: list[str]) -> None:
        try:
            self.consumer.subscribe(
                topics, on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_revoke
            )
        except KafkaException as exc:
            raise _from_exception(exc) from exc

    def _on_assign(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        # Called inside consume(); the wrapper assigns the partitions when this returns. Eager
        # rebalances revoke everything first; incremental ones (KIP-848) assign only what is new.
        self.keys = sorted(set(self.keys) | {f"{tp.topic}/{tp.partition}" for tp in partitions})
        self._held = list(self.keys)

    def _on_revoke(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        # Called inside consume() before the partitions go (all of them, under the eager protocol).
        self.keys = sorted(set(self.keys) - {f"{tp.topic}/{tp.partition}" for tp in partitions})
        self._held = list(self.keys)

    def rebalanced(self) -> list[str] | None:
        held, self._held = self._held, None
        return held

    def commit(self, offsets: dict[str, int]) -> None:
        parts = _offsets(offsets)
        try:
            for tp in self.consumer.commit(offsets=parts, asynchronous=False) or []:
                if tp.error is not None:
                    raise _error(tp.error)
        except KafkaException as exc:
            raise _from_exception(exc) from exc

    def close(self) -> None:
        # A member leaves its group (committing first under auto-commit).
        close_within(self.consumer, 5.0)


class LibrdkafkaClient:
    name = "librdkafka"
    version = f"{confluent_kafka.libversion()[0]} (confluent-kafka {confluent_kafka.version()[0]})"

    def __init__(
        self,
        bootstrap: str,
        opts: WorkloadOptions,
        log_dir: Path | None = None,
        cluster_version: KafkaVersion | None = None,
    ) -> None:
        self.bootstrap, self.opts = bootstrap, opts
        self._admin = JavaAdmin(bootstrap, opts, cluster_version, log_dir) if cluster_version is not None else None
        self.logger = logging.getLogger(f"kafka_chaos.librdkafka.{next(_numbers)}")
        self.logger.propagate = False
        self._handler: logging.Handler = (
            logging.FileHandler(log_dir / "client-librdkafka.log") if log_dir is not None else logging.NullHandler()
        )
        self._handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        self.logger.addHandler(self._handler)

    def producer(self, client_id: str, transactional_id: str | None = None) -> RdProducer:
        return RdProducer(self.bootstrap, self.opts, client_id, transactional_id, self.logger)

    def consumer(self, client_id: str, isolation_level: str, group: Group | None = None) -> RdConsumer:
        return RdConsumer(self.bootstrap, self.opts, client_id, isolation_level, self.logger, group)

    def share_consumer(self, client_id: str, group_id: str) -> RdShareConsumer:
        return RdShareConsumer(self.bootstrap, self.opts, client_id, group_id, self.logger)

    def share_admin(self, call: str, group: str, timeout_s: float = 30.0, **args: Any) -> dict[str, Any]:
        """A share group's admin call, through the Java driver (librdkafka_share.py says why)."""
        if self._admin is None:
            raise ClientError("Unsupported", "this client was opened without the cluster's version")
        return self._admin.call(call, group, timeout_s, **args)

    def died(self) -> str | None:
        return None

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()
        self.logger.removeHandler(self._handler)
        self._handler.close()


def _open(
    bootstrap: str, opts: WorkloadOptions, cluster_version: KafkaVersion, log_dir: Path | None
) -> LibrdkafkaClient:
    return LibrdkafkaClient(bootstrap, opts, log_dir, cluster_version)


CLIENT = ClientRecord(
    name=LibrdkafkaClient.name,
    open=_open,
    producer_settings=producer_config,
    consumer_settings=consumer_config,
    group_settings=group_config,
    definite={
        "MSG_SIZE_TOO_LARGE": "the record is over the size limit; every attempt is rejected",
        "RECORD_LIST_TOO_LARGE": "the batch is over the size limit; every attempt is rejected",
        "INVALID_RECORD": "the broker rejects the record itself; every attempt is rejected",
        "TOPIC_EXCEPTION": "the topic name is invalid; nothing is appended",
        "INVALID_REQUIRED_ACKS": "the acks setting is refused before any append",
        "TOPIC_AUTHORIZATION_FAILED": "not authorized to write; nothing is appended",
        "CLUSTER_AUTHORIZATION_FAILED": "not authorized; nothing is appended",
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": "not authorized to use the transactional id",
        "UNSUPPORTED_VERSION": "the broker cannot take the request at all",
    },
    not_definite={
        "_MSG_TIMED_OUT": "an attempt may have been appended before the delivery timeout",
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND": "the leader appended the record before it found too few replicas",
        "NOT_LEADER_FOR_PARTITION": "an earlier attempt may have been appended by the old leader",
        "_PURGE_QUEUE": "a queued record may be a retry of one already sent (the producer was closed)",
        "_PURGE_INFLIGHT": "the request was sent; the producer was closed before the answer",
    },
    commit_definite={
        "REBALANCE_IN_PROGRESS": "the group is rebalancing; the coordinator stored nothing",
        "ILLEGAL_GENERATION": "the member's generation is over; the coordinator stored nothing",
        "UNKNOWN_MEMBER_ID": "the member was removed from the group; the coordinator stored nothing",
        "_ASSIGNMENT_LOST": "the member lost its keys to the group; nothing was committed",
    },
)
