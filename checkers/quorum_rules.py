"""The quorum's rules over each node's own view (quorum-views.jsonl), in the driver: the views are
a few thousand rows, collected by checkers/control_plane.py with the nemesis's fault windows.

- `quorum-split-brain`: two running nodes each hold themselves leader, in different epochs, at
  the same moment, for longer than 1.5 x `controller.quorum.fetch.timeout.ms` + S; each example
  says since when each held its claim and whom each could not reach as the split began. A node holds
  a claim from the first sample that shows it to the last one that still does (what was surely
  seen; the slack covers the time between samples); the stretch a node may have been down is cut
  out (a dead node's last view is not a claim).
- `quorum-double-leader` and `quorum-epoch-regression` are queries on Spark (control_plane.py).

Beside them: who led the quorum when (the active controller at a moment), and the epochs that
each heal added.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from kafka_chaos.checkers.node_faults import Interval, Window, cut_between, down, is_down, subtract

View = dict[str, Any]  # time, node, node_id, leader_id, leader_epoch, error


def leads(v: View) -> bool:
    """Whether a readable view is its node's claim to lead the quorum."""
    return v["error"] is None and v["leader_id"] is not None and v["leader_id"] == v["node_id"]


def claims(views: list[View], dn: dict[str, list[Interval]] | None = None) -> dict[str, list[tuple[int, Interval]]]:
    """node -> (epoch, [first, last sample]) of each run of samples in which it held itself leader.

    A node that was down (`dn`: killed, stopped, paused, restarting) and held itself leader when
    that began keeps the same view in its file after it, written back by its own start (KRaft
    starts a former leader as resigned, in the same epoch): that is no claim until its view
    changes."""
    out: dict[str, list[tuple[int, Interval]]] = {}
    by_node: dict[str, list[View]] = {}
    for v in views:
        by_node.setdefault(v["node"], []).append(v)
    for node, vs in by_node.items():
        gaps = sorted((dn or {}).get(node, []))
        run: tuple[int, int, int] | None = None  # epoch, first, last
        carried: tuple[Any, Any] | None = None  # the view held when the node went down, until it changes
        last_view: tuple[Any, Any] | None = None
        last_time: int | None = None
        for v in sorted(vs, key=lambda v: v["time"]):
            view = (v["leader_id"], v["leader_epoch"]) if v["error"] is None else None
            if last_time is not None and any(last_time < s <= v["time"] for s, _ in gaps):
                carried = last_view
            last_time, last_view = v["time"], view
            if carried is not None and view != carried:
                carried = None
            epoch = v["leader_epoch"] if leads(v) and view != carried else None
            if run is not None and epoch == run[0]:
                run = (run[0], run[1], v["time"])
                continue
            if run is not None:
                out.setdefault(node, []).append((run[0], (run[1], run[2])))
            run = (epoch, v["time"], v["time"]) if epoch is not None else None
        if run is not None:
            out.setdefault(node, []).append((run[0], (run[1], run[2])))
    return out


def split_brain(views: list[View], ws: list[Window], bound_ns: int) -> list[dict[str, Any]]:
    """Pairs of claims in different epochs that overlap, both nodes running, for longer than the bound."""
    dn = down(ws)
    held = claims(views, dn)
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
                if longest is not None and longest[1] - longest[0] > bound_ns:
                    found.append(
                        {
                            "nodes": [a, b],
                            "epochs": [ea, eb],
                            "from_s": longest[0] / 1e9,
                            "to_s": longest[1] / 1e9,
                            "seconds": round((longest[1] - longest[0]) / 1e9, 3),
                            # The root cause: since when each held itself leader, and whom each
                            # could not reach as the split began (the nemesis's cuts).
                            "since_s": [sa / 1e9, sb / 1e9],
                            "cut_off": {
                                n: sorted(m for m in everyone if m != n and cut_between(ws, n, m, longest[0]))
                                for n in (a, b)
                            },
                        }
                    )
    return found


def leader_at(views: list[View], t: int, ws: list[Window] | None = None) -> tuple[str, int] | None:
    """The active controller at `t`: of the nodes' latest views up to `t`, the running one that holds
    itself leader in the highest epoch."""
    latest: dict[str, View] = {}
    for v in views:
        if v["time"] <= t and (v["node"] not in latest or v["time"] >= latest[v["node"]]["time"]):
            latest[v["node"]] = v
    dn = down(ws or [])
    best = None
    for node, v in latest.items():
        if leads(v) and not is_down(dn, node, t) and (best is None or v["leader_epoch"] > best[1]):
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
