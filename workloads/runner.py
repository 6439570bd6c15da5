"""Drive C logical client processes for a time limit, then the final read phase.

Each slot runs in its own thread, paced so that all slots together aim at the target rate.
After the time limit (or a stop request) every slot finishes its operation; then each client
assigns every key from the beginning and polls until each key is read past the highest
offset any operation observed, bounded by the final time limit. Those are ordinary `assign`
and `poll` operations in the history.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from kafka_chaos.harness.errors import KafkaChaosError
from kafka_chaos.history.events import INFO
from kafka_chaos.history.reporter import Reporter
from kafka_chaos.history.tiered import TieredReads
from kafka_chaos.workloads import share
from kafka_chaos.workloads.clients.api import ClientDied
from kafka_chaos.workloads.consumer import PollingConsumer, record_failed_assign
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.queue import ProducerPool
from kafka_chaos.workloads.registry import WorkloadClient, get


@dataclass
class WorkloadSummary:
    operations: int  # completed in the workload phase (the final read's are in final_read_counts)
    counts: dict[str, int]
    workload_s: float
    final_read_s: float
    final_read_complete: bool
    final_read_counts: dict[str, int] = field(default_factory=dict)
    effective_producer_config: dict[str, Any] = field(default_factory=dict)
    #: The first assigning consumer's settings; in a run with none (--consumer subscribe), the first
    #: group member's.
    effective_consumer_config: dict[str, Any] = field(default_factory=dict)
    #: The first group member's settings, when the run's consumers subscribe (subscribe, mixed).
    effective_member_config: dict[str, Any] = field(default_factory=dict)
    #: Producers retired as broken (workloads/producers.py), by reason.
    replaced_producers: dict[str, int] = field(default_factory=dict)
    #: Group members that left by --group-churn (a new one joined for each).
    members_churned: int = 0
    #: Group members that crashed after a poll, before handling it (--member-crashes).
    members_crashed: int = 0
    #: Ok operations/s before, in and between faults: measured from the history after the run
    #: (runs/run.py, checkers/measures/liveness.py).
    liveness: dict[str, Any] | None = None
    #: A group run's coverage: for how much of the workload its members held every key, some key
    #: (checkers/measures/group_coverage.py); None without group members.
    group_coverage: dict[str, Any] | None = None
    #: A tiered run's final read: how many records came from remote storage and how many from
    #: local logs (harness/tiered.py ReadSources); absent from summary.json for other runs.
    tiered_reads: TieredReads | None = None

    @property
    def ops_per_s(self) -> float:
        return self.operations / self.workload_s if self.workload_s > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        out = {**asdict(self), "ops_per_s": round(self.ops_per_s, 1)}
        if out["tiered_reads"] is None:
            del out["tiered_reads"]
        return out


#: What makes one logical process's client: (run context, shared producers, slot, process number).
ClientFactory = Callable[[RunContext, ProducerPool, int, int], WorkloadClient]


class WorkloadCrash(KafkaChaosError):
    """A client thread died of an error the workload does not expect (a harness bug)."""


class FaultSchedule(Protocol):
    """What the runner needs of a nemesis schedule (nemesis/schedule.py), without importing it.

    `finished` is set by a schedule whose faults are a script with an end (a scenario): the
    workload phase then ends with it instead of running out the time limit.
    """

    finished: threading.Event

    def start(self) -> object: ...

    def stop_and_heal(self) -> None: ...


class Runner:
    def __init__(
        self,
        ctx: RunContext,
        progress: Reporter | None = None,
        seed: int | None = None,
        faults: FaultSchedule | None = None,
        client_factory: ClientFactory | None = None,
        before_final: Callable[[], None] | None = None,
    ) -> None:
        """`client_factory` makes each process's client; by default the workload's record's
        (workloads/registry.py). `before_final` is called once every fault is healed, as the
        final read begins."""
        self.ctx = ctx
        self.before_final = before_final
        self.make_client: ClientFactory = (
            client_factory if client_factory is not None else get(ctx.opts.workload).client
        )
        self.faults = faults
        self.progress = progress
        self.seed = seed if seed is not None else random.randrange(2**32)
        self.pool = ProducerPool(ctx)
        self.clients: list[WorkloadClient] = []
        self.deadline = 0.0
        self.final_deadline = 0.0
        self.crashed: BaseException | None = None
        self._churn_lock = threading.Lock()
        self._next_churn = 0.0

    def _rebuild(self, slot: int) -> None:
        old = self.clients[slot]
        old.close()
        self.clients[slot] = self.make_client(self.ctx, self.pool, slot, old.process + self.ctx.opts.concurrency)

    def _main_phase(self, slot: int) -> None:
        rng = random.Random(self.seed + slot)
        interval = self.ctx.opts.concurrency / self.ctx.opts.rate
        next_at = time.monotonic() + rng.random() * interval  # stagger the slots
        ended = self.faults.finished if self.faults is not None else threading.Event()
        while not self.ctx.stop.is_set() and not ended.is_set() and time.monotonic() < self.deadline:
            delay = next_at - time.monotonic()
            if delay > 0 and self.ctx.stop.wait(delay):
                break
            next_at = max(next_at + interval, time.monotonic() - interval)
            outcome = self.clients[slot].step(rng)
            self._check_client()
            if outcome == INFO or self._churn(slot):
                self._rebuild(slot)

    def _churn(self, slot: int) -> bool:
        """--group-churn: whether this slot's member is the one to leave now (a new one joins at
        its next step). The first subscribed slot past the churn time takes it."""
        every = self.ctx.opts.group_churn
        if every <= 0 or not self.clients[slot].subscribes:
            return False
        with self._churn_lock:
            if time.monotonic() < self._next_churn:
                return False
            self._next_churn = time.monotonic() + every
        self.ctx.note_churn()
        return True

    def _check_client(self) -> None:
        """The client library itself gone (the Java driver's process ended) stops the run."""
        why = self.ctx.client.died()
        if why is not None:
            raise ClientDied(why)

    def _final_phase(self, slot: int, targets: dict[str, int]) -> None:
        """Read every key from the beginning until past the targets; a new process after an info.
        A member of the run's group drains with the group instead (`_drain`), a share group's
        until every offset up to the targets is settled (workloads/share.py)."""
        if self.ctx.opts.shares:
            self._drain(slot, targets, self.ctx.share.settled)
            return
        if self.clients[slot].subscribes:
            self._drain(slot, targets)
            return
        self.clients[slot].close()
        # A new consumer reading from the beginning is a new logical process: under the same
        # number its first poll would go back before the old consumer's reference for each key.
        process = self.clients[slot].process + self.ctx.opts.concurrency
        while time.monotonic() < self.final_deadline and not self.ctx.stop.is_set():
            try:
                reader = PollingConsumer(self.ctx)
            except Exception as exc:
                record_failed_assign(self.ctx, process, self.ctx.opts.key_names, exc)
                self._check_client()
                process += self.ctx.opts.concurrency
                continue
            try:
                if reader.assign(process, self.ctx.opts.key_names):
                    while time.monotonic() < self.final_deadline and not self.ctx.stop.is_set():
                        if reader.caught_up(targets):
                            self.caught_up[slot] = True
                            return
                        outcome = reader.poll(process)
                        self._check_client()
                        if outcome == INFO:
                            break
                process += self.ctx.opts.concurrency
            finally:
                reader.close()

    def _drain(self, slot: int, targets: dict[str, int], done: Callable[[dict[str, int]], bool] | None = None) -> None:
        """The group's own final read: the slot's member (a new one when it has none) polls, and
        commits, until some member has read every key past its target (workloads/group.py), or
        until `done`."""
        done = done or self.ctx.group.caught_up
        while time.monotonic() < self.final_deadline and not self.ctx.stop.is_set():
            if done(targets):
                self.caught_up[slot] = True
                return
            outcome = self.clients[slot].poll()
            self._check_client()
            if outcome == INFO:
                self._rebuild(slot)

    def _guarded(self, target: Callable[..., None], slot: int, *args: Any) -> None:
        """A client thread that crashes stops the whole run (the error is raised by run())."""
        try:
            target(slot, *args)
        except BaseException as exc:
            self.crashed = self.crashed or exc
            self.ctx.stop.set()

    def _run_slots(self, target: Callable[..., None], *args: Any) -> None:
        threads = [
            threading.Thread(target=self._guarded, args=(target, slot, *args), name=f"client-{slot}", daemon=True)
            for slot in range(self.ctx.opts.concurrency)
        ]
        for thread in threads:
            thread.start()
        reporter = threading.Thread(target=self._report, args=(threads,), daemon=True)
        reporter.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)  # joins in slices, so Ctrl-C reaches the main thread
        if isinstance(self.crashed, ClientDied):
            raise WorkloadCrash(f"{self.crashed}; the history up to here is kept") from self.crashed
        if self.crashed is not None:
            raise WorkloadCrash(f"a client crashed: {type(self.crashed).__name__}: {self.crashed}") from self.crashed

    def _report(self, threads: list[threading.Thread]) -> None:
        # A reporter with a .tick (harness/progress.py) shows the status line in place or every
        # few seconds; a plain one (print, a logger) hears only events.
        tick = getattr(self.progress, "tick", None)
        if tick is None:
            return
        while any(t.is_alive() for t in threads):
            time.sleep(1.0)
            counts = self.ctx.counts
            ops = counts["ok"] + counts["fail"] + counts["info"]
            elapsed = time.monotonic() - self.started
            phase_end = self.final_deadline if self.in_final else self.deadline
            tick(
                f"[{'final read' if self.in_final else 'workload'}] {elapsed:5.0f} s elapsed, "
                f"{max(0.0, phase_end - time.monotonic()):4.0f} s left at most: {ops} ops "
                f"(ok {counts['ok']}, fail {counts['fail']}, info {counts['info']}), "
                f"{ops / max(elapsed, 1e-9):.0f} ops/s"
            )

    def run(self) -> WorkloadSummary:
        opts = self.ctx.opts
        self.started = time.monotonic()
        self.in_final = False
        self.clients = [self.make_client(self.ctx, self.pool, slot, slot) for slot in range(opts.concurrency)]
        self.caught_up = [False] * opts.concurrency
        self.deadline = self.started + opts.time_limit
        self._next_churn = self.started + opts.group_churn
        interrupted = False
        healed = False
        try:
            if opts.shares:
                self.ctx.share = share.ShareProgress(opts.share_delivery_limit)
                share.prepare_group(self.ctx)
            if self.faults is not None:
                self.faults.start()
            self._run_slots(self._main_phase)
            workload_s = time.monotonic() - self.started
            if self.faults is not None:
                if self.progress:
                    self.progress("healing every fault before the final read")
                self.faults.stop_and_heal()
                healed = True
            workload_counts = dict(self.ctx.counts)
            targets = dict(self.ctx.max_offsets)
            if self.before_final is not None:
                self.before_final()
            self.in_final = True
            self.ctx.phase = "final"
            final_started = time.monotonic()
            self.final_deadline = final_started + opts.final_time_limit
            self._run_slots(self._final_phase, targets)
            final_s = time.monotonic() - final_started
            if opts.shares:
                share.record_offsets(self.ctx)
            complete = all(self.caught_up)
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            self.ctx.stop.set()
            if self.faults is not None and not healed:
                self.faults.stop_and_heal()
            for client in self.clients:
                client.close()
            self.pool.close()
            if interrupted:
                print("workload interrupted; history kept", file=sys.stderr)
        final_counts = {k: v - workload_counts.get(k, 0) for k, v in self.ctx.counts.items()}
        return WorkloadSummary(
            operations=sum(workload_counts.get(t, 0) for t in ("ok", "fail", "info")),
            counts=workload_counts,
            final_read_counts={k: v for k, v in final_counts.items() if v},
            workload_s=workload_s,
            final_read_s=final_s,
            final_read_complete=complete,
            effective_producer_config=self.ctx.effective_producer_config,
            effective_consumer_config=self.ctx.effective_consumer_config or self.ctx.effective_member_config,
            effective_member_config=self.ctx.effective_member_config,
            replaced_producers=dict(self.ctx.replaced_producers),
            members_churned=self.ctx.churned,
            members_crashed=self.ctx.crashed,
        )
