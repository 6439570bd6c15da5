"""What a workload needs of a Kafka client: the one interface every client library implements.

The queue and txn workloads and the final read (workloads/queue.py, txn.py, consumer.py,
runner.py) make every Kafka call through these few methods, so one code path drives
kafka-python, librdkafka (confluent-kafka) and the Java client alike. Keys are the history's
keys ("topic/partition"); values are the workload's integers.

Errors: kafka-python raises its own exception classes; the other two raise ClientError, which
carries the client's own name for the error (a Java exception class, a librdkafka error code).
Whether an error is `fail` or `info` is decided by that name, per client, in one table
(workloads/outcomes.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from kafka_chaos.workloads.options import CLIENTS as CLIENTS  # `--client` values, named with the options


class ClientError(Exception):
    """An error a client reported, under the client's own name for it."""

    def __init__(self, name: str, message: str = "", *, cause: str | None = None, refused: bool = False) -> None:
        super().__init__(message or name)
        self.name, self.message, self.cause = name, message, cause
        #: The client refused the record before it left the process (Java: send() threw;
        #: librdkafka: produce() raised): it cannot have been written.
        self.refused = refused


class ClientConfigError(Exception):
    """The client refused its settings: a harness bug (WorkloadOptions.validate should have said)."""


class ClientDied(Exception):
    """The client itself is gone (the Java driver's process ended): the run must stop."""


class Delivery(Protocol):
    """One record handed to a producer."""

    def result(self, timeout_s: float) -> int | None:
        """Its offset (None when the client reports none: acks=0); raises the client's error,
        or TimeoutError when no answer came within `timeout_s`."""
        ...

    def done(self) -> bool: ...


class Producer(Protocol):
    #: The settings the client reports it runs with (its own view where it has one).
    config: dict[str, Any]

    def send(self, key: str, value: int) -> Delivery:
        """Hand one record over; raises (with `refused`) when the client will not take it."""
        ...

    def broken(self) -> str | None:
        """Why this producer can never finish a send again, or None while it can."""
        ...

    def init_transactions(self, timeout_s: float) -> None: ...

    def begin_transaction(self) -> None: ...

    def commit_transaction(self, timeout_s: float) -> None: ...

    def abort_transaction(self, timeout_s: float) -> None: ...

    def send_offsets(self, offsets: dict[str, int], consumer: Consumer, timeout_s: float) -> None:
        """Commit {key: next offset} for `consumer`'s group as part of the open transaction
        (sendOffsetsToTransaction): they count only if the transaction commits."""
        ...

    def close(self, timeout_s: float = 5.0) -> None:
        """Close, never raising; may return before the client has finished closing."""
        ...


@dataclass(frozen=True)
class Group:
    """A consumer that subscribes as a member of a consumer group (workloads/group.py)."""

    group_id: str
    #: The client's own auto-commit (--commit auto) instead of none.
    auto_commit: bool = False


class Consumer(Protocol):
    config: dict[str, Any]

    def assign(self, keys: list[str]) -> None:
        """Hold exactly these keys, each positioned at the start of its log."""
        ...

    def poll(self, timeout_ms: int) -> dict[str, list[tuple[int, bytes | str | None]]]:
        """One poll: the (offset, raw value) records read, by key."""
        ...

    def position(self, key: str) -> int: ...

    def seek(self, key: str, offset: int) -> None: ...

    def subscribe(self, topics: list[str]) -> None:
        """Join the consumer's group (Client.consumer's `group`) for these topics: the group
        assigns keys during later polls, each from the group's committed offset."""
        ...

    def rebalanced(self) -> list[str] | None:
        """The keys held now when a rebalance changed them since the last call (the client's
        callback for a revocation, a loss or an assignment ran), else None."""
        ...

    def commit(self, offsets: dict[str, int]) -> None:
        """Commit {key: next offset to read} for the group, synchronously; raises the client's error."""
        ...

    def close(self) -> None: ...


class ShareConsumer(Protocol):
    """A member of a share group (KIP-932) that acknowledges each record explicitly."""

    config: dict[str, Any]

    def subscribe(self, topics: list[str]) -> None: ...

    def poll(self, timeout_ms: int) -> dict[str, list[tuple[int, bytes | str | None, int | None]]]:
        """One poll: the records acquired, by key: (offset, raw value, delivery count or None)."""
        ...

    def acknowledge(self, acks: dict[str, list[tuple[int, str]]], timeout_ms: int) -> dict[str, ClientError | None]:
        """Acknowledge records of the last poll ({key: [(offset, "accept" | "release" | "reject")]})
        and commit them synchronously: each key's outcome, None when the broker took it, else the
        error it was refused with. Raises what the client raises for the whole call."""
        ...

    def close(self, timeout_s: float = 2.0) -> None: ...


#: share_admin's calls: the group's dynamic configs; its start offset per key.
SET_GROUP_CONFIG, START_OFFSETS = "set_group_config", "offsets"


class Client(Protocol):
    """One client library as a run uses it: it makes producers and consumers."""

    #: "kafka-python", "librdkafka" or "java" (the history's `client` field).
    name: str
    #: The library's version (the Java client's kafka-clients version, librdkafka's version).
    version: str

    def producer(self, client_id: str, transactional_id: str | None = None) -> Producer: ...

    def consumer(self, client_id: str, isolation_level: str, group: Group | None = None) -> Consumer:
        """A consumer of its own (assign), or a member of `group` (subscribe)."""
        ...

    def died(self) -> str | None:
        """Why the client itself is gone (ClientDied), or None while it serves."""
        ...

    def close(self) -> None: ...


def split_key(key: str) -> tuple[str, int]:
    """ "topic/partition" as (topic, partition)."""
    topic, _, partition = key.rpartition("/")
    return topic, int(partition)
