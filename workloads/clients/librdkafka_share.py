"""A share group's member through librdkafka (confluent-kafka's `ShareConsumer`, a preview in
2.16) and the admin calls a share run needs.

The member acknowledges explicitly: each record of a poll is marked (`acknowledge_offset`) and
the marks are committed synchronously (`commit_sync`), which answers per partition. librdkafka
requires every record of a poll to be marked before the next poll; the workload acknowledges
all of them, or stops polling (a crash).

confluent-kafka 2.16 has no share-group admin call (the group's start offsets), so a
librdkafka share run asks those of the Java driver's admin at the cluster's version: the
`share-offsets` operation is the harness's, not the member's, and the client under test is
only the members' (docs/clients.md).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import confluent_kafka
from confluent_kafka import AcknowledgeType, KafkaException

from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.workloads.clients.api import ClientError, split_key
from kafka_chaos.workloads.clients.librdkafka_base import close_within, error_of, from_exception
from kafka_chaos.workloads.clients.settings import RECONNECT_BACKOFF, consumer_timeout_ms
from kafka_chaos.workloads.options import WorkloadOptions

#: The workload's acknowledgement kinds as librdkafka's.
KINDS = {"accept": AcknowledgeType.ACCEPT, "release": AcknowledgeType.RELEASE, "reject": AcknowledgeType.REJECT}


def share_config(opts: WorkloadOptions, client_id: str, group_id: str) -> dict[str, Any]:
    """A member's settings (the lock and the delivery limit are the group's, set by the
    harness). librdkafka refuses the classic consumer's group settings on a share consumer."""
    return {
        "client.id": client_id,
        "group.id": group_id,
        "share.acknowledgement.mode": "explicit",
        "socket.timeout.ms": consumer_timeout_ms(opts),
        "max.poll.records": opts.max_poll_records,
        **RECONNECT_BACKOFF,
    }


class RdShareConsumer:
    """A member of a share group (workloads/clients/api.py ShareConsumer) over librdkafka."""

    def __init__(
        self, bootstrap: str, opts: WorkloadOptions, client_id: str, group_id: str, logger: logging.Logger
    ) -> None:
        self.config = share_config(opts, client_id, group_id)
        self.consumer = confluent_kafka.ShareConsumer({"bootstrap.servers": bootstrap, **self.config, "logger": logger})

    def subscribe(self, topics: list[str]) -> None:
        try:
            self.consumer.subscribe(topics)
        except KafkaException as exc:
            raise from_exception(exc) from exc

    def poll(self, timeout_ms: int) -> dict[str, list[tuple[int, bytes | None, int | None]]]:
        try:
            messages = self.consumer.poll(timeout_ms / 1000)
        except (KafkaException, RuntimeError) as exc:
            raise from_exception(exc) from exc
        got: dict[str, list[tuple[int, bytes | None, int | None]]] = {}
        for msg in messages:
            if msg.error() is not None:
                raise error_of(msg.error())
            got.setdefault(f"{msg.topic()}/{msg.partition()}", []).append(
                (msg.offset(), msg.value(), msg.delivery_count())
            )
        return got

    def acknowledge(self, acks: dict[str, list[tuple[int, str]]], timeout_ms: int) -> dict[str, ClientError | None]:
        try:
            for key, done in acks.items():
                topic, partition = split_key(key)
                for offset, kind in done:
                    self.consumer.acknowledge_offset(topic, partition, offset, KINDS[kind])
            answers = self.consumer.commit_sync(timeout_ms / 1000)
        except (KafkaException, RuntimeError) as exc:
            raise from_exception(exc) from exc
        by_key = {f"{tp.topic}/{tp.partition}": err for tp, err in (answers or {}).items()}
        out: dict[str, ClientError | None] = {}
        for key in acks:
            if key not in by_key:  # the commit said nothing of the key: its outcome is unknown
                out[key] = ClientError("NoOutcome", f"the commit returned no outcome for {key}")
            else:
                err = by_key[key]
                out[key] = None if err is None else from_exception(err)
        return out

    def close(self, timeout_s: float = 2.0) -> None:
        # close() commits what is marked and leaves the group.
        close_within(self.consumer, timeout_s + 3.0)


class JavaAdmin:
    """The Java driver's share-group admin calls, opened at the first call: confluent-kafka has
    none. Its kafka-clients is the cluster's release (share groups are 4.1+ on both sides)."""

    def __init__(self, bootstrap: str, opts: WorkloadOptions, cluster_version: KafkaVersion, log_dir: Path | None):
        self._args = (bootstrap, opts, cluster_version, log_dir)
        self._client: Any = None
        self._lock = threading.Lock()

    def call(self, call: str, group: str, timeout_s: float = 30.0, **args: Any) -> dict[str, Any]:
        from kafka_chaos.workloads.clients.java import JavaClient  # builds a driver: only when asked

        with self._lock:
            if self._client is None:
                bootstrap, opts, version, log_dir = self._args
                self._client = JavaClient(bootstrap, opts, version, log_dir)
        return self._client.share_admin(call, group, timeout_s, **args)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
