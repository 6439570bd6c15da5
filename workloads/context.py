"""What the client processes of one run share: the client library, the history, the options,
value counters, the highest offset observed per key, outcome counts, and the stop signal."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kafka_chaos.history.events import INVOKE
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.workloads.clients.api import Client
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.stalls import ClientStalls


class GroupProgress:
    """The highest offset of each key any member of the run's consumer group has read
    (workloads/group.py): the group's drain is done when each passes its target."""

    def __init__(self) -> None:
        self._read: dict[str, int] = {}
        self._lock = threading.Lock()

    def note(self, read: dict[str, list[list]]) -> None:
        with self._lock:
            for key, records in read.items():
                if records and records[-1][0] > self._read.get(key, -1):
                    self._read[key] = records[-1][0]

    def caught_up(self, targets: dict[str, int]) -> bool:
        with self._lock:
            return all(self._read.get(key, -1) >= offset for key, offset in targets.items())


@dataclass
class RunContext:
    history: HistoryWriter
    opts: WorkloadOptions
    bootstrap_servers: str
    #: The client library every Kafka call goes through (workloads/clients/registry.py opens it).
    client: Client
    run_id: str = "run"
    #: The workload's consumers' (workloads/registry.py): read_committed for transactions.
    isolation_level: str = "read_uncommitted"
    stop: threading.Event = field(default_factory=threading.Event)
    counts: Counter[str] = field(default_factory=Counter)
    max_offsets: dict[str, int] = field(default_factory=dict)
    effective_producer_config: dict[str, Any] = field(default_factory=dict)
    effective_consumer_config: dict[str, Any] = field(default_factory=dict)
    effective_member_config: dict[str, Any] = field(default_factory=dict)
    #: "final" during the final read: its events carry `"phase": "final"`, so that a reader of
    #: the history knows where the workload phase ended (checkers/measures/liveness.py).
    phase: str | None = None
    #: Producers retired as broken during the run, by reason (workloads/producers.py).
    replaced_producers: Counter[str] = field(default_factory=Counter)
    #: What the members of the run's consumer group have read (--consumer subscribe, mixed).
    group: GroupProgress = field(default_factory=GroupProgress)
    #: What the members of the run's share group settled (--consumer share; workloads/share.py).
    share: Any = None
    #: The holds the nemesis asks of the workload's processes (workloads/stalls.py).
    stalls: ClientStalls = field(default_factory=ClientStalls)
    #: Members that left the group by --group-churn, and that crashed by --member-crashes.
    churned: int = 0
    crashed: int = 0
    _next_value: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def next_values(self, key: str, count: int) -> list[int]:
        """`count` fresh values for a key: unique per key, increasing."""
        with self._lock:
            start = self._next_value.get(key, 0)
            self._next_value[key] = start + count
        return list(range(start, start + count))

    def observe(self, key: str, offset: int | None) -> None:
        if offset is None or offset < 0:
            return
        with self._lock:
            if offset > self.max_offsets.get(key, -1):
                self.max_offsets[key] = offset

    def record(self, process: int, type: str, f: str, value: Any, error: str | None = None) -> None:
        extra: dict[str, Any] = {"phase": self.phase} if self.phase else {}
        if type == INVOKE:
            extra["client"] = self.client.name
        self.history.write(process, type, f, value, error, **extra)
        if type != INVOKE:
            with self._lock:
                self.counts[type] += 1
                self.counts[f"{f}:{type}"] += 1

    def note_replaced_producer(self, reason: str) -> None:
        with self._lock:
            self.replaced_producers[reason] += 1

    def note_churn(self) -> None:
        with self._lock:
            self.churned += 1

    def note_crash(self) -> None:
        with self._lock:
            self.crashed += 1

    def note_config(self, producer: Any = None, consumer: Any = None, member: Any = None) -> None:
        """Keep the settings the client reports it runs with: the first producer's, the first
        assigning consumer's and the first group member's. Kept apart because a mixed run has
        both kinds of consumer, created in whatever order its threads run."""
        with self._lock:
            if producer is not None and not self.effective_producer_config:
                self.effective_producer_config = dict(producer.config)
            if consumer is not None and not self.effective_consumer_config:
                self.effective_consumer_config = dict(consumer.config)
            if member is not None and not self.effective_member_config:
                self.effective_member_config = dict(member.config)
