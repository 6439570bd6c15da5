"""Every workload by name: what it does, the client each process runs, and the rules it adds to
the options. `--workload`, chaos_run's `workload=` and a scenario's workload all resolve here;
a new workload is its client module and one record below.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.options import ACKS, WorkloadOptions, named
from kafka_chaos.workloads.queue import ProducerPool, QueueClient
from kafka_chaos.workloads.txn import TxnClient, prepare_transactions


class WorkloadClient(Protocol):
    """One logical process of a workload: a step at a time, until closed."""

    process: int
    #: It reads as a member of the run's consumer group; then `poll()` is one poll operation
    #: (the group's drain calls it: workloads/runner.py).
    subscribes: bool

    def step(self, rng: random.Random) -> str: ...

    def poll(self) -> str: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Workload:
    name: str
    does: str
    #: The client of one process: (run context, shared producers, slot, process number).
    client: Callable[[RunContext, ProducerPool, int, int], WorkloadClient]
    #: Its consumers read committed records only (transactions).
    read_committed: bool = False
    #: It cannot run with acks other than all (transactions require it).
    acks_all_only: bool = False
    #: What the cluster needs before the workload's clock starts (bootstrap servers, options, run
    #: id), beyond the topic: the txn workload's ready transaction coordinator.
    prepare: Callable[[str, WorkloadOptions, str], None] | None = None
    #: Its consumers can subscribe as a group (--consumer subscribe, mixed).
    groups: bool = False

    @property
    def isolation_level(self) -> str:
        return "read_committed" if self.read_committed else "read_uncommitted"


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "queue",
            "sends of unique values and polls of them; the final read drains every key",
            lambda ctx, pool, slot, process: QueueClient(ctx, pool, slot, process),
            groups=True,
        ),
        Workload(
            "txn",
            "transactions of sends (and polls), committed or deliberately aborted; read_committed reads",
            lambda ctx, pool, slot, process: TxnClient(ctx, slot, process),
            read_committed=True,
            acks_all_only=True,
            prepare=prepare_transactions,
            groups=True,
        ),
    )
}


def get(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise UsageError(f"unknown workload {name!r}: expected one of {', '.join(WORKLOADS)}") from None


def check_workload(opts: WorkloadOptions) -> WorkloadOptions:
    """The options checked for their workload: UsageError naming the first problem."""
    workload = get(opts.workload)
    if workload.acks_all_only and opts.acks in ACKS and opts.acks != "all":
        raise UsageError(f"the {workload.name} workload needs {named('acks')} all (transactions require it)")
    if opts.consumer != "assign" and not workload.groups:
        raise UsageError(f"the {workload.name} workload takes {named('consumer')} assign only (no consumer groups yet)")
    if opts.member_crashes and workload.name != "queue":
        raise UsageError(f"{named('member_crashes')} applies to the queue workload only")
    return opts.validate()
