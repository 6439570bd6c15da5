"""The queue workload: sends of fresh integers to a key, and polls of the process's keys.

Each logical process owns a consumer; producers are shared by groups of processes (a
KafkaProducer is thread-safe), which lets kafka-python batch across processes while each
process still has at most one operation outstanding. After an `info` the process's client is
rebuilt and it continues under a new process number (number + concurrency).
"""

from __future__ import annotations

import random
from typing import Any

from kafka import KafkaProducer

from harness.history import FAIL, INFO, OK
from workloads.consumer import PollingConsumer, record_failed_assign, topic_partition
from workloads.context import RunContext
from workloads.outcomes import classify, describe
from workloads.producers import close_producer
from workloads.values import encode


class ProducerPool:
    """One producer per `clients_per_producer` slots, created on first use."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self._producers: dict[int, KafkaProducer] = {}

    def for_slot(self, slot: int) -> KafkaProducer:
        group = slot // max(1, self.ctx.opts.clients_per_producer)
        if group not in self._producers:
            producer = KafkaProducer(
                bootstrap_servers=self.ctx.bootstrap_servers,
                client_id=f"kafka-chaos-{self.ctx.run_id}-p{group}",
                **self.ctx.opts.producer_config(),
            )
            self.ctx.note_producer_config(producer)
            self._producers[group] = producer
        return self._producers[group]

    def close(self) -> None:
        for producer in self._producers.values():
            close_producer(producer)


def send(ctx: RunContext, producer: KafkaProducer, process: int, key: str, values: list[int]) -> str:
    """A `send` operation of one or more values to one key; returns its outcome type."""
    invoke = [["send", key, v] for v in values]
    ctx.record(process, "invoke", "send", invoke)
    tp = topic_partition(key)
    futures = []
    try:
        for v in values:
            futures.append(producer.send(tp.topic, value=encode(v), partition=tp.partition))
    except Exception as exc:  # noqa: BLE001
        if not futures:  # raised by send() itself: the record never left the client
            ctx.record(process, FAIL, "send", invoke, describe(exc))
            return FAIL
        error: BaseException | None = exc
    else:
        error = None
    wait_s = ctx.opts.delivery_timeout_ms / 1000 + 5
    done: list[Any] = []
    outcomes = []
    for v, future in zip(values, futures, strict=False):
        try:
            offset = future.get(timeout=wait_s).offset
            offset = offset if offset is not None and offset >= 0 else None  # acks=0 reports -1
            ctx.observe(key, offset)
            done.append(["send", key, [offset, v]])
            outcomes.append(OK)
        except Exception as exc:  # noqa: BLE001
            error = error or exc
            done.append(["send", key, v])
            outcomes.append(classify(exc))
    outcomes += [INFO] * (len(values) - len(futures))
    if all(o == OK for o in outcomes):
        ctx.record(process, OK, "send", done)
        return OK
    kind = FAIL if all(o == FAIL for o in outcomes) else INFO
    ctx.record(process, kind, "send", done, describe(error) if error else None)
    return kind


class QueueClient:
    """One logical process of the queue workload."""

    def __init__(self, ctx: RunContext, pool: ProducerPool, slot: int, process: int) -> None:
        self.ctx, self.pool, self.slot, self.process = ctx, pool, slot, process
        self.poll_keys = ctx.opts.poll_keys_for(slot)
        self.consumer: PollingConsumer | None = None

    def open(self, keys: list[str] | None = None) -> bool:
        try:
            self.consumer = PollingConsumer(self.ctx)
        except Exception as exc:  # noqa: BLE001
            record_failed_assign(self.ctx, self.process, keys or self.poll_keys, exc)
            return False
        return self.consumer.assign(self.process, keys or self.poll_keys)

    def step(self, rng: random.Random) -> str:
        if self.consumer is None and not self.open():
            return INFO
        if rng.random() < self.ctx.opts.poll_fraction:
            return self.consumer.poll(self.process)
        key = rng.choice(self.ctx.opts.key_names)
        values = self.ctx.next_values(key, rng.randint(1, self.ctx.opts.send_values))
        return send(self.ctx, self.pool.for_slot(self.slot), self.process, key, values)

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None
