"""The Nemesis: applies faults to a live cluster, records each in the history, heals them all.

Every fault and heal is an operation of process "nemesis": an invoke with the fault and its
target, then `ok` with the nodes and what was done, `fail` when the target did not exist
(nothing was done), or `info` when the fault broke half way (then heal_all is the way back).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.config import EXTERNAL_PORT, INTERNAL_PORT
from kafka_chaos.history.events import FAIL, INFO, NEMESIS, OK
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.nemesis import partition as net
from kafka_chaos.nemesis.faults import BY_NAME, DOWN, NAMES, PAUSED, THAWED, UP, named_ends
from kafka_chaos.nemesis.stall import END_TXN, WRITE_TXN_MARKERS, stall
from kafka_chaos.nemesis.targets import TargetError, resolve
from kafka_chaos.nemesis.unflushed import lose_unflushed

#: The faults that hold connections open now (nemesis/stall.py): which request, on which listener.
HOLDS = {"hold-endtxn": (END_TXN, EXTERNAL_PORT), "hold-markers": (WRITE_TXN_MARKERS, INTERNAL_PORT)}


class Nemesis:
    def __init__(
        self,
        cluster: KafkaCluster,
        history: HistoryWriter | None = None,
        seed: int | None = None,
        observe: Callable[[str], None] | None = None,
    ) -> None:
        self.cluster = cluster
        self.history = history
        #: Told of every completed nemesis operation, one line each (live progress).
        self.observe = observe
        self.rng = random.Random(seed)
        self.killed: set[str] = set()
        self.paused: set[str] = set()
        self.partitioned = False
        self._lock = threading.Lock()

    def _record(self, type: str, f: str, value: Any, error: str | None = None) -> None:
        if self.history is not None:
            self.history.write(NEMESIS, type, f, value, error)
        if self.observe is not None and type != "invoke":
            what = value.get("nodes") or value.get("target") if isinstance(value, dict) else value
            shown = ",".join(map(str, what)) if isinstance(what, list) else str(what or "")
            self.observe(" ".join(p for p in ("nemesis:", f, shown, type) if p) + (f" ({error})" if error else ""))

    def run(self, fault: str, target: str = "random", shape: str = "isolate") -> dict[str, Any]:
        """Apply one fault now; returns the completion value recorded in the history."""
        if fault not in NAMES:  # nemesis/faults.py
            raise ValueError(f"unknown fault {fault!r}: expected one of {', '.join(NAMES)}")
        with self._lock:
            asked: dict[str, Any] = {"target": target} if fault != "heal" else {}
            if fault == "partition":
                asked["shape"] = shape
            asked.update(named_ends(fault))  # how it ends, for readers of the history (nemesis/faults.py)
            self._record("invoke", fault, asked)
            try:
                cut = self._resolve_cut(target) if fault == "partition" and shape == "cut" else None
                nodes = self._nodes_of(cut) if cut is not None else self._targets(fault, target)
            except Exception as exc:  # noqa: BLE001 (nothing was done: a recorded failure, never a crash)
                error = str(exc) if isinstance(exc, TargetError) else f"{type(exc).__name__}: {exc}"
                self._record(FAIL, fault, asked, error)
                return {**asked, "error": error}
            try:
                done = self._apply(fault, nodes, shape, cut)
            except Exception as exc:  # noqa: BLE001 (recorded; heal_all restores the cluster)
                self._record(INFO, fault, {**asked, "nodes": [n.alias for n in nodes]}, f"{type(exc).__name__}: {exc}")
                return {**asked, "error": str(exc)}
            value = {**asked, **done}
            self._record(OK, fault, value)
            return value

    def _nodes_of(self, grudge: net.Grudge) -> list:
        return sorted({self.cluster.node(a) for a in grudge}, key=lambda n: n.node_id)

    def _targets(self, fault: str, target: str) -> list:
        if fault == "heal":
            return list(self.cluster.nodes)
        if fault in ("start", "resume") and target == "random":
            pool = self.killed if fault == "start" else self.paused
            if not pool:
                raise TargetError(f"{fault}: no node is {'down' if fault == 'start' else 'paused'}")
            return [self.cluster.node(alias) for alias in sorted(pool)]
        return resolve(self.cluster, target, self.rng)

    def _resolve_cut(self, target: str) -> net.Grudge:
        """`A|B;C|D`: each side a target of its own (nemesis/targets.py), every pair cut both ways."""
        pairs = []
        for part in target.split(";"):
            sides = part.split("|")
            if len(sides) != 2 or not all(s.strip() for s in sides):
                raise TargetError(f"malformed cut {part!r}: expected SIDE|SIDE, e.g. leader:chaos/0|controller")
            a, b = (resolve(self.cluster, side.strip(), self.rng) for side in sides)
            pairs.append(([n.alias for n in a], [n.alias for n in b]))
        return net.cut(pairs)

    def _apply(self, fault: str, nodes: list, shape: str, cut: net.Grudge | None = None) -> dict[str, Any]:
        aliases = [n.alias for n in nodes]
        record = BY_NAME[fault]
        if record.act is not None:  # a fault on single nodes (nemesis/faults.py)
            for n in nodes:
                record.act(n)
                self._note(n.alias, record.leaves)
        elif fault == "lose-unflushed":
            cuts = []
            for n in nodes:
                cuts += [{"node": n.alias, **t.as_json()} for t in lose_unflushed(n) if t.bytes_removed]
                self.killed.discard(n.alias)
            return {"nodes": aliases, "truncated": cuts}
        elif fault == "partition":
            all_aliases = [n.alias for n in self.cluster.nodes]
            victim = aliases[0] if shape == "isolate" else None
            grudge = cut if cut is not None else net.shape(shape, all_aliases, self.rng, victim)
            net.apply(self.cluster.nodes, grudge, self.cluster.network.name)
            self.partitioned = True
            return {"nodes": aliases, "grudge": {k: sorted(v) for k, v in grudge.items() if v}}
        elif fault == "stall" or fault in HOLDS:
            api, port = HOLDS.get(fault, (None, EXTERNAL_PORT))
            held = stall(nodes, api, port)
            self.partitioned = True
            return {"nodes": aliases, "connections": held}
        elif fault == "heal":
            healed = net.heal(self.cluster.nodes)
            self.partitioned = False
            return {"nodes": healed}
        return {"nodes": aliases}

    def _note(self, alias: str, leaves: str) -> None:
        """What to heal: a node left down is started, one left paused is resumed."""
        change = {
            DOWN: self.killed.add, UP: self.killed.discard, PAUSED: self.paused.add, THAWED: self.paused.discard,
        }  # fmt: skip
        change[leaves](alias)

    def act(self, f: str, value: dict[str, Any], action: Callable[[], Any]) -> dict[str, Any]:
        """An operator's action that is not a node fault (a forced election, ...), recorded like one."""
        with self._lock:
            self._record("invoke", f, value)
            try:
                action()
            except Exception as exc:  # noqa: BLE001 (recorded; the caller decides what it means)
                self._record(INFO, f, value, f"{type(exc).__name__}: {exc}")
                return {**value, "error": str(exc)}
            self._record(OK, f, value)
            return value

    def heal_all(self) -> None:
        """Undo every fault still in place: thaw, start, remove partitions. Safe to call twice."""
        if self.paused:
            self.run("resume")
        if self.killed:
            self.run("start")
        if self.partitioned:
            self.run("heal")
