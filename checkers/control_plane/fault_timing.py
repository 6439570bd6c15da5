"""The control plane's timing rules of ../shared/anomalies.md, and the reaction times reported
beside them, in the driver over small collected tables: the nemesis's fault windows
(checkers/control_plane/node_faults.py), the reference metadata log's broker and partition states
(checkers/control_plane/metadata_rules.py), and the quorum's replication samples.

*Committed metadata* at a deadline is at most the reference log's records written by then and below
the high watermark of the first sample taken at or after it (the samples come about once a second;
the slack S covers the one that comes late, and a sample that failed is no sample): a broker
unfenced, or a follower in the ISR, in those records was so in the committed metadata. A bound
whose deadline falls after the fault was undone does not apply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafka_chaos.checkers.control_plane import quorum_rules
from kafka_chaos.checkers.control_plane.node_faults import DOWN, Window, cut_between, down, is_down, majority_back
from kafka_chaos.history import events
from kafka_chaos.history.kraft import caught_up
from kafka_chaos.history.metadata_replay import REGISTER

NS = 1_000_000_000
MS = 1_000_000


@dataclass
class States:
    """One subject's states (a broker's fencing, a partition's leader and ISR) in offset order."""

    events: list[dict[str, Any]] = field(default_factory=list)  # offset, time, and the state

    def committed_by(self, limit: int, t: int) -> dict[str, Any] | None:
        """The state after every record below `limit` that was written by `t`: at most what was
        committed at `t` when `limit` is a high watermark sampled at or after it."""
        before = [e for e in self.events if e["offset"] < limit and (e["time"] is None or e["time"] <= t)]
        return before[-1] if before else None

    def at_time(self, t: int) -> dict[str, Any] | None:
        """The state after every record written up to `t`."""
        before = [e for e in self.events if e["time"] is not None and e["time"] <= t]
        return before[-1] if before else None


def by_subject(rows: list[dict[str, Any]], kind: str) -> dict[str, States]:
    out: dict[str, States] = {}
    for r in sorted((r for r in rows if r["kind"] == kind), key=lambda r: r["offset"]):
        out.setdefault(r["subject"], States()).events.append(r)
    return out


