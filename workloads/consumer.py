"""The poll side shared by the queue and txn clients: an assigned consumer and its poll operation."""

from __future__ import annotations

from typing import Any

from kafka import KafkaConsumer, TopicPartition

from kafka_chaos.harness.history import INFO, OK
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.outcomes import describe
from kafka_chaos.workloads.values import decode


def topic_partition(key: str) -> TopicPartition:
    topic, _, partition = key.rpartition("/")
    return TopicPartition(topic, int(partition))


def key_of(tp: TopicPartition) -> str:
    return f"{tp.topic}/{tp.partition}"


def record_failed_assign(ctx: RunContext, process: int, keys: list[str], exc: BaseException) -> None:
    """An `assign` whose client could not even be built: its outcome is unknown."""
    ctx.record(process, "invoke", "assign", keys)
    ctx.record(process, INFO, "assign", keys, describe(exc))


class PollingConsumer:
    """A consumer that reads its assigned keys from the beginning, as one logical process."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.consumer = KafkaConsumer(
            bootstrap_servers=ctx.bootstrap_servers, **ctx.opts.consumer_config(ctx.isolation_level)
        )
        self.keys: list[str] = []

    def assign(self, process: int, keys: list[str]) -> bool:
        """An `assign` operation: hold these keys, positioned at the start of each log."""
        self.ctx.record(process, "invoke", "assign", keys)
        try:
            parts = [topic_partition(k) for k in keys]
            self.consumer.assign(parts)
            self.consumer.seek_to_beginning(*parts)
        except Exception as exc:  # noqa: BLE001 (any client error makes the process's state unknown)
            self.ctx.record(process, INFO, "assign", keys, describe(exc))
            return False
        self.keys = list(keys)
        self.ctx.record(process, OK, "assign", keys)
        return True

    def poll_once(self) -> dict[str, list[list[Any]]]:
        """One poll; raises what the consumer raises."""
        batches = self.consumer.poll(
            timeout_ms=self.ctx.opts.poll_timeout_ms, max_records=self.ctx.opts.max_poll_records
        )
        read: dict[str, list[list[Any]]] = {}
        for tp, records in batches.items():
            key = key_of(tp)
            read[key] = [[r.offset, decode(r.value)] for r in records]
            if records:
                self.ctx.observe(key, records[-1].offset)
        return read

    def poll(self, process: int) -> str:
        """A `poll` operation; returns its outcome type."""
        self.ctx.record(process, "invoke", "poll", [["poll"]])
        try:
            read = self.poll_once()
        except Exception as exc:  # noqa: BLE001
            self.ctx.record(process, INFO, "poll", [["poll"]], describe(exc))
            return INFO
        self.ctx.record(process, OK, "poll", [["poll", read]])
        return OK

    def caught_up(self, targets: dict[str, int]) -> bool:
        """Every assigned key read past the highest offset any operation observed."""
        try:
            return all(self.consumer.position(topic_partition(k)) > off for k, off in targets.items() if k in self.keys)
        except Exception:  # noqa: BLE001
            return False

    def close(self) -> None:
        try:
            self.consumer.close(autocommit=False)
        except Exception:  # noqa: BLE001
            pass
