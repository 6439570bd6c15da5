"""The txn workload: transactions of 1 to N micro-operations (sends, optionally polls),
committed or deliberately aborted, read by read_committed consumers.

kafka-python may commit a transaction with a failed batch and its commit/abort can block
without limit while brokers are down (see ../shared/research), so every send future is
checked before commit (abort if any failed) and commit and abort run under a watchdog.
After an aborted transaction the consumer seeks back to where it was, so that the next
`ok` poll continues from the process's reference.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

from kafka import KafkaProducer

from kafka_chaos.harness.errors import KafkaChaosError
from kafka_chaos.harness.history import FAIL, INFO, OK
from kafka_chaos.workloads.consumer import PollingConsumer, record_failed_assign, topic_partition
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.outcomes import describe
from kafka_chaos.workloads.producers import close_producer
from kafka_chaos.workloads.values import encode


class WatchdogTimeout(Exception):
    """A transactional call did not return within the watchdog's limit."""


def with_watchdog(call: Callable[[], Any], timeout_s: float, what: str) -> Any:
    """Run a call that may block forever in a daemon thread; WatchdogTimeout if it does not return."""
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = call()
        except BaseException as exc:  # noqa: BLE001
            result["error"] = exc

    thread = threading.Thread(target=target, name=f"watchdog-{what}", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise WatchdogTimeout(f"{what} did not return within {timeout_s:g} s")
    if "error" in result:
        raise result["error"]
    return result.get("value")


def prepare_transactions(bootstrap_servers: str, opts: WorkloadOptions, run_id: str, timeout_s: float = 90.0) -> None:
    """Make a fresh cluster's transaction coordinator ready before the workload's clock starts.

    The first transactional producer of a cluster makes Kafka create `__transaction_state` (50
    partitions); until its partitions have leaders every `init_transactions` times out. On a
    loaded machine that took longer than a 10 s run: every process spent the workload phase
    timing out (a CI run saw 8 `assign` infos and no transaction at all). One producer waits for
    it here, outside the history, as the topic is created before it."""
    deadline = time.monotonic() + timeout_s
    while True:
        producer = None
        try:
            producer = KafkaProducer(
                bootstrap_servers=bootstrap_servers, transactional_id=f"kafka-chaos-{run_id}-prepare",
                client_id=f"kafka-chaos-{run_id}-prepare", **opts.producer_config(),
            )  # fmt: skip
            producer.init_transactions()
            return
        except Exception as exc:  # noqa: BLE001 (a coordinator not ready yet: timeouts, not-coordinator)
            if time.monotonic() >= deadline:
                raise KafkaChaosError(
                    f"the transaction coordinator was not ready within {timeout_s:g} s: {describe(exc)}"
                ) from exc
            time.sleep(0.5)
        finally:
            if producer is not None:
                close_producer(producer)


class TxnClient:
    """One logical process of the txn workload: a transactional producer and a consumer."""

    def __init__(self, ctx: RunContext, slot: int, process: int) -> None:
        self.ctx, self.slot, self.process = ctx, slot, process
        self.poll_keys = ctx.opts.poll_keys_for(slot)
        self.producer: KafkaProducer | None = None
        self.consumer: PollingConsumer | None = None

    def open(self, keys: list[str] | None = None) -> bool:
        keys = keys or self.poll_keys
        try:
            self.consumer = PollingConsumer(self.ctx)
            self.producer = KafkaProducer(
                bootstrap_servers=self.ctx.bootstrap_servers,
                transactional_id=f"kafka-chaos-{self.ctx.run_id}-{self.process}",
                client_id=f"kafka-chaos-{self.ctx.run_id}-t{self.process}",
                **self.ctx.opts.producer_config(),
            )
            self.ctx.note_producer_config(self.producer)
            with_watchdog(self.producer.init_transactions, self.ctx.opts.txn_timeout_s, "init_transactions")
        except Exception as exc:  # noqa: BLE001
            record_failed_assign(self.ctx, self.process, keys, exc)
            return False
        return self.consumer.assign(self.process, keys)

    def step(self, rng: random.Random) -> str:
        if (self.producer is None or self.consumer is None) and not self.open():
            return INFO
        opts = self.ctx.opts
        micro: list[list[Any]] = []
        for _ in range(rng.randint(1, opts.txn_max_ops)):
            if rng.random() < opts.poll_fraction:
                micro.append(["poll"])
            else:
                key = rng.choice(opts.key_names)
                micro.append(["send", key, self.ctx.next_values(key, 1)[0]])
        return self.transaction(micro, abort=rng.random() < opts.txn_abort_fraction)

    def transaction(self, micro: list[list[Any]], abort: bool) -> str:
        ctx, process, producer, consumer = self.ctx, self.process, self.producer, self.consumer
        ctx.record(process, "invoke", "txn", micro)
        done: list[list[Any]] = []
        futures = []
        try:
            # Where to seek back to after an abort. position() talks to brokers too: an error
            # here (UnknownBrokerIdError during a fault) ends the operation info, not the run.
            positions = {k: consumer.consumer.position(topic_partition(k)) for k in consumer.keys}
            producer.begin_transaction()
            for op in micro:
                if op[0] == "poll":
                    done.append(["poll", consumer.poll_once()])
                else:
                    _, key, value = op
                    tp = topic_partition(key)
                    future = producer.send(tp.topic, value=encode(value), partition=tp.partition)
                    futures.append(future)
                    done.append(["send", key, value])
            failed = None
            for future, op in zip(futures, [d for d in done if d[0] == "send"], strict=True):
                try:
                    op[2] = [future.get(timeout=ctx.opts.delivery_timeout_ms / 1000 + 5).offset, op[2]]
                except Exception as exc:  # noqa: BLE001
                    failed = failed or exc
            if failed is not None or abort:
                with_watchdog(producer.abort_transaction, ctx.opts.txn_timeout_s, "abort_transaction")
                for key, position in positions.items():
                    consumer.consumer.seek(topic_partition(key), position)
                reason = describe(failed) if failed is not None else "deliberate abort"
                ctx.record(process, FAIL, "txn", done, reason)
                return FAIL
            with_watchdog(producer.commit_transaction, ctx.opts.txn_timeout_s, "commit_transaction")
        except Exception as exc:  # noqa: BLE001 (commit/abort outcome unknown: a new client follows)
            ctx.record(process, INFO, "txn", done or micro, describe(exc))
            return INFO
        for op in done:
            if op[0] == "send" and isinstance(op[2], list):
                ctx.observe(op[1], op[2][0])
        ctx.record(process, OK, "txn", done)
        return OK

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None
        if self.producer is not None:
            producer, self.producer = self.producer, None
            # close() can block like commit does; never let it hold the run.
            threading.Thread(target=close_producer, args=(producer, 2.0), daemon=True).start()
