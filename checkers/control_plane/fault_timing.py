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
from kafka_chaos.checkers.control_plane.node_faults import (
    Window,
    cut_between,
    down,
    is_down,
    majority_reachable,
)
from kafka_chaos.history import events
from kafka_chaos.history.faults import FAULTED_DOWN
from kafka_chaos.history.kraft import caught_up
from kafka_chaos.history.metadata_replay import REGISTER
from kafka_chaos.history.stall import stall_within

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
    #: the host stall probe's wakes (history/stall.py `read_wakes`); None: the run had no probe
    wakes: list[int] | None = None
    #: when the first ok send to each partition after each fault completed (None: not known, and
    #: stale-isr-member counts from the fault taking effect)
    sends: FirstSends | None = None
    #: the LeaderChange records (epoch, leader, offset, time) of the reference log
    leader_changes: list[dict[str, Any]] = field(default_factory=list)
    #: every timing rule instance judged, found or not (results.json's `judged_windows`)
    judged: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
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

    def stall(self, start: int, end: int) -> int:
        """The host stall measured inside [start, end] (0 without a probe)."""
        return stall_within(self.wakes, start, end)

    def note(self, rule: str, entry: dict[str, Any]) -> None:
        """One judged instance of a timing rule, with its window and the stall added."""
        self.judged.setdefault(rule, []).append(entry)


@dataclass
class FirstSends:
    """When the first `ok` send to a partition invoked at or after a moment (a fault taking effect)
    completed: `exact` for the moments asked on Spark within their own second, `seconds` for the
    first send of each later second (checkers/control_plane/judge.py `send_queries`)."""

    exact: dict[tuple[str, int], int] = field(default_factory=dict)  # (partition, moment) -> completion
    seconds: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # partition -> (second, completion)

    def after(self, part: str, t: int) -> int | None:
        """The completion of the first ok send to `part` invoked at or after `t`; None: none was."""
        if (part, t) in self.exact:
            return self.exact[(part, t)]
        second = t // NS
        return next((done for sec, done in self.seconds.get(part, ()) if sec > second), None)


def _s(t: int | None) -> float | None:
    return None if t is None else round(t / NS, 3)


def activation(ev: Evidence, offset: int) -> int | None:
    """When the quorum's high watermark was first seen past `offset` (a leader's LeaderChange
    record): the first sample that shows it, so a late sample never makes an alarm. None: never."""
    return next((s["time"] for s in ev.samples if s["high_watermark"] > offset), None)


def _majority_regained(ev: Evidence, a: int, b: int) -> tuple[bool, list[int]]:
    """Whether a majority of the voters could reach each other at `a`, and each later moment before
    `b` at which they came to reach each other again."""
    moments = sorted({m for w in ev.ws for m in (w.invoke, w.effect or w.invoke, w.healed, w.undone) if a < m < b})
    was = majority_reachable(ev.ws, ev.voters, a, ev.lost)
    first, regains = was, []
    for m in moments:
        now = majority_reachable(ev.ws, ev.voters, m + 1, ev.lost)
        if now and not was:
            regains.append(m)
        was = now
    return first, regains


def session_start(ev: Evidence, w: Window, bound_ns: int, not_checked: dict[str, str]) -> int | None:
    """When the controller's clock of a faulted broker's session starts, by the contract (amended
    2026-12-06): the latest of the fault taking effect; the activation of each quorum leader
    elected while the broker stayed down, whatever fault caused the election (a controller that
    takes over starts every broker's session afresh); and the last moment a majority of the voters
    came to reach each other again. None: the rule does not apply (no majority ever again), or
    cannot be judged (said in `not_checked`)."""
    assert w.effect is not None
    had, regains = _majority_regained(ev, w.effect, w.undone)
    if not had and not regains:
        return None  # no controller could fence it: the bound never starts
    starts = [w.effect, *regains]
    # elected since the fault began: a stopped controller resigns while its stop is under way
    elected = [lc for lc in ev.leader_changes if lc["time"] is not None and w.invoke <= lc["time"] < w.undone]
    for lc in elected:
        active = activation(ev, lc["offset"])
        if active is None:
            not_checked.setdefault(
                "unfenced-down-broker",
                f"op {w.op}: the quorum leader of epoch {lc['epoch']} elected while {w.node} was down"
                " is not seen activated before the evidence ends",
            )
            return None
        starts.append(active)
    leader = quorum_rules.leader_at(ev.views, w.invoke - 1, ev.ws, ev.claims)
    if leader is not None and any(x.op == w.op and _on(x, leader[0], ev.voters) for x in ev.ws):
        # The fault took the active controller: until a next one is active, nobody counts the session.
        taken_over = [lc for lc in elected if lc["epoch"] > leader[1]]
        if not taken_over and w.effect + bound_ns < w.undone:
            why = f"no next quorum leader seen activated after {w.f} of the active controller {leader[0]} (op {w.op})"
            not_checked.setdefault("unfenced-down-broker", why)
            return None
        if not taken_over:
            return None
    return max(starts)


