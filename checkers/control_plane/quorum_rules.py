"""The quorum's rules over each node's own view (quorum-views.jsonl), in the driver: the views are
a few thousand rows, collected by checkers/control_plane/judge.py with the nemesis's fault windows.

- `quorum-split-brain`: two running nodes each hold themselves leader, in different epochs, at
  the same moment, for longer than 1.5 x `controller.quorum.fetch.timeout.ms` + S, lengthened by
  the host stall measured inside the window (history/stall.py); each example
  says since when each held its claim and whom each could not reach as the split began. A node holds
  a claim from the first sample that shows it to the last one that still does (what was surely
  seen; the slack covers the time between samples); the stretch a node may have been down is cut
  out (a dead node's last view is not a claim).
A pause hides no later claim: a paused leader resumes still leader. A restart ends the claims of
the epochs the node held before it (amended 2026-12-06, `restarted_claim`): KRaft starts a former
leader resigned in its old epoch while its quorum-state file still names it, and the node holds a
claim again only once elected, in a new epoch. Nor is the file its dead process left a claim: the
node's JVM takes seconds to start and read it (longer on a loaded machine), and until its new
process writes the file again it is the dead node's last view (`from_the_dead`, by the file's
time, `written`).
- `quorum-double-leader` and `quorum-epoch-regression` are queries on Spark (control_plane.py).

Beside them: who led the quorum when (the active controller at a moment), and the epochs that
each heal added.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from kafka_chaos.checkers.control_plane.node_faults import (
    Interval,
    Window,
    cut_between,
    down,
    is_down,
    subtract,
)
from kafka_chaos.history.evidence import ENDS_PROCESS, left_by_the_dead
from kafka_chaos.history.quorum_view import claims_to_lead
from kafka_chaos.history.stall import stall_within

View = dict[str, Any]  # time, node, node_id, leader_id, leader_epoch, error


def leads(v: View) -> bool:
    """Whether a view is its node's claim to lead the quorum (history/quorum_view.py)."""
    return claims_to_lead(v)


def process_ends(ws: list[Window]) -> dict[str, list[int]]:
    """node -> when each fault that ends its process began (a kill, a stop, a restart; not a pause,
    whose process resumes as it was)."""
    out: dict[str, list[int]] = {}
    for w in ws:
        if w.node is not None and w.does in ENDS_PROCESS:
            out.setdefault(w.node, []).append(w.invoke)
    return out


def from_the_dead(v: View, ends: dict[str, list[int]]) -> bool:
    """Whether the view is the file a dead process of its node left (history/evidence.py)."""
    return left_by_the_dead(v.get("written"), v["time"], ends.get(v["node"], ()))


def first_claims(views: list[View]) -> dict[tuple[str, int], int]:
    """(node, epoch) -> when the node's views first showed it leader of that epoch."""
    out: dict[tuple[str, int], int] = {}
    for v in views:
        if leads(v):
            key = (v["node"], v["leader_epoch"])
            out[key] = min(out.get(key, v["time"]), v["time"])
    return out


def restarted_claim(v: View, ends: dict[str, list[int]], first: dict[tuple[str, int], int]) -> bool:
    """Whether the view claims an epoch its node held before a restart (a fault that ended its
    process) that came before the view: no claim until the node is elected again, in a new epoch
    (KRaft starts a former leader resigned in its old epoch, while its quorum-state file still names
    it: ../shared/anomalies.md, amended 2026-12-06)."""
    since = first.get((v["node"], v["leader_epoch"]))
    return since is not None and any(since < r < v["time"] for r in ends.get(v["node"], ()))


def claims(views: list[View], ws: list[Window] | None = None) -> dict[str, list[tuple[int, Interval]]]:
    """node -> (epoch, [first, last sample]) of each run of samples in which it held itself leader,
    its running process's view (`from_the_dead`: a file a dead process left is no claim, and breaks
    the run), and not an epoch it held before a restart (`restarted_claim`)."""
    ends = process_ends(ws or [])
    first = first_claims(views)
    out: dict[str, list[tuple[int, Interval]]] = {}
    by_node: dict[str, list[View]] = {}
    for v in views:
        by_node.setdefault(v["node"], []).append(v)
    for node, vs in by_node.items():
        run: tuple[int, int, int] | None = None  # epoch, first, last
        for v in sorted(vs, key=lambda v: v["time"]):
            claim = leads(v) and not from_the_dead(v, ends) and not restarted_claim(v, ends, first)
            epoch = v["leader_epoch"] if claim else None
            if run is not None and epoch == run[0]:
                run = (run[0], run[1], v["time"])
                continue
            if run is not None:
                out.setdefault(node, []).append((run[0], (run[1], run[2])))
            run = (epoch, v["time"], v["time"]) if epoch is not None else None
        if run is not None:
            out.setdefault(node, []).append((run[0], (run[1], run[2])))
    return out


