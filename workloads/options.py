"""Workload options, with their defaults and the checks that make bad input exit 2.

The defaults are the safe configuration: acks=all, idempotence on (passed explicitly, since
kafka-python silently turns it off on conflicting settings), RF 3, min.insync.replicas 2,
and `auto_offset_reset="none"`, so that a truncated log surfaces as an error instead of a
silent seek.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from kafka_chaos.harness.errors import UsageError

WORKLOADS = ("queue", "txn")
ACKS = ("0", "1", "all")
OFFSET_RESETS = ("none", "earliest", "latest")


@dataclass
class WorkloadOptions:
    workload: str = "queue"
    topic: str = "chaos"
    keys: int = 4  # partitions of the topic; a key is "topic/partition"
    replication_factor: int = 3
    min_insync_replicas: int = 2
    concurrency: int = 16  # logical client processes
    rate: float = 2000.0  # target operations per second, all processes together
    time_limit: float = 30.0  # seconds of workload before the final read phase
    final_time_limit: float = 60.0  # bound on the final read phase
    poll_fraction: float = 0.5  # share of operations that are polls
    send_values: int = 1  # values per send operation (1 to this many)
    poll_keys: int = 2  # keys each process assigns for its polls
    poll_timeout_ms: int = 10  # a poll with nothing new returns after this long
    max_poll_records: int = 500
    acks: str = "all"
    enable_idempotence: bool = True
    retries: int | None = None  # None: kafka-python's default (unlimited, bounded by the delivery timeout)
    delivery_timeout_ms: int = 10000
    request_timeout_ms: int = 5000
    max_in_flight_requests_per_connection: int = 5
    auto_offset_reset: str = "none"
    clients_per_producer: int = 16  # queue workload: processes that share one producer
    txn_abort_fraction: float = 0.1  # txn workload: transactions deliberately aborted
    txn_max_ops: int = 4
    txn_timeout_s: float = 15.0  # watchdog on commit and abort

    def validate(self) -> WorkloadOptions:
        if self.workload not in WORKLOADS:
            raise UsageError(f"unknown workload {self.workload!r}: expected one of {', '.join(WORKLOADS)}")
        if not self.rate > 0:
            raise UsageError(f"--rate must be greater than 0, got {self.rate:g}")
        if self.acks not in ACKS:
            raise UsageError(f"--acks must be one of 0, 1, all; got {self.acks!r}")
        if self.keys < 1:
            raise UsageError(f"--keys must be at least 1, got {self.keys}")
        if self.concurrency < 1:
            raise UsageError(f"--concurrency must be at least 1, got {self.concurrency}")
        if not self.time_limit > 0:
            raise UsageError(f"--time-limit must be greater than 0, got {self.time_limit:g}")
        if self.auto_offset_reset not in OFFSET_RESETS:
            raise UsageError(f"--auto-offset-reset must be one of {', '.join(OFFSET_RESETS)}")
        if not 0 <= self.poll_fraction <= 1 or not 0 <= self.txn_abort_fraction <= 1:
            raise UsageError("fractions must be between 0 and 1")
        if self.send_values < 1 or self.txn_max_ops < 1 or self.poll_keys < 1:
            raise UsageError("--send-values, --txn-max-ops and --poll-keys must be at least 1")
        if self.workload == "txn" and self.acks != "all":
            raise UsageError("the txn workload needs --acks all (transactions require it)")
        if self.acks != "all" and self.enable_idempotence:
            # kafka-python raises KafkaConfigurationError for this once the run has started.
            raise UsageError(
                f"--acks {self.acks} needs --idempotence false (the idempotent producer requires acks=all)"
            )
        return self

    @property
    def key_names(self) -> list[str]:
        return [f"{self.topic}/{p}" for p in range(self.keys)]

    def poll_keys_for(self, slot: int) -> list[str]:
        """The keys a client slot assigns for its polls: `poll_keys` consecutive keys from its own."""
        keys = self.key_names
        return [keys[(slot + j) % len(keys)] for j in range(min(len(keys), self.poll_keys))]

    def producer_config(self) -> dict[str, Any]:
        """kafka-python producer settings, every safety-relevant one explicit."""
        config: dict[str, Any] = {
            "acks": "all" if self.acks == "all" else int(self.acks),
            "enable_idempotence": self.enable_idempotence,
            "delivery_timeout_ms": self.delivery_timeout_ms,
            "request_timeout_ms": self.request_timeout_ms,
            "max_in_flight_requests_per_connection": self.max_in_flight_requests_per_connection,
            "linger_ms": 0,
            "max_block_ms": self.request_timeout_ms,
            # Clients are rebuilt during faults: a bootstrap that met a paused broker tries
            # another within this, instead of kafka-python's 30 s.
            "bootstrap_timeout_ms": 2 * self.request_timeout_ms,
        }
        if self.retries is not None:
            config["retries"] = self.retries
        return config

    def consumer_config(self) -> dict[str, Any]:
        return {
            "enable_auto_commit": False,
            "group_id": None,
            "auto_offset_reset": self.auto_offset_reset,
            "isolation_level": "read_committed" if self.workload == "txn" else "read_uncommitted",
            "request_timeout_ms": max(self.request_timeout_ms, 5000),
            "bootstrap_timeout_ms": 2 * max(self.request_timeout_ms, 5000),
            "max_poll_records": self.max_poll_records,
        }

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
