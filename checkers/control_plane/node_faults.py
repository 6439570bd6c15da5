"""Which nodes each nemesis operation faulted, and when: what the control-plane timing rules of
../shared/anomalies.md measure from.

A fault *took effect* when its operation completed `ok`; it *stayed* until the operation that
undoes it (its value's `undone_by`, whose value `heals` it) was invoked, for each node by the
first later undoing operation that names the node (a network heal names every running node and
heals every cut), or by a restart of the node: a wipe or a loss of unflushed writes starts it
again, so a node stopped before one is down only until that began, and a start ends a pause
too (a paused node killed and started runs again); a partition ends where the next one begins
(it replaces every rule of the one before: nemesis/partition.py). Where the rules must not hold
a node to what it could not do, the window is the wide one: a node may be down from its fault's
invoke until its undo completed (`down`), and a cut may hold from the partition's invoke until
the heal completed (`cut_between`).

What a fault does to its nodes is read from the history, not from a list of fault names: each
nemesis operation's value carries its `effect` (history/events.py: down, paused, restarted, wiped,
started, resumed, cut, ...), written there by the fault itself (nemesis/faults.py), so a new fault
that takes a node down is known to every timing rule the moment it says so. A network fault is
known by the `grudge` its value carries (nemesis/partition.py). An operation without an effect (a
history written before it was recorded) faults no node here, and `faultless` names it, for the
rules to say they were not checked on it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from kafka_chaos.history import events

#: Effects that leave a node down (not running) until undone.
DOWN = (events.DOWN, events.PAUSED)
#: The effect that freezes a node's processes: they resume as they were, claims and all.
PAUSE = events.PAUSED
#: Effects that kill, change the disk and start the node again within the one operation.
RESTARTS = (events.RESTARTED, events.WIPED)
#: The effect that empties a node's disk: its quorum-state starts again from nothing.
WIPE = events.WIPED

Interval = tuple[int, int]


@dataclass
class NemesisOp:
    op: int  # the history index that names it (its completion's)
    f: str
    type: str
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


def _json(text: Any, default: Any) -> Any:
    if text is None:
        return default
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return default


def nemesis_ops(rows: list[dict[str, Any]]) -> list[NemesisOp]:
    """The nemesis rows the check collected (checkers/check.py `nemesis_query`), in invoke order."""
    out = []
    for r in sorted(rows, key=lambda r: r["itime"]):
        nodes = _json(r.get("nodes"), [])
        grudge = _json(r.get("grudge"), {})
        heals = _json(r.get("heals"), None)
        out.append(
            NemesisOp(
                op=int(r["op"]) if r.get("op") is not None else -1,
                f=r["f"],
                type=r["type"],
                itime=int(r["itime"]),
                ctime=None if r["ctime"] is None else int(r["ctime"]),
                nodes=[str(n) for n in nodes] if isinstance(nodes, list) else [],
                grudge={str(k): [str(x) for x in v] for k, v in grudge.items()} if isinstance(grudge, dict) else {},
                heals=list(heals) if isinstance(heals, list) else None,
                undone_by=r.get("undone_by"),
                listener=r.get("listener") if isinstance(r.get("listener"), str) else None,
                effect=r.get("effect") if isinstance(r.get("effect"), str) else None,
            )
        )
    return out


@dataclass
class Window:
    """One fault on one node (a network fault: on the nodes of its grudge)."""

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
    listener: str | None = None  # NemesisOp.listener

    @property
    def stayed(self) -> Interval | None:
        """From taking effect until undone: when the fault was surely in place."""
        return None if self.effect is None else (self.effect, self.undone)

    def cuts(self, a: str, b: str, replication: bool = False) -> bool:
        """Whether the grudge cuts a from b; for `replication` (a follower's fetches from its
        leader), not when only the controller listener's traffic is cut."""
        if replication and self.listener == "CONTROLLER":
            return False
        return b in self.grudge.get(a, ()) or a in self.grudge.get(b, ())