def unfenced_down_broker(ev: Evidence, bound_ns: int, not_checked: dict[str, str]) -> list[dict[str, Any]]:
    """A broker the nemesis killed, stopped or paused, that stayed so, still unfenced in the
    committed metadata `broker.session.timeout.ms` + S (+ the host stall inside that window) after
    its session's clock started (`session_start`). A deadline after the evidence ends is not checked."""
    found = []
    name = "unfenced-down-broker"
    for w in ev.ws:
        if w.does not in FAULTED_DOWN or w.node not in ev.brokers or w.effect is None:
            continue
        start = session_start(ev, w, bound_ns, not_checked)
        if start is None:
            continue
        stall = ev.stall(start, start + bound_ns)
        deadline = start + bound_ns + stall
        if deadline >= w.undone:
            if w.undone >= ev.end:
                not_checked.setdefault(name, f"op {w.op}: the evidence ended before its deadline ({_s(deadline)} s)")
            continue
        if not majority_reachable(ev.ws, ev.voters, deadline, ev.lost):
            # no controller could commit a fencing then: not judged, and results.json says why
            why = "no majority of voters at the deadline"
            ev.note(name, {"node": w.node, "op": w.op, "deadline_s": _s(deadline), "found": False, "why": why})
            continue
        hw = ev.hw_by(deadline)
        if hw is None:
            not_checked.setdefault(name, "no quorum-replication sample after a deadline")
            continue
        broker = str(ev.aliases[w.node])
        state = ev.brokers_state.get(broker, States()).committed_by(hw, deadline)
        unfenced = state is not None and not state["fenced"]
        entry = {
            "node": w.node,
            "broker": int(broker),
            "fault": w.f,
            "op": w.op,
            "took_effect_s": _s(w.effect),
            "session_from_s": _s(start),
            "stall_s": _s(stall),
            "deadline_s": _s(deadline),
            "high_watermark": hw,
        }
        ev.note(name, {**entry, "found": unfenced})
        if unfenced:
            found.append({**entry, "offset": state["offset"]})
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


def counted(ev: Evidence, leader: str, a: int, b: int) -> list[tuple[int, int]]:
    """The stretches of [a, b] in which an active controller existed and `leader`, up, could reach
    it (it, or no network fault that may have cut them apart): stale-isr-member's counted time."""
    if b <= a:
        return []
    spans = _active_spans(ev, a, b)
    moments = {a, b}
    for _, s0, e0 in spans:
        moments |= {s0, e0}
    for s0, e0 in ev.dn.get(leader, ()):
        moments |= {s0, e0}
    for w in ev.ws:
        if w.node is None:
            moments |= {w.invoke, w.healed}
    points = sorted(m for m in moments if a <= m <= b)
    out: list[tuple[int, int]] = []
    for x, y in zip(points, points[1:], strict=False):
        mid = (x + y) // 2
        holder = next((c for c, s0, e0 in spans if s0 <= mid < e0), None)
        ok = (
            holder is not None
            and not is_down(ev.dn, leader, mid)
            and (holder == leader or not cut_between(ev.ws, leader, holder, mid))
        )
        if ok and y > x:
            if out and out[-1][1] == x:
                out[-1] = (out[-1][0], y)
            else:
                out.append((x, y))
    return out


def _reach(stretches: list[tuple[int, int]], need: int) -> int | None:
    """The moment at which `need` ns of the stretches have passed; None: they hold less."""
    for x, y in stretches:
        if y - x >= need:
            return x + need
        need -= y - x
    return None


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


def _leaderships(states: States, since: int, leader: int) -> list[tuple[int, int]]:
    """(from, leader id) of the partition's leader from `since` on: the one it had then, and each
    change of it written after (a deleted partition's leader: -1)."""
    out = [(since, leader)]
    for e in states.events:
        if e["time"] is None or e["time"] <= since:
            continue
        now = e["leader"] if e["leader"] is not None else -1
        if now != out[-1][1]:
            out.append((e["time"], now))
    return out


