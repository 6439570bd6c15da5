"""The txn workload: transactions of 1 to N micro-operations (sends, optionally polls),
committed or deliberately aborted, read by read_committed consumers.

kafka-python may commit a transaction with a failed batch and its commit/abort can block
without limit while brokers are down (see ../shared/research), so every send is checked
before commit (abort if any failed) and commit and abort run under a watchdog, whatever the
client (workloads/clients/): the others bound their calls themselves, the watchdog is a backstop.
After an aborted transaction the consumer seeks back to where it was, so that the next
`ok` poll continues from the process's reference.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from kafka import KafkaAdminClient, KafkaProducer

from kafka_chaos.harness.admin import raise_producer_epoch
from kafka_chaos.harness.errors import KafkaChaosError
from kafka_chaos.harness.names import transactional_id
from kafka_chaos.history.events import COMMIT, FAIL, INFO, INVOKE, OK, POLL, SEND, TXN
from kafka_chaos.workloads.clients.api import Producer
from kafka_chaos.workloads.clients.kafka_python import producer_config
from kafka_chaos.workloads.consumer import PollingConsumer, record_failed_assign
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.group import GroupMember, next_offsets, record_failed_join
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.outcomes import describe
from kafka_chaos.workloads.producers import close_producer
from kafka_chaos.workloads.stalls import ClientStalls, Hold


class WatchdogTimeout(Exception):
    """A transactional call did not return within the watchdog's limit."""


def with_watchdog(call: Callable[[], Any], timeout_s: float, what: str) -> Any:
    """Run a call that may block forever in a daemon thread; WatchdogTimeout if it does not return."""
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = call()
        except BaseException as exc:
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
    it here, outside the history, as the topic is created before it. It speaks kafka-python
    whatever the run's client: readiness is the cluster's, not the client's."""
    deadline = time.monotonic() + timeout_s
    while True:
        producer = None
        try:
            producer = KafkaProducer(
                bootstrap_servers=bootstrap_servers,
                transactional_id=f"kafka-chaos-{run_id}-prepare",
                client_id=f"kafka-chaos-{run_id}-prepare",
                **producer_config(opts),
            )
            producer.init_transactions()
            break
        except Exception as exc:  # a coordinator not ready yet: timeouts, not-coordinator
            if time.monotonic() >= deadline:
                raise KafkaChaosError(
                    f"the transaction coordinator was not ready within {timeout_s:g} s: {describe(exc)}"
                ) from exc
            time.sleep(0.5)
        finally:
            if producer is not None:
                close_producer(producer)
    if opts.txn_start_epoch is not None:
        with KafkaAdminClient(bootstrap_servers=bootstrap_servers, client_id=f"kafka-chaos-{run_id}-epochs") as admin:
            for process in range(opts.concurrency):
                raise_producer_epoch(admin, transactional_id(run_id, process), opts.txn_start_epoch)


def rewind(positions: dict[str, int], done: list[list[Any]]) -> dict[str, int]:
    """Where an aborted transaction's consumer goes back to: each key's position when it began,
    and a key a group gave the member during the transaction (its polls joined a rebalance) to
    the first offset the transaction read of it; otherwise the records it read would be skipped,
    which a first version did (the checker reported them as lost writes)."""
    back = dict(positions)
    for op in done:
        if op[0] == POLL:
            for key, records in op[1].items():
                if records and key not in back:
                    back[key] = records[0][0]
    return back