def windows(ops: list[NemesisOp], end: int) -> list[Window]:
    """Every fault that stays in place, per node, paired with its undo; and each restart (over
    when its own operation completed)."""
    out: list[Window] = []
    for i, op in enumerate(ops):
        if op.type == "fail" or op.heals is not None:
            continue
        effect = op.ctime if op.type == "ok" else None
        if op.effect in RESTARTS:
            done = op.ctime if op.ctime is not None else end
            out += [Window(op.op, op.f, op.effect, n, op.itime, effect, done, done) for n in op.nodes]
            continue
        if not op.undone_by:
            continue
        network = bool(op.grudge)
        for node in [None] if network else op.nodes:
            undo = next(
                (
                    u
                    for u in ops[i + 1 :]
                    if u.type != "fail"
                    and (
                        (u.heals is not None and op.f in u.heals and (network or node in u.nodes))
                        or (network and bool(u.grudge))
                        # A restart does not open a remote storage's gate: it is outside the node.
                        or (not network and op.effect != events.IMPAIRED and _restarts(u, node))
                    )
                ),
                None,
            )
            out.append(
                Window(
                    op.op,
                    op.f,
                    op.effect,
                    node,
                    op.itime,
                    effect,
                    undo.itime if undo else end,
                    (undo.ctime if undo.ctime is not None else end) if undo else end,
                    undo.op if undo else None,
                    op.grudge if network else {},
                    op.listener if network else None,
                )
            )
    return out


def faultless(ops: list[NemesisOp]) -> list[NemesisOp]:
    """The operations that completed and say nothing of their effect (a history written before the
    nemesis recorded it): the timing rules cannot know what they did."""
    return [op for op in ops if op.type != "fail" and op.effect is None]


def _restarts(op: NemesisOp, node: str) -> bool:
    """Whether `op` starts `node` again: a wipe or lose-unflushed of it, or a start (which also
    ends a pause: a paused container killed and started runs again)."""
    if node not in op.nodes:
        return False
    return op.effect in RESTARTS or op.effect == events.STARTED


def down(ws: list[Window]) -> dict[str, list[Interval]]:
    """node -> when it may have been down (killed, stopped, paused, restarting): invoke to undo done."""
    out: dict[str, list[Interval]] = {}
    for w in ws:
        if w.node is not None and (w.does in DOWN or w.does in RESTARTS):
            out.setdefault(w.node, []).append((w.invoke, w.healed))
    return out


def is_down(intervals: dict[str, list[Interval]], node: str, a: int, b: int | None = None) -> bool:
    """Whether `node` may have been down at any moment of [a, b] (at `a` when b is None)."""
    b = a if b is None else b
    return any(s <= b and a <= e for s, e in intervals.get(node, ()))


def cut_between(ws: list[Window], x: str, y: str, a: int, b: int | None = None) -> bool:
    """Whether a network fault may have cut x from y at any moment of [a, b]."""
    b = a if b is None else b
    return any(w.node is None and w.cuts(x, y) and w.invoke <= b and a <= w.healed for w in ws)


def subtract(span: Interval, holes: list[Interval]) -> list[Interval]:
    """The parts of `span` outside every hole."""
    parts = [span]
    for hs, he in sorted(holes):
        nxt = []
        for s, e in parts:
            if he < s or hs > e:
                nxt.append((s, e))
                continue
            if hs > s:
                nxt.append((s, hs))
            if he < e:
                nxt.append((he, e))
        parts = nxt
    return parts


def majority_reachable(ws: list[Window], voters: list[str], t: int, lost: Mapping[str, int] | None = None) -> bool:
    """Whether, at `t`, a majority of the voters were up and could all reach each other. `lost`:
    when a voter's seat was lost for good (a dynamic quorum's voter wiped: KIP-853 gives it a new
    directory id, and the seat stays its old directory's)."""
    if not voters:
        return True
    dn, lost = down(ws), lost or {}
    up = [v for v in voters if not is_down(dn, v, t) and not (v in lost and t >= lost[v])]
    need = len(voters) // 2 + 1
    for size in range(len(up), need - 1, -1):
        for group in combinations(up, size):
            if not any(cut_between(ws, a, b, t) for a, b in combinations(group, 2)):
                return True
    return False


def majority_back(
    ws: list[Window], voters: list[str], t: int, until: int, lost: Mapping[str, int] | None = None
) -> int | None:
    """`t` if a majority of the voters could reach each other then, else the first moment after it
    (before `until`) that they could again; None when they never could."""
    moments = sorted({t} | {m for w in ws for m in (w.healed, w.undone) if t < m <= until})
    return next((m for m in moments if majority_reachable(ws, voters, m if m == t else m + 1, lost)), None)


def seats_lost(ws: list[Window], voters: list[str]) -> dict[str, int]:
    """A dynamic quorum's voters whose disk was wiped, and when: each comes back an observer."""
    out: dict[str, int] = {}
    for w in sorted(ws, key=lambda w: w.invoke):
        if w.does == WIPE and w.node in voters:
            out.setdefault(w.node, w.invoke)
    return out
