"""The nemesis's operations as one model: what each effect means, each operation paired once with
its completion, and the windows in which its fault was in place on each node. Every reader of
fault windows reads them here (the control-plane timing rules, the liveness bands and the report's
shading, explore's states, shrinking), so that they cannot disagree on what a fault did or when.

What a fault did is read from the history, not from a list of fault names: each nemesis
operation's value carries its `effect` (history/events.py), written there by the fault itself
(nemesis/faults.py); `MEANINGS` says what each effect does to a node. A network fault is known by
the `grudge` its value carries (nemesis/partition.py), and one of a listener's port alone by its
`listener`: CONTROLLER cuts the quorum and the controller, not replication; PLAINTEXT (the brokers'
own) cuts replication, not the quorum or the controller.

A fault *took effect* when its operation completed `ok`; it *stayed* until the operation that
undoes it was invoked (../shared/anomalies.md, "Control plane"): for each node, the first later
operation that heals its fault and names the node (a network heal names every running node and
heals every cut), or a restart of the node: a wipe or a loss of unflushed writes starts it again,
and a start ends a pause too (a paused node killed and started runs again), but no restart opens
a remote storage's gate, which is outside the node. A partition ends where the next one begins (it
replaces every rule of the one before: nemesis/partition.py). Where a rule must not hold a node to
what it could not do, the window is the wide one: from the fault's invoke until its undo completed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka_chaos.history import events as ev


@dataclass(frozen=True)
class Meaning:
    """What one effect does to the nodes its operation names."""

    #: not running until undone (killed or stopped; frozen): "may be down"
    down: bool = False
    #: frozen: resumes as it was, its claims and all
    freezes: bool = False
    #: killed and started again within its own operation
    restarts: bool = False
    #: its disk emptied: starts again from nothing
    empties: bool = False
    #: writes not yet flushed to disk are gone (a power loss; a wipe loses them too)
    loses_unflushed: bool = False
    #: a fault of the network between nodes or clients (a partition's grudge, held connections)
    network: bool = False
    #: impairs something outside the node (a remote storage's gate): a restart does not undo it
    outside: bool = False
    #: ends the node's process (its files are then a dead process's: history/evidence.py)
    ends_process: bool = False
    #: undoes another effect (named by its value's `heals`)
    undo: bool = False
    #: the node did it to itself (its process ended with no fault ending it): down for every rule
    #: that asks whether a node ran, but no fault the nemesis made, so not one that the rules of a
    #: node "the nemesis killed, stopped or paused" judge (../shared/anomalies.md)
    own: bool = False


#: effect -> its meaning: the one table every reader derives its own sets from.
MEANINGS: dict[str, Meaning] = {
    ev.DOWN: Meaning(down=True, ends_process=True),
    ev.PAUSED: Meaning(down=True, freezes=True),
    ev.RESTARTED: Meaning(restarts=True, loses_unflushed=True, ends_process=True),
    ev.WIPED: Meaning(restarts=True, empties=True, loses_unflushed=True, ends_process=True),
    ev.CUT: Meaning(network=True),
    ev.HELD: Meaning(network=True),
    ev.IMPAIRED: Meaning(outside=True),
    ev.STARTED: Meaning(undo=True),
    ev.RESUMED: Meaning(undo=True),
    ev.HEALED: Meaning(undo=True),
    ev.RESTORED: Meaning(undo=True),
    ev.EXITED: Meaning(down=True, ends_process=True, own=True),
    ev.OPERATOR: Meaning(),
    ev.CLIENT: Meaning(),
}
NOTHING = Meaning()


def meaning(effect: str | None) -> Meaning:
    """What `effect` does (nothing known for None, a history that does not say, or a new name)."""
    return MEANINGS.get(effect or "", NOTHING)


def _effects(**wanted: bool) -> tuple[str, ...]:
    return tuple(e for e in ev.EFFECTS if any(getattr(meaning(e), k) for k, v in wanted.items() if v))


#: Effects that leave a node not running until undone (killed, stopped, paused).
DOWN = _effects(down=True)
#: Effects of the nemesis's faults that leave a node not running: what the rules of a node "the
#: nemesis killed, stopped or paused" judge (a node's own exit is down, and not one of them).
FAULTED_DOWN = tuple(e for e in DOWN if not meaning(e).own)
#: Effects that kill, change the disk and start the node again within the one operation.
RESTARTS = _effects(restarts=True)
#: Effects that empty a node's disk.
EMPTIES = _effects(empties=True)
#: Effects that lose what a node had not flushed (a power loss, a wipe).
LOSES_DATA = _effects(loses_unflushed=True)
#: Effects that end a node's process (a kill, a stop, a restart; not a pause).
ENDS_PROCESS = _effects(ends_process=True)
#: Effects that undo others.
UNDOES = _effects(undo=True)
#: Effects that take a node away from its peers or clients for a while (so a leadership moves).
DISRUPTS = _effects(down=True, restarts=True, network=True)

#: How long a fault that restarts its node within its operation (a wipe, a loss of unflushed
#: writes) counts as in place after that operation completed (ns): the node is back, but its JVM
#: is still starting and its replicas catching up. 10 s: the longer of the values in use before
#: (explore's states and the overlapping mix's disk window), so that no reader counts such a fault
#: over sooner than it did; on the project's two-core machine a restarted broker takes several
#: seconds to start and register again.
AFTER_RESTART_NS = 10_000_000_000

Interval = tuple[int, int]
#: The listeners a port-scoped partition records (nemesis/partition.py): one cuts the quorum's and
#: the controller's traffic alone, the other the brokers' own (replication) alone.
CONTROLLER_LISTENER, BROKER_LISTENER = "CONTROLLER", "PLAINTEXT"


@dataclass
class Op:
    """One nemesis operation: its invoke paired with its completion."""

    op: int  # the history index that names it (its completion's; its invoke's when it has none)
    f: str
    type: str  # its completion's type (info for an invoke the history never completed)
    itime: int
    ctime: int | None
    nodes: list[str] = field(default_factory=list)
    grudge: dict[str, list[str]] = field(default_factory=dict)
    heals: list[str] | None = None
    undone_by: str | None = None
    #: what it did to its nodes (history/events.py EFFECTS); None in a history that does not say
    effect: str | None = None
    #: a partition of one listener's traffic only: CONTROLLER (the quorum's, and the brokers' to
    #: the controllers), not the brokers' replication between them
    listener: str | None = None
    target: str | None = None
    shape: str | None = None  # a partition's shape (isolate, cut, halves, ...)

    @property
    def means(self) -> Meaning:
        return meaning(self.effect)


def _json(text: Any, default: Any) -> Any:
    if text is None:
        return default
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return default


def _op(index: int, f: str, type_: str, itime: int, ctime: int | None, value: Mapping[str, Any]) -> Op:
    nodes = _json(value.get("nodes"), [])
    grudge = _json(value.get("grudge"), {})
    heals = _json(value.get("heals"), None)
    text = lambda k: value.get(k) if isinstance(value.get(k), str) else None  # noqa: E731
    return Op(
        op=index,
        f=str(f),
        type=type_,
        itime=int(itime),
        ctime=None if ctime is None else int(ctime),
        nodes=[str(n) for n in nodes] if isinstance(nodes, list) else [],
        grudge={str(k): [str(x) for x in v] for k, v in grudge.items()} if isinstance(grudge, dict) else {},
        heals=list(heals) if isinstance(heals, list) else None,
        undone_by=text("undone_by"),
        effect=text("effect"),
        listener=text("listener"),
        target=None if value.get("target") is None else str(value.get("target")),
        shape=text("shape"),
    )


def pair(history: Iterable[Mapping[str, Any]]) -> list[Op]:
    """The nemesis's operations of a history's events (file order), in invoke order: each
    completion paired with the first open invoke of the same fault and target (the nemesis may
    have several operations outstanding at once); what it did read from both values, the
    completion's winning. An invoke never completed is an `info` operation without a completion
    time; a completion without an invoke starts when it completed."""
    open_: dict[tuple[str, str | None], list[Mapping[str, Any]]] = {}
    out: list[Op] = []
    for e in history:
        if e.get("process") != ev.NEMESIS:
            continue
        value = e.get("value") if isinstance(e.get("value"), dict) else {}
        key = (str(e.get("f")), None if value.get("target") is None else str(value.get("target")))
        if e.get("type") == ev.INVOKE:
            open_.setdefault(key, []).append(e)
            continue
        pending = open_.get(key)
        inv = pending.pop(0) if pending else e
        given = inv.get("value") if isinstance(inv.get("value"), dict) else {}
        index = e.get("index")
        out.append(
            _op(-1 if index is None else int(index), e["f"], str(e["type"]), inv["time"], e["time"], {**given, **value})
        )
    for pending in open_.values():
        for inv in pending:
            value = inv.get("value") if isinstance(inv.get("value"), dict) else {}
            index = inv.get("index")
            out.append(_op(-1 if index is None else int(index), inv["f"], ev.INFO, inv["time"], None, value))
    return sorted(out, key=lambda o: o.itime)


def from_rows(rows: Iterable[Mapping[str, Any]]) -> list[Op]:
    """The nemesis rows the check collected (op, f, type, itime, ctime and its value's fields as
    JSON text: checkers/check.py `nemesis_query`), in invoke order."""
    out = []
    for r in sorted(rows, key=lambda r: r["itime"]):
        index = int(r["op"]) if r.get("op") is not None else -1
        out.append(_op(index, r["f"], r["type"], r["itime"], r["ctime"], r))
    return out


@dataclass
class Window:
    """One fault on one node (a network fault: on the nodes of its grudge, `node` None)."""

    op: int
    f: str
    does: str | None  # what the operation did to the node (its `effect`: history/events.py)
    node: str | None  # None for a network fault
    invoke: int
    effect: int | None  # its ok completion; None when it did not complete ok
    undone: int  # the invoke of its undo (the end of the history when none came)
    healed: int  # the completion of its undo (the end when none)
    undo_op: int | None = None
    grudge: dict[str, list[str]] = field(default_factory=dict)
    listener: str | None = None  # Op.listener
    shape: str | None = None  # Op.shape

    @property
    def stayed(self) -> Interval | None:
        """From taking effect until undone: when the fault was surely in place."""
        return None if self.effect is None else (self.effect, self.undone)

    @property
    def in_place(self) -> tuple[int, float]:
        """From its invoke until it was surely over: its undo's completion (never, when nothing
        undid it), or AFTER_RESTART_NS after a restart's own operation completed."""
        if meaning(self.does).restarts:
            return self.invoke, self.healed + AFTER_RESTART_NS
        return self.invoke, self.healed if self.undo_op is not None else float("inf")

    def cuts(self, a: str, b: str, replication: bool = False) -> bool:
        """Whether the grudge cuts a from b: for `replication` (a follower's fetches from its
        leader), not when only the controller listener's traffic is cut; otherwise (the quorum,
        a broker's channel to the controller), not when only the brokers' own listener's is."""
        if self.listener == (CONTROLLER_LISTENER if replication else BROKER_LISTENER):
            return False
        return b in self.grudge.get(a, ()) or a in self.grudge.get(b, ())