class TxnClient:
    """One logical process of the txn workload: a transactional producer and a consumer."""

    def __init__(self, ctx: RunContext, slot: int, process: int) -> None:
        self.ctx, self.slot, self.process = ctx, slot, process
        self.poll_keys = ctx.opts.poll_keys_for(slot)
        self.producer: Producer | None = None
        self.consumer: PollingConsumer | None = None
        #: Why the last transaction did not commit (its `fail` or `info` error).
        self.error: str | None = None

    @property
    def subscribes(self) -> bool:
        """Its consumer is a member of the run's group (--consumer): the offsets of what a
        transaction polled are committed in that transaction (sendOffsetsToTransaction)."""
        return self.ctx.opts.subscribes(self.process)

    def open(self, keys: list[str] | None = None) -> bool:
        keys = keys or self.poll_keys
        try:
            self.consumer = GroupMember(self.ctx) if self.subscribes else PollingConsumer(self.ctx)
            self.producer = producer = self.ctx.client.producer(
                f"kafka-chaos-{self.ctx.run_id}-t{self.process}", transactional_id(self.ctx.run_id, self.process)
            )
            self.ctx.note_config(producer=producer)
            timeout_s = self.ctx.opts.txn_timeout_s
            with_watchdog(lambda: producer.init_transactions(timeout_s), timeout_s + 1, "init_transactions")
        except Exception as exc:
            if self.subscribes:
                record_failed_join(self.ctx, self.process, exc)
            else:
                record_failed_assign(self.ctx, self.process, keys, exc)
            return False
        if isinstance(self.consumer, GroupMember):
            return self.consumer.join(self.process)
        return self.consumer.assign(self.process, keys)

    def poll(self) -> str:
        """A poll outside any transaction, by a member: the group's drain (workloads/runner.py)."""
        if (self.producer is None or self.consumer is None) and not self.open():
            return INFO
        return self.consumer.poll(self.process)

    def step(self, rng: random.Random) -> str:
        if (self.producer is None or self.consumer is None) and not self.open():
            return INFO
        opts = self.ctx.opts
        micro: list[list[Any]] = []
        for _ in range(rng.randint(opts.txn_min_ops, opts.txn_max_ops)):
            if rng.random() < opts.poll_fraction:
                micro.append([POLL])
            else:
                key = rng.choice(opts.key_names)
                micro.append([SEND, key, self.ctx.next_values(key, 1)[0]])
        abort = rng.random() < opts.txn_abort_fraction
        # A hold the nemesis asked for (workloads/stalls.py) is taken by a transaction with a
        # second send to make after the first is acknowledged.
        hold = self.ctx.stalls.take(self.process) if sum(op[0] == SEND for op in micro) >= 2 else None
        return self.transaction(micro, abort, hold)

    def transaction(self, micro: list[list[Any]], abort: bool, hold: Hold | None = None) -> str:
        """A `txn` operation; for a member, then the rebalance its polls saw (a `subscribe`) and
        the offsets the transaction committed for the group (a `commit` of the txn's outcome).
        `hold`: the process stands still for its seconds once the first send is acknowledged."""
        sent: dict[str, int] = {}
        self.error, outcome = None, INFO
        try:
            outcome = self._transaction(micro, abort, sent, hold)
        finally:
            if hold is not None:
                ClientStalls.finish(hold, outcome, self.error)
        if isinstance(self.consumer, GroupMember):
            self.consumer.record_rebalance(self.process)
            if sent:
                self.ctx.record(self.process, INVOKE, COMMIT, sent)
                self.ctx.record(self.process, outcome, COMMIT, sent)
        return outcome

    def _transaction(self, micro: list[list[Any]], abort: bool, sent: dict[str, int], hold: Hold | None) -> str:
        ctx, process, producer, consumer = self.ctx, self.process, self.producer, self.consumer
        ctx.record(process, INVOKE, TXN, micro)
        done: list[list[Any]] = []
        futures = []
        try:
            # Where to seek back to after an abort. position() talks to brokers too: an error
            # here (UnknownBrokerIdError during a fault) ends the operation info, not the run.
            positions = consumer.positions()
            if isinstance(consumer, GroupMember):  # unknown yet: it resumes at the group's commit anyway
                positions = {key: offset for key, offset in positions.items() if offset >= 0}
            producer.begin_transaction()
            for op in micro:
                if op[0] == POLL:
                    done.append([POLL, consumer.poll_once()])
                else:
                    _, key, value = op
                    futures.append(producer.send(key, value))
                    done.append([SEND, key, value])
                    if hold is not None and len(futures) == 1:
                        with contextlib.suppress(Exception):  # a failed send is counted below, as any
                            futures[0].result(ctx.opts.delivery_timeout_ms / 1000 + 5)
                        ctx.stop.wait(hold.seconds)
            failed = None
            for future, op in zip(futures, [d for d in done if d[0] == SEND], strict=True):
                try:
                    op[2] = [future.result(ctx.opts.delivery_timeout_ms / 1000 + 5), op[2]]
                except Exception as exc:
                    failed = failed or exc
            timeout_s = ctx.opts.txn_timeout_s
            offsets = {k: o for op in done if op[0] == POLL for k, o in next_offsets(op[1]).items()}
            if (
                failed is None
                and not abort
                and offsets
                and isinstance(consumer, GroupMember)
                and ctx.opts.commit == "sync"
            ):
                sent.update(offsets)  # from here the commit's outcome is the transaction's
                with_watchdog(
                    lambda: producer.send_offsets(offsets, consumer.consumer, timeout_s), timeout_s + 1, "send_offsets"
                )
            if failed is not None or abort:
                with_watchdog(lambda: producer.abort_transaction(timeout_s), timeout_s + 1, "abort_transaction")
                consumer.seek(rewind(positions, done))
                reason = describe(failed) if failed is not None else "deliberate abort"
                self.error = reason
                ctx.record(process, FAIL, TXN, done, reason)
                return FAIL
            with_watchdog(lambda: producer.commit_transaction(timeout_s), timeout_s + 1, "commit_transaction")
        except Exception as exc:  # commit/abort outcome unknown: a new client follows
            self.error = describe(exc)
            ctx.record(process, INFO, TXN, done or micro, self.error)
            return INFO
        for op in done:
            if op[0] == SEND and isinstance(op[2], list):
                ctx.observe(op[1], op[2][0])
            elif op[0] == POLL and isinstance(consumer, GroupMember):
                ctx.group.note(op[1])  # delivered by the group: its drain need not read it again
        ctx.record(process, OK, TXN, done)
        return OK

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None
        if self.producer is not None:
            producer, self.producer = self.producer, None
            # close() can block like commit does; never let it hold the run.
            threading.Thread(target=producer.close, args=(2.0,), daemon=True).start()
