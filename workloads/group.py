"""Consumers that read as one consumer group (`--consumer subscribe|mixed`): a member's
`subscribe`, `poll` and `commit` operations, the group's start, and how far the group has read.

The history records what an application would see (../shared/history-format.md): joining is a
`subscribe` operation holding no keys yet; every rebalance the member sees inside a poll is
recorded right after that poll as a `subscribe` operation carrying the keys it holds now; with
`--commit sync` each poll that returned records is followed by a `commit` operation of
{key: last offset read + 1} (Kafka's convention: the next offset to read).

A run's group starts at offset 0 of every key (`start_group`): committed before the workload,
so that `--auto-offset-reset none` keeps its meaning (a committed offset outside the log is an
error, not a silent jump) and a new member resumes where the group was, as in production.

The final read of a group is its own drain: members keep polling (and committing) until every
key has been read by some member past the highest offset any operation observed (`caught_up`).
So `unseen` means what it means to an application: acknowledged, never delivered by the group.
"""

from __future__ import annotations

import itertools

from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from kafka_chaos.harness.names import group_id
from kafka_chaos.history.events import COMMIT, INFO, INVOKE, OK, POLL, SUBSCRIBE
from kafka_chaos.workloads.clients.api import Group
from kafka_chaos.workloads.clients.settings import consumer_timeout_ms
from kafka_chaos.workloads.consumer import PollingConsumer
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.outcomes import classify_commit, describe

_numbers = itertools.count()
#: The error of a poll after which the member crashed (--member-crashes).
CRASHED = "member crashed before handling what it polled (--member-crashes)"


def start_group(bootstrap_servers: str, opts: WorkloadOptions, run_id: str) -> None:
    """Commit offset 0 of every key for the run's group, before the workload's clock starts.

    Outside the history, as the topic's creation is; it speaks kafka-python whatever the run's
    client (a group's start is the cluster's, not the client's). A consumer that assigns and
    commits without joining is allowed while the group has no members."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap_servers,
        group_id=group_id(run_id),
        enable_auto_commit=False,
        client_id=f"kafka-chaos-{run_id}-group-start",
        request_timeout_ms=consumer_timeout_ms(opts),
    )
    try:
        parts = [TopicPartition(opts.topic, p) for p in range(opts.keys)]
        consumer.assign(parts)
        consumer.commit({tp: OffsetAndMetadata(0, "", -1) for tp in parts}, timeout_ms=30000)
    finally:
        consumer.close(autocommit=False)


def next_offsets(read: dict[str, list[list]]) -> dict[str, int]:
    """What to commit after a poll: {key: last offset it read + 1} (Kafka's next offset to read)."""
    return {key: records[-1][0] + 1 for key, records in read.items() if records}


def record_failed_join(ctx: RunContext, process: int, exc: BaseException) -> None:
    """A `subscribe` whose client could not even be built: its outcome is unknown."""
    ctx.record(process, INVOKE, SUBSCRIBE, [])
    ctx.record(process, INFO, SUBSCRIBE, [], describe(exc))


class GroupMember(PollingConsumer):
    """A consumer that subscribes to the run's topic as a member of the run's group."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        group = Group(group_id(ctx.run_id), auto_commit=ctx.opts.commit == "auto")
        self.consumer = ctx.client.consumer(f"kafka-chaos-{ctx.run_id}-m{next(_numbers)}", ctx.isolation_level, group)
        ctx.note_config(member=self.consumer)
        self.keys: list[str] = []

    def join(self, process: int) -> bool:
        """A `subscribe` operation: join the group; it holds no keys until a rebalance gives some."""
        self.ctx.record(process, INVOKE, SUBSCRIBE, [])
        try:
            self.consumer.subscribe([self.ctx.opts.topic])
        except Exception as exc:
            self.ctx.record(process, INFO, SUBSCRIBE, [], describe(exc))
            return False
        self.ctx.record(process, OK, SUBSCRIBE, [])
        return True

    def poll(self, process: int, crash: bool = False) -> str:
        """A `poll` operation, then the rebalance it saw (a `subscribe`), then with --commit sync
        a `commit` of what it returned; returns the outcome that decides the process's fate.

        `crash` (--member-crashes): the member dies after a poll that returned records, before
        handling them: the poll ends `info` with nothing delivered (the application never saw
        the records), and the runner closes the member as an application's `finally` would."""
        read = self.invoke_poll(process)
        if read is None:
            return INFO
        if crash and any(read.values()):
            unhandled = sum(len(records) for records in read.values())
            self.ctx.record(process, INFO, POLL, [[POLL]], f"{CRASHED}: {unhandled} records unhandled")
            self.ctx.note_crash()
            return INFO
        held = self.consumer.rebalanced()
        if held is not None:
            self.put_back(read, held)
        self.ctx.record(process, OK, POLL, [[POLL, read]])
        if held is not None:
            self.record_subscribe(process, held)
        self.ctx.group.note(read)
        offsets = next_offsets(read)
        if self.ctx.opts.commit == "sync" and offsets:
            return self.commit(process, offsets)
        return OK

    def record_rebalance(self, process: int) -> None:
        """The rebalance the last polls saw, if any: a `subscribe` holding the keys held now."""
        held = self.consumer.rebalanced()
        if held is not None:
            self.record_subscribe(process, held)

    def record_subscribe(self, process: int, held: list[str]) -> None:
        self.keys = held
        self.ctx.record(process, INVOKE, SUBSCRIBE, held)
        self.ctx.record(process, OK, SUBSCRIBE, held)

    def put_back(self, read: dict[str, list[list]], held: list[str]) -> None:
        """The records of the keys a rebalance inside this poll just gave the member, taken out of
        `read` and sought back to, so that the next poll returns them. The rebalance happened
        before they were fetched, but the history can only show it after the poll: this way the
        member's first poll of a new key comes after the `subscribe` that gave it, and shows the
        offset its new owner started from (`commit-lost`, ../shared/anomalies.md). A key that
        cannot be sought back keeps its records here."""
        for key in [k for k, records in read.items() if records and k in held and k not in self.keys]:
            try:
                self.consumer.seek(key, read[key][0][0])
            except Exception:
                continue
            del read[key]

    def commit(self, process: int, offsets: dict[str, int]) -> str:
        """A `commit` operation: fail when the group refused it (a rebalance took the keys),
        info when its outcome is unknown (workloads/outcomes.py)."""
        self.ctx.record(process, INVOKE, COMMIT, offsets)
        try:
            self.consumer.commit(offsets)
        except Exception as exc:
            kind = classify_commit(exc, self.ctx.client.name)
            self.ctx.record(process, kind, COMMIT, offsets, describe(exc))
            return kind  # a refused commit leaves the member's state known; an unknown one rebuilds it
        self.ctx.record(process, OK, COMMIT, offsets)
        return OK
