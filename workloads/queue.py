"""The queue workload: sends of fresh integers to a key, and polls of the process's keys.

Each logical process owns a consumer; producers are shared by groups of processes (a
KafkaProducer is thread-safe), which lets kafka-python batch across processes while each
process still has at most one operation outstanding. After an `info` the process's client is
rebuilt and it continues under a new process number (number + concurrency).
"""

from __future__ import annotations

import random
import threading
from typing import Any

from kafka import KafkaProducer
from kafka.errors import KafkaConfigurationError

from kafka_chaos.harness.history import FAIL, INFO, OK
from kafka_chaos.workloads.consumer import PollingConsumer, record_failed_assign, topic_partition
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.outcomes import classify, describe
from kafka_chaos.workloads.producers import OVERDUE_MARGIN_S, close_producer, wedged
from kafka_chaos.workloads.values import encode


class ProducerPool:
    """One producer per `clients_per_producer` slots, created on first use, replaced when broken.

    A broken producer (workloads/producers.py) would stall every slot that shares it for the
    rest of the run; it is retired at once, and the next send of its slots builds a new one."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self._producers: dict[int, KafkaProducer] = {}
        self._lock = threading.Lock()

    def _group(self, slot: int) -> int:
        return slot // max(1, self.ctx.opts.clients_per_producer)

    def for_slot(self, slot: int) -> KafkaProducer:
        """The slot's producer; builds one when there is none (raises what the build raises).

        Built outside the lock: a build during a fault can wait for a bootstrap (bounded by
        bootstrap_timeout_ms), and the slots of other groups must not wait with it. Two slots
        of one group may both build; the first to finish is kept, the other closed."""
        group = self._group(slot)
        with self._lock:
            producer = self._producers.get(group)
        if producer is not None:
            return producer
        built = KafkaProducer(
            bootstrap_servers=self.ctx.bootstrap_servers,
            client_id=f"kafka-chaos-{self.ctx.run_id}-p{group}",
            **self.ctx.opts.producer_config(),
        )
        with self._lock:
            producer = self._producers.setdefault(group, built)
        if producer is not built:
            close_producer(built, 0.0)
        else:
            self.ctx.note_producer_config(built)
        return producer

    def retire_if_broken(self, slot: int, producer: KafkaProducer, overdue: bool) -> None:
        """Replace the slot's producer if it is broken; the slots sharing it notice once."""
        reason = "a send outlived the delivery timeout" if overdue else wedged(producer)
        if reason is None:
            return
        with self._lock:
            if self._producers.get(self._group(slot)) is not producer:
                return  # another slot already replaced it
            del self._producers[self._group(slot)]
        self.ctx.note_replaced_producer(reason)
        # Its unfinished sends fail now (their operations end info); closing can block, so not here.
        threading.Thread(target=close_producer, args=(producer, 0.0), daemon=True).start()

    def close(self) -> None:
        with self._lock:
            producers, self._producers = list(self._producers.values()), {}
        for producer in producers:
            close_producer(producer)


def send(ctx: RunContext, producer: KafkaProducer, process: int, key: str, values: list[int]) -> tuple[str, bool]:
    """A `send` operation of one or more values to one key; returns its outcome type, and
    whether a future was still unresolved after the delivery timeout (a broken producer)."""
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
            return FAIL, False
        error: BaseException | None = exc
    else:
        error = None
    # The producer itself fails a batch at the delivery timeout; the margin covers its clock.
    wait_s = ctx.opts.delivery_timeout_ms / 1000 + OVERDUE_MARGIN_S
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
    overdue = any(not f.is_done for f in futures)
    if all(o == OK for o in outcomes):
        ctx.record(process, OK, "send", done)
        return OK, False
    kind = FAIL if all(o == FAIL for o in outcomes) else INFO
    ctx.record(process, kind, "send", done, describe(error) if error else None)
    return kind, overdue


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
        try:
            producer = self.pool.for_slot(self.slot)
        except KafkaConfigurationError:
            raise  # a setting kafka-python refuses is a harness bug, not an outcome (options.validate)
        except Exception as exc:  # noqa: BLE001 (no producer could be built: the values never left)
            invoke = [["send", key, v] for v in values]
            self.ctx.record(self.process, "invoke", "send", invoke)
            self.ctx.record(self.process, FAIL, "send", invoke, describe(exc))
            return FAIL
        kind, overdue = send(self.ctx, producer, self.process, key, values)
        if kind != OK:
            self.pool.retire_if_broken(self.slot, producer, overdue)
        return kind

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None
