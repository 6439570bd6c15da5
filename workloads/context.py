"""What the client processes of one run share: the history, the options, value counters,
the highest offset observed per key, outcome counts, and the stop signal."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kafka_chaos.harness.history import INVOKE, HistoryWriter
from kafka_chaos.workloads.options import WorkloadOptions


@dataclass
class RunContext:
    history: HistoryWriter
    opts: WorkloadOptions
    bootstrap_servers: str
    run_id: str = "run"
    #: The workload's consumers' (workloads/registry.py): read_committed for transactions.
    isolation_level: str = "read_uncommitted"
    stop: threading.Event = field(default_factory=threading.Event)
    counts: Counter[str] = field(default_factory=Counter)
    max_offsets: dict[str, int] = field(default_factory=dict)
    effective_producer_config: dict[str, Any] = field(default_factory=dict)
    #: "final" during the final read: its events carry `"phase": "final"`, so that a reader of
    #: the history knows where the workload phase ended (checkers/liveness.py).
    phase: str | None = None
    #: Producers retired as broken during the run, by reason (workloads/producers.py).
    replaced_producers: Counter[str] = field(default_factory=Counter)
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
        extra = {"phase": self.phase} if self.phase else {}
        self.history.write(process, type, f, value, error, **extra)
        if type != INVOKE:
            with self._lock:
                self.counts[type] += 1
                self.counts[f"{f}:{type}"] += 1

    def note_replaced_producer(self, reason: str) -> None:
        with self._lock:
            self.replaced_producers[reason] += 1

    def note_producer_config(self, producer: Any) -> None:
        """Keep what kafka-python actually runs with (it may quietly change idempotence)."""
        keys = (
            "acks", "enable_idempotence", "retries", "delivery_timeout_ms", "request_timeout_ms",
            "max_in_flight_requests_per_connection", "linger_ms", "transactional_id",
        )  # fmt: skip
        with self._lock:
            if not self.effective_producer_config:
                config = producer.config
                self.effective_producer_config = {k: _json_safe(config.get(k)) for k in keys}


def _json_safe(value: Any) -> Any:
    """kafka-python's unlimited retries is float('inf'), which JSON cannot hold."""
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "unlimited"
    return value
