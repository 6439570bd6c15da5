"""The settings every client derives the same way from the options, each computed here once.

Each client's own settings (workloads/clients/kafka_python.py, librdkafka.py, java.py) read these
rather than spell them again: a consumer's request timeout and its floor, how long a call may
block, how soon a broker that went away is tried again, and the producer settings under Kafka's
own property names that librdkafka and the Java client share.
"""

from __future__ import annotations

from typing import Any

from kafka_chaos.workloads.options import WorkloadOptions

#: Brokers come back during a run: a client tries them again within a second (librdkafka's own
#: limit is 10 s). Under Kafka's property name, as librdkafka and the Java client take it.
RECONNECT_BACKOFF: dict[str, Any] = {"reconnect.backoff.max.ms": 1000}
#: A consumer's requests (fetches, offset look-ups, a group's joins and commits) are given at
#: least this long, however short the run makes the producers' request timeout.
CONSUMER_TIMEOUT_FLOOR_MS = 5000


def consumer_timeout_ms(opts: WorkloadOptions) -> int:
    """A consumer's request timeout: the options', never under CONSUMER_TIMEOUT_FLOOR_MS."""
    return max(opts.request_timeout_ms, CONSUMER_TIMEOUT_FLOOR_MS)


def blocking_ms(opts: WorkloadOptions) -> int:
    """max.block.ms, how long a send (its metadata) or a transactional call may block:
    max_block_ms, else the request timeout."""
    return opts.max_block_ms if opts.max_block_ms is not None else opts.request_timeout_ms


def producer_properties(opts: WorkloadOptions) -> dict[str, Any]:
    """The producer settings under Kafka's own property names, as the Java client and librdkafka
    take them, every safety-relevant one explicit."""
    config: dict[str, Any] = {
        "acks": opts.acks,
        "enable.idempotence": opts.enable_idempotence,
        "delivery.timeout.ms": opts.delivery_timeout_ms,
        "request.timeout.ms": opts.request_timeout_ms,
        "max.in.flight.requests.per.connection": opts.max_in_flight_requests_per_connection,
        "linger.ms": 0,
        **RECONNECT_BACKOFF,
    }
    if opts.retries is not None:
        config["retries"] = opts.retries
    return config


def transactional_properties(opts: WorkloadOptions, transactional_id: str | None) -> dict[str, Any]:
    """A transactional producer's own settings under Kafka's property names, as the Java client
    and librdkafka take them: its id and, when the options set one, `transaction.timeout.ms`;
    nothing for a producer without an id."""
    if not transactional_id:
        return {}
    config: dict[str, Any] = {"transactional.id": transactional_id}
    if opts.transaction_timeout_ms is not None:
        config["transaction.timeout.ms"] = opts.transaction_timeout_ms
    return config