def live_claims(views: list[View], ws: list[Window]) -> list[View]:
    """The views that are a running node's claim to lead: not taken while the node may have been
    down (a dead or paused node's file still names it), nor a file its dead process left, nor an
    epoch it held before a restart."""
    dn, ends, first = down(ws), process_ends(ws), first_claims(views)
    return [
        v
        for v in views
        if leads(v)
        and not is_down(dn, v["node"], v["time"])
        and not from_the_dead(v, ends)
        and not restarted_claim(v, ends, first)
    ]


def split_brain(
    views: list[View], ws: list[Window], bound_ns: int, wakes: list[int] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Pairs of claims in different epochs that overlap, both nodes running, for longer than the
    bound lengthened by the host stall inside its window (from the overlap's start); and every pair
    judged, with the stall added (results.json's `judged_windows`)."""
    dn = down(ws)
    judged = []
    held = claims(views, ws)
    everyone = sorted({v["node"] for v in views})
    found = []
    for a, b in combinations(sorted(held), 2):
        for ea, (sa, xa) in held[a]:
            for eb, (sb, xb) in held[b]:
                start, end = max(sa, sb), min(xa, xb)
                if ea == eb or end <= start:
                    continue
                parts = subtract((start, end), dn.get(a, []) + dn.get(b, []))
                longest = max(parts, key=lambda p: p[1] - p[0], default=None)
                if longest is None:
                    continue
                stall = stall_within(wakes, longest[0], longest[0] + bound_ns)
                over = longest[1] - longest[0] > bound_ns + stall
                judged.append(
                    {
                        "nodes": [a, b],
                        "epochs": [ea, eb],
                        "from_s": longest[0] / 1e9,
                        "seconds": round((longest[1] - longest[0]) / 1e9, 3),
                        "stall_s": round(stall / 1e9, 3),
                        "found": over,
                    }
                )
                if over:
                    found.append(
                        {
                            "nodes": [a, b],
                            "epochs": [ea, eb],
                            "from_s": longest[0] / 1e9,
                            "to_s": longest[1] / 1e9,
                            "seconds": round((longest[1] - longest[0]) / 1e9, 3),
                            "stall_s": round(stall / 1e9, 3),
                            # The root cause: since when each held itself leader, and whom each
                            # could not reach as the split began (the nemesis's cuts).
                            "since_s": [sa / 1e9, sb / 1e9],
                            "cut_off": {
                                n: sorted(m for m in everyone if m != n and cut_between(ws, n, m, longest[0]))
                                for n in (a, b)
                            },
                        }
                    )
    return found, judged


def leader_at(
    views: list[View], t: int, ws: list[Window] | None = None, claims: list[View] | None = None
) -> tuple[str, int] | None:
    """The active controller at `t`: of the nodes' latest views up to `t`, the one that is a
    running node's claim (`live_claims`; `claims`, when the caller computed them once for many
    moments) in the highest epoch, its node not down at `t`."""
    ws = ws or []
    latest: dict[str, View] = {}
    for v in views:
        if v["time"] <= t and (v["node"] not in latest or v["time"] >= latest[v["node"]]["time"]):
            latest[v["node"]] = v
    if not latest:
        return None
    live = {(v["node"], v["time"]) for v in (claims if claims is not None else live_claims(views, ws))}
    dn = down(ws)
    best = None
    for node, v in latest.items():
        if (node, v["time"]) in live and not is_down(dn, node, t) and (best is None or v["leader_epoch"] > best[1]):
            best = (node, v["leader_epoch"])
    return best


def next_leader(views: list[View], after: int, old: tuple[str, int], until: int) -> int | None:
    """When a node other than the old leader first held itself leader in a later epoch."""
    times = [
        v["time"]
        for v in views
        if after <= v["time"] <= until and leads(v) and v["node"] != old[0] and (v["leader_epoch"] or 0) > old[1]
    ]
    return min(times, default=None)


def heal_epochs(views: list[View], heal_invoke: int, until: int) -> dict[str, Any]:
    """The quorum's epoch (the highest epoch a node held itself leader in) before a heal, and
    after it, up to `until` (the next nemesis operation, or a settling time): what the heal added."""
    before = max((v["leader_epoch"] for v in views if v["time"] < heal_invoke and leads(v)), default=None)
    after = max((v["leader_epoch"] for v in views if heal_invoke <= v["time"] <= until and leads(v)), default=None)
    added = None if before is None or after is None else max(0, after - before)
    return {"epoch_before": before, "epoch_after": after, "epochs_added": added}