def stale_isr_member(ev: Evidence, bound_ns: int, not_checked: dict[str, str]) -> list[dict[str, Any]]:
    """A follower faulted (down, or cut from its partition's leader) that stayed so and is still in
    that partition's committed ISR once 1.5 x `replica.lag.time.max.ms` + S (+ the host stall inside
    that window) of counted time (`counted`) has passed, by the contract amended 2026-12-06: counted
    from the later of the fault taking effect and the completion of the first ok send to the
    partition invoked after it (a partition no ok send wrote after the fault is not judged), and
    again from each change of the partition's leader. A count that has not reached the bound when
    the evidence ends is not checked. A cut replaced by a partition that still cuts the follower
    from its leader stays the one fault (`_cut_until`)."""
    found = []
    by_id = {str(i): a for a, i in ev.aliases.items()}
    for w in ev.ws:
        if w.stayed is None or w.effect is None or not (w.does in FAULTED_DOWN or w.node is None):
            continue
        for part, states in sorted(ev.partitions.items()):
            now = states.at_time(w.effect)
            if now is None or now["leader"] is None or now["leader"] < 0:
                continue
            followers = [by_id.get(str(r)) for r in now["isr"] if r != now["leader"]]
            if w.node is not None:
                faulted = [w.node] if w.node in followers else []
            else:
                leader0 = by_id.get(str(now["leader"]))
                faulted = [f for f in followers if f is not None and leader0 and w.cuts(f, leader0, replication=True)]
            if not faulted:
                continue
            first = w.effect if ev.sends is None else ev.sends.after(part, w.effect)
            if first is None:
                continue  # no ok send wrote the partition after the fault: not judged
            start = max(w.effect, first)
            for f in faulted:
                entry = _stale_one(ev, w, part, states, f, start, bound_ns, not_checked, by_id)
                if entry is not None:
                    found.append(entry)
    return found


def _stale_one(
    ev: Evidence,
    w: Window,
    part: str,
    states: States,
    f: str,
    start: int,
    bound_ns: int,
    not_checked: dict[str, str],
    by_id: dict[str, str],
) -> dict[str, Any] | None:
    """One faulted follower of one partition: judged in each leadership from the fault on."""
    name = "stale-isr-member"
    now = states.at_time(w.effect)
    assert now is not None
    terms = _leaderships(states, w.effect, now["leader"])
    for i, (since, lid) in enumerate(terms):
        until = terms[i + 1][0] if i + 1 < len(terms) else None
        leader = by_id.get(str(lid))
        if leader is None or leader == f:
            if until is None:
                return None
            continue
        if w.node is not None:
            stays = w.undone
        elif w.cuts(f, leader, replication=True):
            stays = _cut_until(ev, w, f, leader)
        else:
            return None  # the new leader is not cut from it: the fault no longer keeps it out
        begin = max(start, since)
        limit = min(x for x in (until, stays, ev.end) if x is not None)
        stretches = counted(ev, leader, begin, limit)
        plain = _reach(stretches, bound_ns)
        if plain is None:
            if until is not None and until < min(stays, ev.end):
                continue  # the leader changed first: the count starts again
            if stays < ev.end:
                return None  # the fault was undone first
            not_checked.setdefault(name, f"op {w.op}: the evidence ended before its bound elapsed (in counted time)")
            return None
        stall = ev.stall(begin, plain)
        deadline = _reach(stretches, bound_ns + stall) if stall else plain
        if deadline is None:
            if stays < ev.end and (until is None or stays <= until):
                return None
            if until is not None and until < ev.end:
                continue
            not_checked.setdefault(name, f"op {w.op}: the evidence ended before its bound elapsed (in counted time)")
            return None
        hw = ev.hw_by(deadline)
        if hw is None:
            not_checked.setdefault(name, "no quorum-replication sample after a deadline")
            return None
        committed = states.committed_by(hw, deadline)
        stale = committed is not None and ev.aliases[f] in committed["isr"]
        entry = {
            "node": f,
            "partition": part,
            "leader": lid,
            "fault": w.f,
            "op": w.op,
            "took_effect_s": _s(w.effect),
            "count_from_s": _s(begin),
            "stall_s": _s(stall),
            "deadline_s": _s(deadline),
        }
        ev.note(name, {**entry, "found": stale})
        if not stale:
            return None
        return {**entry, "isr": list(committed["isr"]), "offset": committed["offset"]}
    return None


def stuck_broker_metadata(
    ev: Evidence, last_undone: int | None, bound_ns: int, name: str = "stuck-broker-metadata"
) -> list[dict[str, Any]]:
    """After the last fault was undone, a broker that stays behind the quorum's high watermark with
    its log end offset unmoved for longer than 30 s + S, lengthened by the host stall inside the
    window (from the stretch's start). A broker behind in the first sample after
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
        for leo, first, last in stretches:
            stall = ev.stall(first, first + bound_ns)
            entry = {
                "node": alias,
                "broker": bid,
                "log_end_offset": leo,
                "from_s": _s(first),
                "to_s": _s(last),
                "seconds": round((last - first) / NS, 3),
                "stall_s": _s(stall),
            }
            over = last - first > bound_ns + stall
            ev.note(name, {**entry, "found": over})
            if over:
                found.append(entry)
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
