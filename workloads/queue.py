"""The queue workload: sends of fresh integers to a key, and polls of the process's keys.

Each logical process owns a consumer; producers are shared by groups of processes (every
client's producer is thread-safe), which lets the client batch across processes while each
process still has at most one operation outstanding. Every Kafka call goes through the run's
client (workloads/clients/). After an `info` the process's client is
rebuilt and it continues under a new process number (number + concurrency).
"""

from __future__ import annotations

import random
import threading
from typing import Any

from kafka_chaos.history.events import FAIL, INFO, INVOKE, OK, SEND
from kafka_chaos.workloads.clients.api import ClientConfigError, Producer
from kafka_chaos.workloads.consumer import PollingConsumer, record_failed_assign
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.group import GroupMember, record_failed_join
from kafka_chaos.workloads.outcomes import classify, describe
from kafka_chaos.workloads.producers import OVERDUE_MARGIN_S
from kafka_chaos.workloads.share import ShareMember, record_failed_member


class ProducerPool:
    """One producer per `clients_per_producer` slots, created on first use, replaced when broken.

    A broken producer (workloads/producers.py) would stall every slot that shares it for the
    rest of the run; it is retired at once, and the next send of its slots builds a new one."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self._producers: dict[int, Producer] = {}
        self._lock = threading.Lock()

    def _group(self, slot: int) -> int:
        return slot // max(1, self.ctx.opts.clients_per_producer)

    def for_slot(self, slot: int) -> Producer:
        """The slot's producer; builds one when there is none (raises what the build raises).

        Built outside the lock: a build during a fault can wait for a bootstrap (bounded by
        bootstrap_timeout_ms), and the slots of other groups must not wait with it. Two slots
        of one group may both build; the first to finish is kept, the other closed."""
        group = self._group(slot)
        with self._lock:
            producer = self._producers.get(group)
        if producer is not None:
            return producer
        built = self.ctx.client.producer(f"kafka-chaos-{self.ctx.run_id}-p{group}")
        with self._lock:
            producer = self._producers.setdefault(group, built)
        if producer is not built:
            built.close(0.0)
        else:
            self.ctx.note_config(producer=built)
        return producer

    def retire_if_broken(self, slot: int, producer: Producer, overdue: bool) -> None:
        """Replace the slot's producer if it is broken; the slots sharing it notice once."""
        reason = "a send outlived the delivery timeout" if overdue else producer.broken()
        if reason is None:
            return
        with self._lock:
            if self._producers.get(self._group(slot)) is not producer:
                return  # another slot already replaced it
            del self._producers[self._group(slot)]
        self.ctx.note_replaced_producer(reason)
        # Its unfinished sends fail now (their operations end info); closing can block, so not here.
        threading.Thread(target=producer.close, args=(0.0,), daemon=True).start()

    def close(self) -> None:
        with self._lock:
            producers, self._producers = list(self._producers.values()), {}
        for producer in producers:
            producer.close()


def send(ctx: RunContext, producer: Producer, process: int, key: str, values: list[int]) -> tuple[str, bool]:
    """A `send` operation of one or more values to one key; returns its outcome type, and
    whether a future was still unresolved after the delivery timeout (a broken producer)."""
    invoke = [[SEND, key, v] for v in values]
    ctx.record(process, INVOKE, SEND, invoke)
    futures = []
    try:
        for v in values:
            futures.append(producer.send(key, v))
    except Exception as exc:
        if not futures:  # raised by send() itself: the record never left the client
            ctx.record(process, FAIL, SEND, invoke, describe(exc))
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
            offset = future.result(wait_s)
            ctx.observe(key, offset)
            done.append([SEND, key, [offset, v]])
            outcomes.append(OK)
        except Exception as exc:
            error = error or exc
            done.append([SEND, key, v])
            outcomes.append(classify(exc, ctx.client.name))
    outcomes += [INFO] * (len(values) - len(futures))
    overdue = any(not f.done() for f in futures)
    if all(o == OK for o in outcomes):
        ctx.record(process, OK, SEND, done)
        return OK, False
    kind = FAIL if all(o == FAIL for o in outcomes) else INFO
    ctx.record(process, kind, SEND, done, describe(error) if error else None)
    return kind, overdue


class QueueClient:
    """One logical process of the queue workload."""

    def __init__(self, ctx: RunContext, pool: ProducerPool, slot: int, process: int) -> None:
        self.ctx, self.pool, self.slot, self.process = ctx, pool, slot, process
        self.poll_keys = ctx.opts.poll_keys_for(slot)
        self.consumer: PollingConsumer | None = None

    @property
    def subscribes(self) -> bool:
        """This process reads as a member of the run's consumer group (--consumer)."""
        return self.ctx.opts.subscribes(self.process)

    def open(self, keys: list[str] | None = None) -> bool:
        if self.ctx.opts.shares:
            try:
                self.consumer = ShareMember(self.ctx)
            except ClientConfigError:
                raise
            except Exception as exc:
                record_failed_member(self.ctx, self.process, exc)
                return False
            return True
        if self.subscribes:
            return self._join()
        try:
            self.consumer = PollingConsumer(self.ctx)
        except Exception as exc:
            record_failed_assign(self.ctx, self.process, keys or self.poll_keys, exc)
            return False
        return self.consumer.assign(self.process, keys or self.poll_keys)

    def _join(self) -> bool:
        try:
            self.consumer = member = GroupMember(self.ctx)
        except ClientConfigError:
            raise
        except Exception as exc:
            record_failed_join(self.ctx, self.process, exc)
            return False
        return member.join(self.process)

    def poll(self) -> str:
        """A poll operation (a member's: with its rebalance and commit; a share member's: with its
        acknowledgements, accepting everything, as the final drain does); opens the consumer first."""
        if self.consumer is None and not self.open():
            return INFO
        if self.ctx.opts.shares:
            return self.consumer.poll(self.process, drain=True)
        return self.consumer.poll(self.process)

    def step(self, rng: random.Random) -> str:
        if self.consumer is None and not self.open():
            return INFO
        if rng.random() < self.ctx.opts.poll_fraction:
            if self.ctx.opts.shares:
                return self.consumer.poll(self.process, rng)
            if self.subscribes:
                return self.consumer.poll(self.process, crash=rng.random() < self.ctx.opts.member_crashes)
            return self.consumer.poll(self.process)
        key = rng.choice(self.ctx.opts.key_names)
        values = self.ctx.next_values(key, rng.randint(1, self.ctx.opts.send_values))
        try:
            producer = self.pool.for_slot(self.slot)
        except ClientConfigError:
            raise  # a setting the client refuses is a harness bug, not an outcome (options.validate)
        except Exception as exc:  # no producer could be built: the values never left
            invoke = [[SEND, key, v] for v in values]
            self.ctx.record(self.process, INVOKE, SEND, invoke)
            self.ctx.record(self.process, FAIL, SEND, invoke, describe(exc))
            return FAIL
        kind, overdue = send(self.ctx, producer, self.process, key, values)
        if kind != OK:
            self.pool.retire_if_broken(self.slot, producer, overdue)
        return kind

    def close(self) -> None:
        if self.consumer is not None:
            if isinstance(self.consumer, ShareMember):
                self.consumer.close(self.process)
            else:
                self.consumer.close()
            self.consumer = None