@dataclass
class Evidence:
    """What the timing rules read, collected."""

    ws: list[Window]
    aliases: dict[str, int]  # node alias -> node id
    brokers: list[str]  # aliases of the nodes with the broker role
    voters: list[str]  # aliases of the voters
    settings: dict[str, int]
    views: list[dict[str, Any]]
    samples: list[dict[str, Any]]  # quorum-replication lines without error: time, high_watermark
    members: list[dict[str, Any]]  # time, id, log_end_offset, high_watermark (one per voter/observer per sample)
    states: list[dict[str, Any]]  # the reference log's broker and partition states (metadata_rules.OUT)
    end: int
    #: voter -> when its seat was lost for good (a dynamic quorum's wiped voter: node_faults.seats_lost)
    lost: dict[str, int] = field(default_factory=dict)
    brokers_state: dict[str, States] = field(init=False)
    partitions: dict[str, States] = field(init=False)
    #: the views that are a running node's claim to lead the quorum (quorum_rules.live_claims)
    claims: list[dict[str, Any]] = field(init=False)
    live: set[tuple[str, int]] = field(init=False)  # (node, time) of each view in `claims`
    dn: dict[str, list[tuple[int, int]]] = field(init=False)  # when each node may have been down: down(ws)
    views_by_time: list[dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.claims = quorum_rules.live_claims(self.views, self.ws)
        self.live = {(v["node"], v["time"]) for v in self.claims}
        self.dn = down(self.ws)
        self.views_by_time = sorted(self.views, key=lambda v: v["time"])
        self.brokers_state = by_subject(self.states, "broker")
        self.partitions = by_subject(self.states, "partition")
        self.samples = sorted(self.samples, key=lambda s: s["time"])

    def hw_by(self, t: int) -> int | None:
        """The high watermark of the first sample taken at or after `t` (None: none was): every
        record committed at `t` is below it. A sampler that could not reach the quorum for a
        while (its active controller killed) leaves its last sample before `t` stale, and a rule
        that read that one would call records committed since uncommitted."""
        return next((s["high_watermark"] for s in self.samples if s["time"] >= t), None)

    def setting_ns(self, name: str) -> int:
        return int(self.settings[name]) * MS


def _s(t: int | None) -> float | None:
    return None if t is None else round(t / NS, 3)


def session_start(ev: Evidence, w: Window, bound_ns: int, not_checked: dict[str, str] | None = None) -> int | None:
    """When the controller's clock of a faulted broker's session starts, by the contract: the latest
    of the fault taking effect; the next quorum leader's election, when the fault (its nemesis
    operation) took down or cut off the active controller, since a controller that takes over
    starts every broker's session afresh; and a majority of the voters reaching each other again,
    if they could not then. None: never before the fault was undone."""
    start = majority_back(ev.ws, ev.voters, w.effect, w.undone, ev.lost)
    if start is None:
        return None
    leader = quorum_rules.leader_at(ev.views, w.invoke - 1, ev.ws, ev.claims)
    if leader is not None and any(x.op == w.op and _on(x, leader[0], ev.voters) for x in ev.ws):
        elected = quorum_rules.next_leader(ev.claims, w.invoke, leader, w.undone)
        if elected is None:
            held_long = w.effect + bound_ns < w.undone
            if not_checked is not None and held_long:  # the bound could have elapsed, had one been elected
                why = f"no next quorum leader seen after {w.f} of the active controller {leader[0]} (op {w.op})"
                not_checked.setdefault("unfenced-down-broker", why)
            return None
        start = max(start, elected)
    return start


def unfenced_down_broker(ev: Evidence, bound_ns: int, not_checked: dict[str, str]) -> list[dict[str, Any]]:
    """A broker the nemesis killed, stopped or paused, that stayed so, still unfenced in the
    committed metadata `broker.session.timeout.ms` + S after its session's clock started
    (`session_start`)."""
    found = []
    for w in ev.ws:
        if w.does not in DOWN or w.node not in ev.brokers or w.stayed is None:
            continue
        start = session_start(ev, w, bound_ns, not_checked)
        if start is None:
            continue
        deadline = start + bound_ns
        if deadline >= w.undone:
            continue
        hw = ev.hw_by(deadline)
        if hw is None:
            not_checked.setdefault("unfenced-down-broker", "no quorum-replication sample after a deadline")
            continue
        broker = str(ev.aliases[w.node])
        state = ev.brokers_state.get(broker, States()).committed_by(hw, deadline)
        if state is not None and not state["fenced"]:
            found.append(
                {
                    "node": w.node,
                    "broker": int(broker),
                    "fault": w.f,
                    "op": w.op,
                    "took_effect_s": _s(w.effect),
                    "session_from_s": _s(start),
                    "deadline_s": _s(deadline),
                    "high_watermark": hw,
                    "offset": state["offset"],
                }
            )
    return found


def _active_spans(ev: Evidence, a: int, b: int) -> list[tuple[str, int, int]]:
    """Who was the active controller over [a, b], as (node, from, to) spans: at each moment the
    node whose latest view is a running node's claim in the highest epoch, that node not down then
    (as quorum_rules.leader_at says, in one sweep). A moment with none (the old leader down, the
    next not yet elected) is in no span, and a former leader cut off and still holding its lower
    epoch beside the new one is not the active controller."""
    views = ev.views_by_time
    moments = sorted(
        {a}
        | {v["time"] for v in views if a < v["time"] <= b}
        | {t for w in ev.ws for t in (w.invoke, w.effect or w.invoke, w.undone, w.healed) if a < t <= b}
    )
    latest: dict[str, dict[str, Any]] = {}
    i = 0
    spans: list[tuple[str, int, int]] = []
    for k, t in enumerate(moments):
        while i < len(views) and views[i]["time"] <= t:
            latest[views[i]["node"]] = views[i]
            i += 1
        live = [
            (v["leader_epoch"], node)
            for node, v in latest.items()
            if (node, v["time"]) in ev.live and not is_down(ev.dn, node, t)
        ]
        if not live:
            continue
        _, leader = max(live)
        until = moments[k + 1] if k + 1 < len(moments) else b
        if spans and spans[-1][0] == leader and spans[-1][2] == t:
            spans[-1] = (leader, spans[-1][1], until)
        else:
            spans.append((leader, t, until))
    return spans


def _reaches_controller(ev: Evidence, node: str, a: int, b: int) -> bool:
    """Whether `node` could reach the active controller throughout [a, b]: at every moment there
    was one, it was that node or no network fault may have cut them apart (a moment without an
    active controller asks nothing of it)."""
    return not any(c != node and cut_between(ev.ws, node, c, s, e) for c, s, e in _active_spans(ev, a, b))


def _cut_until(ev: Evidence, w: Window, follower: str, leader: str) -> int:
    """Until when the network fault `w` and the partitions that replaced it, each still cutting
    `follower` from `leader`'s replication, kept them apart: a partition that replaces a cut and
    keeps it does not start the fault again (only a heal, or a partition that lets them meet,
    ends it)."""
    network = [x for x in ev.ws if x.node is None]
    until, seen = w.undone, {w.op}
    while True:
        nxt = next((x for x in network if x.invoke == until and x.op not in seen), None)
        if nxt is None or nxt.effect is None or not nxt.cuts(follower, leader, replication=True):
            return until
        until = nxt.undone
        seen.add(nxt.op)


def stale_isr_member(ev: Evidence, bound_ns: int, not_checked: dict[str, str]) -> list[dict[str, Any]]:
    """A follower faulted (down, or cut from its partition's leader) that stayed so and is still in
    that partition's committed ISR 1.5 x `replica.lag.time.max.ms` + S after the fault took effect,
    while the leader stayed the same, up, and able to reach the active controller (`_reaches_controller`).

    The bound runs from the fault taking effect, as the contract says, whether or not the partition
    took a write since: a follower of an idle partition is held to it too. A cut replaced by a
    partition that still cuts the follower from its leader stays the one fault (`_cut_until`)."""
    found = []
    dn = ev.dn
    by_id = {str(i): a for a, i in ev.aliases.items()}
    for w in ev.ws:
        if w.stayed is None or w.effect is None or not (w.does in DOWN or w.node is None):
            continue
        deadline = w.effect + bound_ns
        # A fault undone before its bound elapsed is over; one still in place at the end of the
        # evidence is judged as far as the evidence goes, and said not checked past it.
        if w.node is not None and deadline >= w.undone and w.undone < ev.end:
            continue
        reached: dict[str, bool] = {}  # leader -> whether it reached the active controller
        for part, states in sorted(ev.partitions.items()):
            now = states.at_time(w.effect)
            if now is None or now["leader"] is None or now["leader"] < 0:
                continue
            leader = by_id.get(str(now["leader"]))
            followers = [by_id.get(str(r)) for r in now["isr"] if r != now["leader"]]
            if leader is None:
                continue
            if w.node is not None:
                faulted = [w.node] if w.node in followers else []
            else:
                faulted = [
                    f
                    for f in followers
                    if f is not None and w.cuts(f, leader, replication=True) and _cut_until(ev, w, f, leader) > deadline
                ]
            if not faulted:
                continue
            later = [e for e in states.events if e["time"] is not None and w.effect < e["time"] <= deadline]
            if any(e["leader"] != now["leader"] for e in later) or is_down(dn, leader, w.effect, deadline):
                continue
            if leader not in reached:
                reached[leader] = _reaches_controller(ev, leader, w.effect, deadline)
            if not reached[leader]:
                continue
            if deadline > ev.end:
                not_checked.setdefault("stale-isr-member", f"op {w.op}: the evidence ended before its bound elapsed")
                continue
            hw = ev.hw_by(deadline)
            if hw is None:
                not_checked.setdefault("stale-isr-member", "no quorum-replication sample after a deadline")
                continue
            committed = states.committed_by(hw, deadline)
            for f in faulted:
                if committed is not None and ev.aliases[f] in committed["isr"]:
                    found.append(
                        {
                            "node": f,
                            "partition": part,
                            "leader": now["leader"],
                            "fault": w.f,
                            "op": w.op,
                            "took_effect_s": _s(w.effect),
                            "deadline_s": _s(deadline),
                            "isr": list(committed["isr"]),
                            "offset": committed["offset"],
                        }
                    )
    return found


def stuck_broker_metadata(ev: Evidence, last_undone: int | None, bound_ns: int) -> list[dict[str, Any]]:
    """After the last fault was undone, a broker that stays behind the quorum's high watermark with
    its log end offset unmoved for longer than 30 s + S. A broker behind in the first sample after
    the undo has stayed behind since the undo: its stretch starts there (the samples come a period
    apart, and a run samples 30 s + S after the undo, not after its first sample)."""
    if last_undone is None:
        return []
    found = []
    for alias in ev.brokers:
        bid = ev.aliases[alias]
        rows = sorted((m for m in ev.members if m["id"] == bid and m["time"] >= last_undone), key=lambda m: m["time"])
        stretches: list[tuple[int, int, int]] = []  # leo, first, last
        stretch: tuple[int, int, int] | None = None
        for i, m in enumerate(rows):
            leo, hw = m["log_end_offset"], m["high_watermark"]
            behind = leo is not None and hw is not None and 0 <= leo < hw
            if behind and stretch is not None and stretch[0] == leo:
                stretch = (leo, stretch[1], m["time"])
                continue
            if stretch is not None:
                stretches.append(stretch)
            stretch = (leo, last_undone if i == 0 else m["time"], m["time"]) if behind else None
        if stretch is not None:
            stretches.append(stretch)
        found += [
            {
                "node": alias,
                "broker": bid,
                "log_end_offset": leo,
                "from_s": _s(first),
                "to_s": _s(last),
                "seconds": round((last - first) / NS, 3),
            }
            for leo, first, last in stretches
            if last - first > bound_ns
        ]
    return found


def behind_since(ev: Evidence, last_undone: int) -> list[str]:
    """The brokers that the replication samples from `last_undone` on do not show fetching
    (history/kraft.py `caught_up`): while any is left, `stuck-broker-metadata` needs its whole
    window of samples."""
    rows: dict[int, list[tuple[int, Any, Any]]] = {}
    for m in ev.members:
        if m["time"] >= last_undone:
            rows.setdefault(m["id"], []).append((m["time"], m["log_end_offset"], m["high_watermark"]))
    return [
        alias
        for alias in ev.brokers
        if not caught_up((leo, hw) for _, leo, hw in sorted(rows.get(ev.aliases[alias], []), key=lambda r: r[0]))
    ]


def reaction_times(ev: Evidence) -> list[dict[str, Any]]:
    """Per fault that took effect: the time to each faulted broker's fencing, to each ISR shrink
    that removed a faulted node, and, for a fault on the active controller, to the next quorum leader."""
    ops: dict[int, dict[str, Any]] = {}
    for w in ev.ws:
        if w.stayed is None or w.does == events.IMPAIRED:  # the remote storage's faults leave the node up
            continue
        entry = ops.setdefault(
            w.op,
            {
                "op": w.op,
                "f": w.f,
                "nodes": [],
                "took_effect_s": _s(w.effect),
                "undone_s": _s(w.undone) if w.undone < ev.end else None,
                "fenced_after_s": {},
                "isr_shrinks": [],
            },
        )
        faulted = [w.node] if w.node is not None else sorted(w.grudge)
        entry["nodes"] = sorted(set(entry["nodes"]) | set(faulted))
        for node in faulted:
            bid = str(ev.aliases.get(node, ""))
            if node in ev.brokers:
                fenced = _first_fencing(ev.brokers_state.get(bid, States()), w)
                entry["fenced_after_s"][node] = _s(fenced - w.effect) if fenced is not None else None
            for part, states in sorted(ev.partitions.items()):
                now = states.at_time(w.invoke)
                if now is None or ev.aliases.get(node) not in now["isr"]:
                    continue
                out_of = next(
                    (
                        e
                        for e in states.events
                        if e["time"] is not None
                        and w.invoke <= e["time"] <= w.undone
                        and ev.aliases.get(node) not in e["isr"]
                    ),
                    None,
                )
                if out_of is not None:
                    entry["isr_shrinks"].append(
                        {"node": node, "partition": part, "after_s": _s(out_of["time"] - w.effect)}
                    )
        leader = quorum_rules.leader_at(ev.views, w.invoke - 1, ev.ws, ev.claims)  # before the fault's own window
        if leader is not None and _on(w, leader[0], ev.voters):
            t = quorum_rules.next_leader(ev.claims, w.invoke, leader, w.undone)
            entry["active_controller"] = leader[0]
            entry["next_quorum_leader_after_s"] = _s(t - w.effect) if t is not None else None
            entry["live_brokers_fenced_after_s"] = _live_fencings(ev, w)
    return list(ops.values())


def _live_fencings(ev: Evidence, w: Window) -> dict[str, float]:
    """Brokers that no fault touched, fenced while a fault on the active controller held or within
    a broker session after it was undone: spurious fencings (KAFKA-17793, KAFKA-15019: a blocked
    controller stops counting heartbeats). Reported, never an error: the contract has no rule."""
    until = w.undone + ev.setting_ns("broker.session.timeout.ms")
    dn = down(ev.ws)
    found = {}
    for node in ev.brokers:
        states = ev.brokers_state.get(str(ev.aliases.get(node, "")), States())
        fenced = next((t for t in _fencings(states) if w.invoke <= t <= until), None)
        touched = fenced is not None and (
            is_down(dn, node, w.invoke, fenced)
            or any(cut_between(ev.ws, node, m, w.invoke, fenced) for m in ev.aliases)
        )
        if fenced is not None and not touched:
            found[node] = _s(fenced - w.effect)
    return found


def _fencings(states: States) -> list[int]:
    """When an unfenced broker was fenced: not its registrations (a new incarnation starts fenced)."""
    out, was = [], True
    for e in states.events:
        if e.get("record") != REGISTER and e["fenced"] and not was and e["time"] is not None:
            out.append(e["time"])
        was = e["fenced"]
    return out


def _first_fencing(states: States, w: Window) -> int | None:
    """When the broker was first fenced after the fault's invoke: by a fencing record of the
    incarnation it faulted (the controller may fence it only after it was started again), not by
    the fenced registration of its next one; for a cut, one before the heal completed."""
    for e in states.events:
        if e["time"] is None or e["time"] < w.invoke:
            continue
        if w.node is None and e["time"] > w.healed:  # a cut's heal ends what it can answer for
            return None
        if e.get("record") == REGISTER:
            return e["time"] if e["time"] <= w.undone else None
        if e["fenced"]:
            return e["time"]
    return None


def _on(w: Window, node: str, voters: list[str]) -> bool:
    """Whether a fault is on `node`: a node fault on it, or a cut that leaves it short of a majority."""
    if w.node is not None:
        return w.node == node
    reach = [v for v in voters if v == node or not w.cuts(node, v)]
    return len(reach) < len(voters) // 2 + 1