def down_spans(ws: Iterable[Window], unhealed: float | None = None) -> dict[str, list[tuple[int, float]]]:
    """node -> when it may have been down (killed, stopped, paused, exited, restarting): from the
    fault's invoke until its undo completed, a restart until its own operation completed. A down
    nothing undid lasts until `unhealed` (None: the window's end, the history's end)."""
    out: dict[str, list[tuple[int, float]]] = {}
    for w in ws:
        if w.node is None or not (w.does in DOWN or w.does in RESTARTS):
            continue
        open_ = w.undo_op is None and w.does not in RESTARTS
        out.setdefault(w.node, []).append((w.invoke, unhealed if open_ and unhealed is not None else w.healed))
    return out


def restarts_node(op: Op, node: str) -> bool:
    """Whether `op` starts `node` again: a wipe or a loss of unflushed writes of it, or a start
    (which also ends a pause: a paused container killed and started runs again)."""
    return node in op.nodes and (op.means.restarts or op.effect == ev.STARTED)


def _undoes(u: Op, op: Op, node: str | None) -> bool:
    network = bool(op.grudge)
    if u.type == ev.FAIL:
        return False
    if u.heals is not None and op.f in u.heals and (network or node in u.nodes):
        return True
    if network:
        return bool(u.grudge)  # a later partition replaces this one
    return node is not None and not op.means.outside and restarts_node(u, node)


