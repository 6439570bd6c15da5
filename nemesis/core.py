"""The Nemesis: applies faults to a live cluster, records each in the history, heals them all.

Every fault and heal is an operation of process "nemesis": an invoke with the fault and its
target, then `ok` with the nodes and what was done, `fail` when the target did not exist
(nothing was done), or `info` when the fault broke half way (then heal_all is the way back).
What a fault does, and to which nodes, is the fault's own (nemesis/faults.py); the nemesis keeps
the open faults, what is in place and must be healed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.history.events import CLIENT, FAIL, INFO, INVOKE, NEMESIS, OK, OPERATOR
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.history.reporter import Reporter
from kafka_chaos.nemesis.fault import Fault
from kafka_chaos.nemesis.faults import BY_NAME, EXIT, FINAL, NAMES, RESUME, START, STARTS, named_ends
from kafka_chaos.nemesis.partition import renew
from kafka_chaos.nemesis.streams import stream
from kafka_chaos.nemesis.targets import TargetError

#: The nemesis operation that holds a workload process still (hold_client).
PAUSE_CLIENT = "pause-client"


class Holds(Protocol):
    """What the nemesis asks of the workload's processes to hold one still: the run's
    workloads/stalls.py ClientStalls (the nemesis does not import the workload: they share a floor)."""

    def ask(self, seconds: float) -> Any: ...

    def withdraw(self, hold: Any) -> bool: ...


class Nemesis:
    def __init__(
        self,
        cluster: KafkaCluster,
        history: HistoryWriter | None = None,
        seed: int | None = None,
        reporter: Reporter | None = None,
        clients: Holds | None = None,
    ) -> None:
        self.cluster = cluster
        self.history = history
        #: The workload's processes, to hold one still (hold_client); None: the run has none here.
        self.clients = clients
        #: Told of every completed nemesis operation, one line each (live progress).
        self.reporter = reporter
        self.rng = stream(seed, "targets")
        #: The open faults: undoing fault -> the aliases it owes (start -> the nodes left down).
        self.open: dict[str, set[str]] = {}
        #: A schedule's veto, asked once a fault's nodes are resolved and before it acts: a reason
        #: refuses the fault (a recorded `fail`: nothing was done), None lets it act. The
        #: overlapping mix refuses a second disk fault on a node (nemesis/overlap.py DiskOnce).
        self.refuse: Callable[[str, list[str]], str | None] | None = None
        #: The partition in place (its grudge and port), installed again when a node starts.
        self.cut: tuple[dict[str, set[str]], int | None] | None = None
        self._lock = threading.Lock()

    def _record(self, type: str, f: str, value: Any, error: str | None = None) -> None:
        if self.history is not None:
            self.history.write(NEMESIS, type, f, value, error)
        if self.reporter is not None and type != "invoke":
            what = value.get("nodes") or value.get("target") if isinstance(value, dict) else value
            shown = ",".join(map(str, what)) if isinstance(what, list) else str(what or "")
            self.reporter(" ".join(p for p in ("nemesis:", f, shown, type) if p) + (f" ({error})" if error else ""))

    def run(self, fault: str, target: str = "random", **options: Any) -> dict[str, Any]:
        """Apply one fault now, with its own options (a partition's `shape`); returns the completion
        value recorded in the history."""
        if fault not in NAMES:  # nemesis/faults.py
            raise ValueError(f"unknown fault {fault!r}: expected one of {', '.join(NAMES)}")
        kind = BY_NAME[fault]
        args = kind.args(options)
        with self._lock:
            asked = {**kind.asked(target, args), **named_ends(fault)}  # how it ends, for readers of the history
            self._record("invoke", fault, asked)
            try:
                aim = kind.aim(self, target, args)
            except Exception as exc:  # nothing was done: a recorded failure, never a crash
                error = str(exc) if isinstance(exc, TargetError) else f"{type(exc).__name__}: {exc}"
                self._record(FAIL, fault, asked, error)
                return {**asked, "error": error}
            refused = self.refuse(fault, [n.alias for n in aim.nodes]) if self.refuse is not None else None
            if refused is not None:
                self._record(FAIL, fault, asked, refused)
                return {**asked, "error": refused}
            try:
                done = kind.apply(self, aim, args)
                if fault in STARTS and aim.nodes:
                    renew(self)
            except Exception as exc:  # recorded; heal_all restores the cluster
                nodes = [n.alias for n in aim.nodes]
                self._record(INFO, fault, {**asked, "nodes": nodes}, f"{type(exc).__name__}: {exc}")
                return {**asked, "error": str(exc)}
            value = {**asked, **done}
            self._record(OK, fault, value)
            return value

    def unreached(self, fault: str, target: str, why: str, **options: Any) -> dict[str, Any]:
        """Record a scripted step that did not act (its guard not reached, a name not bound): its
        fault, failed with the reason, so that every reader sees a fault that did nothing."""
        kind = BY_NAME[fault]
        with self._lock:
            asked = {**kind.asked(target, kind.args(options)), **named_ends(fault)}
            self._record("invoke", fault, asked)
            self._record(FAIL, fault, asked, why)
            return {**asked, "error": why}

    def out_of_reach(self) -> set[str]:
        """The nodes a fault holds down or paused now (start or resume owes them): what a guard's
        question is not asked of, since a paused broker leaves it waiting out its timeouts."""
        with self._lock:
            return set(self.open.get(START.name, set())) | set(self.open.get(RESUME.name, set()))

    def book(self, fault: Fault, aliases: Iterable[str]) -> None:
        """What `fault` changed on these nodes: an undoing fault (and one that does its work) no
        longer owes them; a fault that stays in place makes its undoer owe them."""
        aliases = set(aliases)
        for undoer in (fault.name, *fault.closes):
            self.open.get(undoer, set()).difference_update(aliases)
        if fault.undone_by is not None:
            self.open.setdefault(fault.undone_by, set()).update(aliases)

    def act(self, f: str, value: dict[str, Any], action: Callable[[], Any]) -> dict[str, Any]:
        """An operator's action that is not a node fault (a forced election, ...), recorded like one,
        its effect `operator`: it takes no node down and cuts none off."""
        value = {**value, "effect": OPERATOR}
        with self._lock:
            self._record("invoke", f, value)
            try:
                action()
            except Exception as exc:  # recorded; the caller decides what it means
                self._record(INFO, f, value, f"{type(exc).__name__}: {exc}")
                return {**value, "error": str(exc)}
            self._record(OK, f, value)
            return value

    def hold_client(self, seconds: float, within_s: float = 30.0) -> dict[str, Any]:
        """Hold one of the workload's processes still for `seconds` inside its next transaction
        (workloads/stalls.py), recorded as `pause-client`, its effect `client`: no node is touched.
        The operation lasts until that transaction ends; its completion names the process and what
        the transaction came to (`txn_outcome`, `txn_error`). `fail` when no process took the hold
        within `within_s`. The lock is not held meanwhile: other faults go on."""
        if self.clients is None:
            raise ValueError("pause-client: this run's workload takes no holds")
        value: dict[str, Any] = {"target": "txn-process", "seconds": seconds, "effect": CLIENT}
        hold = self.clients.ask(seconds)
        with self._lock:
            self._record(INVOKE, PAUSE_CLIENT, value)
        if not hold.taken.wait(within_s) and self.clients.withdraw(hold):
            why = f"no workload process took the hold within {within_s:g} s"
            with self._lock:
                self._record(FAIL, PAUSE_CLIENT, value, why)
            return {**value, "error": why}
        ended = hold.done.wait(seconds + within_s + 120)
        value = {**value, "process": hold.process, "txn_outcome": hold.outcome, "txn_error": hold.error}
        with self._lock:
            if not ended:
                why = "the held process's transaction did not end"
                self._record(INFO, PAUSE_CLIENT, value, why)
                return {**value, "error": why}
            self._record(OK, PAUSE_CLIENT, value)
        return value

    def exited(self, alias: str, stopped: Callable[[str], bool], detail: dict[str, Any]) -> bool:
        """Record that `alias`'s process ended with no fault owing it (nemesis/exits.py), when,
        asked again under the lock (no fault in progress), no fault owes it and `stopped(alias)`
        still holds; `start` owes it from then on. Whether it was recorded."""
        with self._lock:
            if alias in self.open.get(START.name, ()) or not stopped(alias):
                return False
            value = {"target": alias, **named_ends(EXIT), "nodes": [alias]}
            self._record(INVOKE, EXIT, value)
            self._record(OK, EXIT, {**value, **detail})
            self.open.setdefault(START.name, set()).add(alias)
            return True

    def heal_all(self) -> None:
        """Undo every fault still in place: each undoing fault that owes nodes, in the table's
        order (thaw, start, then the network). Safe to call twice. The nodes it starts are not cut
        off again (partition.py `renew`): the network heals right after."""
        self.cut = None
        for undo in FINAL:
            if self.open.get(undo.name):
                self.run(undo.name)
