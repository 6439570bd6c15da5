"""Which nodes each nemesis operation faulted, and when: what the control-plane timing rules of
../shared/anomalies.md measure from.

The operations, their pairing into per-node windows and what each effect means are the one model
on floor 0 (history/faults.py), which every other reader of fault windows reads too; this module
keeps the names the rules use for it, and the questions they ask of the windows. Where the rules
must not hold a node to what it could not do, the window is the wide one: a node may be down from
its fault's invoke until its undo completed (`down`), and a cut may hold from the partition's
invoke until the heal completed (`cut_between`). An operation without an effect (a history
written before it was recorded) faults no node here, and `faultless` names it, for the rules to
say they were not checked on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any

from kafka_chaos.history import events
from kafka_chaos.history import faults as model
from kafka_chaos.history.faults import Interval, Window, faultless, windows

__all__ = ["DOWN", "PAUSE", "RESTARTS", "WIPE", "Interval", "NemesisOp", "Window", "faultless", "windows"]

#: Effects that leave a node down (not running) until undone (history/faults.py MEANINGS).
DOWN = model.DOWN
#: The effect that freezes a node's processes: they resume as they were, claims and all.
PAUSE = events.PAUSED
#: Effects that kill, change the disk and start the node again within the one operation.
RESTARTS = model.RESTARTS
#: The effect that empties a node's disk: its quorum-state starts again from nothing.
(WIPE,) = model.EMPTIES
#: One nemesis operation, its invoke paired with its completion (history/faults.py).
NemesisOp = model.Op


def nemesis_ops(rows: list[dict[str, Any]]) -> list[NemesisOp]:
    """The nemesis rows the check collected (checkers/check.py `nemesis_query`), in invoke order."""
    return model.from_rows(rows)


def down(ws: list[Window]) -> dict[str, list[Interval]]:
    """node -> when it may have been down (killed, stopped, paused, restarting): invoke to undo
    done, or to the history's end (the model's `down_spans`)."""
    return model.down_spans(ws)  # type: ignore[return-value]


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
