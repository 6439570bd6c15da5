"""Workload options, with their defaults and the checks that make bad input exit 2.

The defaults are the safe configuration: acks=all, idempotence on (passed explicitly, since
kafka-python silently turns it off on conflicting settings), RF 3, min.insync.replicas 2,
and `auto_offset_reset="none"`, so that a truncated log surfaces as an error instead of a
silent seek.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from kafka_chaos.harness.errors import UsageError

ACKS = ("0", "1", "all")
OFFSET_RESETS = ("none", "earliest", "latest")


def flag(name: str, help: str | None = None) -> dict[str, str | None]:
    """A field's command-line flag and help: `kafka-chaos run` makes one flag per such field, in
    field order (frontends/cli.py), and the checks below name the flag."""
    return {"flag": name, "help": help}


@dataclass
class WorkloadOptions:
    workload: str = field(default="queue", metadata=flag("--workload", "queue or txn (default queue)"))
    #: Seconds of workload before the final read phase.
    time_limit: float = field(default=30.0, metadata=flag("--time-limit", "seconds of workload (default 30)"))
    final_time_limit: float = field(default=60.0, metadata=flag("--final-time-limit", "bound on the final read"))
    #: Target operations per second, all processes together.
    rate: float = field(default=2000.0, metadata=flag("--rate", "target operations/s, all clients (default 2000)"))
    #: Logical client processes.
    concurrency: int = field(default=16, metadata=flag("--concurrency", "client processes (default 16)"))
    #: Partitions of the topic; a key is "topic/partition".
    keys: int = field(default=4, metadata=flag("--keys", "keys = partitions of the topic (default 4)"))
    topic: str = field(default="chaos", metadata=flag("--topic"))
    replication_factor: int = field(default=3, metadata=flag("--replication-factor"))
    min_insync_replicas: int = field(default=2, metadata=flag("--min-insync-replicas"))
    #: Share of operations that are polls.
    poll_fraction: float = field(default=0.5, metadata=flag("--poll-fraction"))
    #: Values per send operation (1 to this many).
    send_values: int = field(default=1, metadata=flag("--send-values", "values per send (1..N)"))
    acks: str = field(default="all", metadata=flag("--acks", "0, 1 or all (default all)"))
    enable_idempotence: bool = field(default=True, metadata=flag("--idempotence", "true or false (default true)"))
    #: None: kafka-python's default (unlimited, bounded by the delivery timeout).
    retries: int | None = field(default=None, metadata=flag("--retries", "default: unlimited within the timeout"))
    delivery_timeout_ms: int = field(default=10000, metadata=flag("--delivery-timeout-ms"))
    max_in_flight_requests_per_connection: int = field(default=5, metadata=flag("--max-in-flight"))
    auto_offset_reset: str = field(
        default="none", metadata=flag("--auto-offset-reset", "none, earliest or latest (default none)")
    )
    #: txn workload: transactions deliberately aborted.
    txn_abort_fraction: float = field(default=0.1, metadata=flag("--abort-fraction", "txn: deliberate aborts"))
    # No flag: set from Python (chaos_run's keywords) or a scenario.
    poll_keys: int = 2  # keys each process assigns for its polls
    poll_timeout_ms: int = 10  # a poll with nothing new returns after this long
    max_poll_records: int = 500
    request_timeout_ms: int = 5000
    clients_per_producer: int = 16  # queue workload: processes that share one producer
    txn_max_ops: int = 4
    txn_timeout_s: float = 15.0  # watchdog on commit and abort

    def validate(self) -> WorkloadOptions:
        """UsageError naming the first bad option by its flag (or keyword, where it has none).
        The workload's name and its own rules are checked with its record (workloads/registry.py
        check_workload, which calls this)."""
        n = named
        if not self.rate > 0:
            raise UsageError(f"{n('rate')} must be greater than 0, got {self.rate:g}")
        if self.acks not in ACKS:
            raise UsageError(f"{n('acks')} must be one of 0, 1, all; got {self.acks!r}")
        if self.keys < 1:
            raise UsageError(f"{n('keys')} must be at least 1, got {self.keys}")
        if self.concurrency < 1:
            raise UsageError(f"{n('concurrency')} must be at least 1, got {self.concurrency}")
        if not self.time_limit > 0:
            raise UsageError(f"{n('time_limit')} must be greater than 0, got {self.time_limit:g}")
        if self.auto_offset_reset not in OFFSET_RESETS:
            raise UsageError(f"{n('auto_offset_reset')} must be one of {', '.join(OFFSET_RESETS)}")
        if not 0 <= self.poll_fraction <= 1 or not 0 <= self.txn_abort_fraction <= 1:
            raise UsageError(f"{n('poll_fraction')} and {n('txn_abort_fraction')} must be between 0 and 1")
        if self.send_values < 1 or self.txn_max_ops < 1 or self.poll_keys < 1:
            raise UsageError(f"{n('send_values')}, {n('txn_max_ops')} and {n('poll_keys')} must be at least 1")
        if self.acks != "all" and self.enable_idempotence:
            # kafka-python raises KafkaConfigurationError for this once the run has started.
            needs = f"{n('acks')} {self.acks} needs {n('enable_idempotence')} false"
            raise UsageError(f"{needs} (the idempotent producer requires acks=all)")
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

    def consumer_config(self, isolation_level: str = "read_uncommitted") -> dict[str, Any]:
        """kafka-python consumer settings; the isolation level is the workload's (workloads/registry.py)."""
        return {
            "enable_auto_commit": False,
            "group_id": None,
            "auto_offset_reset": self.auto_offset_reset,
            "isolation_level": isolation_level,
            "request_timeout_ms": max(self.request_timeout_ms, 5000),
            "bootstrap_timeout_ms": 2 * max(self.request_timeout_ms, 5000),
            "max_poll_records": self.max_poll_records,
        }

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def named(option: str) -> str:
    """How a user names an option: its flag (`--abort-fraction`), or for an option with no flag
    its keyword (`txn_max_ops`, as chaos_run and scenarios take it)."""
    spec = next(f for f in fields(WorkloadOptions) if f.name == option)
    return spec.metadata.get("flag") or option