def windows(ops: list[Op], end: int) -> list[Window]:
    """Every fault that stays in place (its value names what undoes it), per node, paired with its
    undo; and each restart, over when its own operation completed. Failed operations and undos
    fault nothing; nor does an operator's action that stays in place for no one."""
    out: list[Window] = []
    for i, op in enumerate(ops):
        if op.type == ev.FAIL or op.heals is not None:
            continue
        took = op.ctime if op.type == ev.OK else None
        if op.means.restarts:
            done = op.ctime if op.ctime is not None else end
            out += [Window(op.op, op.f, op.effect, n, op.itime, took, done, done, shape=op.shape) for n in op.nodes]
            continue
        if not op.undone_by:
            continue
        network = bool(op.grudge)
        for node in [None] if network else op.nodes:
            undo = next((u for u in ops[i + 1 :] if _undoes(u, op, node)), None)
            out.append(
                Window(
                    op.op,
                    op.f,
                    op.effect,
                    node,
                    op.itime,
                    took,
                    undo.itime if undo else end,
                    (undo.ctime if undo.ctime is not None else end) if undo else end,
                    undo.op if undo else None,
                    op.grudge if network else {},
                    op.listener if network else None,
                    op.shape,
                )
            )
    return out


def faultless(ops: list[Op]) -> list[Op]:
    """The operations that completed and say nothing of their effect (a history written before the
    nemesis recorded it): no reader can know what they did."""
    return [op for op in ops if op.type != ev.FAIL and op.effect is None]
