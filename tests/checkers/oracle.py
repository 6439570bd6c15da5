"""The anomaly contract (../shared/anomalies.md) in plain Python: the oracle the Spark checker is
compared with (test_oracle.py, bench/check_scale.py).

It is written from the contract's text, not from the Spark pipeline, and kept small and obvious:
every event is held in memory, and each rule is a loop over dicts. It counts instances the way
results.json does (one per lost or unseen send, per duplicated value, per conflicting offset, per
read for G1a, garbage-read and precommitted-read, per compared pair for the order rules), and says
how many of them are errors. Transaction cycles are counted per strongly connected component,
as the contract's table and checkers/txn/cycles.py say, from graphs built with every edge (realtime
order included: all pairs) and components found by plain reachability.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLIENT_FS = ("send", "poll", "txn")


@dataclass
class Op:
    id: int  # the index of the completing event, or of the invoke when none came
    invoke: int
    process: str
    f: str
    type: str
    sends: list[tuple[str, int, int | None]] = field(default_factory=list)  # key, value, offset
    reads: list[tuple[str, int | None, int]] = field(default_factory=list)  # key, offset, value, in order
    keys: list[str] | None = None  # assign/subscribe
    commits: dict[str, int] | None = None  # commit: key -> the next offset to read
    delivered: list[tuple[str, int, int, int | None]] = field(
        default_factory=list
    )  # share-poll: key, offset, value, count
    settings: dict[str, Any] = field(default_factory=dict)  # share-poll: its invoke's lock_ms, delivery_limit
    acks: list[tuple[str, int, str, str]] = field(default_factory=list)  # share-ack: key, offset, type, key's outcome
    starts: dict[str, int] | None = None  # share-offsets
    itime: int = 0
    ctime: int | None = None  # None: never completed


def _micro(value: Any) -> list | None:
    return value if isinstance(value, list) and all(isinstance(m, list) for m in value) else None


def operations(events: Iterable[dict[str, Any]]) -> list[Op]:
    """Invokes paired with the next event of their process; no completion means info."""
    open_: dict[str, tuple[dict, int]] = {}
    done: list[tuple[dict, dict | None]] = []
    for e in events:
        p = str(e["process"])
        if e["type"] == "invoke":
            open_[p] = (e, len(done))
            done.append((e, None))
        else:
            invoke, at = open_.pop(p)
            done[at] = (invoke, e)
    ops = []
    for invoke, completion in done:
        c = completion or {}
        op = Op(
            c.get("index", invoke["index"]), invoke["index"], str(invoke["process"]), invoke["f"], c.get("type", "info")
        )
        op.itime, op.ctime = invoke["time"], c.get("time")
        if op.process == "nemesis":
            continue
        if op.f in CLIENT_FS:
            micro = _micro(c.get("value")) or _micro(invoke.get("value")) or []
            for m in micro:
                if m and m[0] == "send" and len(m) > 2:
                    x = m[2]
                    offset, value = (x[0], x[1]) if isinstance(x, list) else (None, x)
                    if value is not None:
                        op.sends.append((m[1], int(value), offset))
                elif m and m[0] == "poll" and len(m) > 1:
                    for key, pairs in m[1].items():
                        op.reads += [(key, o, v) for o, v in pairs]
        elif op.f in ("assign", "subscribe"):
            keys = c.get("value") if isinstance(c.get("value"), list) else invoke.get("value")
            op.keys = list(keys or [])
        elif op.f == "share-poll":
            got = c.get("value") or [[None, {}]]
            for key, records in (got[0][1] if isinstance(got[0][1], dict) else {}).items():
                op.delivered += [(key, r[0], r[1], r[2] if len(r) > 2 else None) for r in records]
            op.settings = invoke["value"][0][1]
        elif op.f == "share-ack":
            outcome = (c.get("value") or [[None, {}]])[0][1] or {}
            for key, acks in invoke["value"][0][1].items():
                op.acks += [(key, int(o), t, outcome.get(key, "info")) for o, t in acks]
        elif op.f == "share-offsets" and c.get("value"):
            op.starts = dict(c["value"][0][1])
        elif op.f == "commit":
            offsets = c.get("value") if isinstance(c.get("value"), dict) else invoke.get("value")
            op.commits = {k: int(o) for k, o in (offsets or {}).items()}
        ops.append(op)
    return ops


@dataclass
class Found:
    count: int = 0
    errors: int = 0


def check(
    events: Iterable[dict[str, Any]], changes: dict[str, list[int]] | None = None, changes_unknown: bool = False
) -> dict[str, Found]:
    """Anomaly name -> instances and errors, for the anomalies that have any. `changes`: for the
    share rules, each key's leader changes and share-partition reloads (ns; none when not given,
    a bare history); `changes_unknown`: they could not be read, and what only one could excuse
    is counted under UNVERIFIED (the verdict is then unknown, not valid)."""
    ops = operations(events)
    found: dict[str, Found] = defaultdict(Found)

    def hit(name: str, error: bool = True) -> None:
        found[name].count += 1
        found[name].errors += int(error)

    ok_read = {(k, v) for op in ops if op.type == "ok" for k, _, v in op.reads}
    ok_poll = any(op.type == "ok" and (op.f == "poll" or (op.f == "txn" and op.reads)) for op in ops)

    # Must have committed: ok, or info with a value some ok poll read.
    committed = [
        op
        for op in ops
        if op.sends and (op.type == "ok" or (op.type == "info" and any((k, v) in ok_read for k, v, _ in op.sends)))
    ]
    committed_ids = {op.id for op in committed}

    # Version order: offsets from every poll and every must-have-committed send.
    at: dict[str, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
    for op in ops:
        for k, o, v in op.reads:
            if o is not None:
                at[k][o].add(v)
    for op in committed:
        for k, v, o in op.sends:
            if o is not None:
                at[k][o].add(v)
    index: dict[str, dict[int, int]] = {k: {o: i for i, o in enumerate(sorted(offs))} for k, offs in at.items()}
    value_idx: dict[tuple[str, int], list[int]] = defaultdict(list)  # (key, value) -> indices it was seen at
    value_offsets: dict[tuple[str, int], set[int]] = defaultdict(set)
    for k, offs in at.items():
        for o, vs in offs.items():
            for v in vs:
                value_idx[(k, v)].append(index[k][o])
                value_offsets[(k, v)].add(o)
            if len(vs) > 1:
                hit("inconsistent-offsets")
    for offs in value_offsets.values():
        if len(offs) > 1:
            hit("duplicate")

    def landing(k: str, v: int) -> int | None:
        """Where a sent value landed: its (first) index, wherever a read or an ack put it."""
        seen = value_idx.get((k, v))
        return min(seen) if seen else None

    # lost-write and unseen.
    bound: dict[str, int] = {}
    for k, v in ok_read:
        if (k, v) in value_idx:
            bound[k] = max(bound.get(k, -1), min(value_idx[(k, v)]))
    # A key that only share consumers read (no poll read it, a share-poll did) is judged by the
    # share rules alone: share-lost and share-unseen say what no member got (docs/checker.md).
    polled = {k for op in ops for k, _, _ in op.reads}
    shared_only = {k for op in ops for k, *_ in op.delivered} - polled
    for op in committed:
        for k, v, _ in op.sends:
            if (k, v) in ok_read or k in shared_only:
                continue
            if (k, v) in value_idx and k in bound and max(value_idx[(k, v)]) <= bound[k]:
                hit("lost-write")
            elif op.type == "ok":
                hit("unseen", ok_poll)

    # G1a, garbage-read, precommitted-read: single reads.
    failed = {(k, v) for op in ops if op.type == "fail" for k, v, _ in op.sends}
    tried = {(k, v) for op in ops for k, v, _ in op.sends}
    for op in ops:
        own = {(k, v) for k, v, _ in op.sends} if op.f == "txn" else set()
        for k, _, v in op.reads:
            if op.type == "ok" and (k, v) in failed:
                hit("G1a")
            if (k, v) not in tried:
                hit("garbage-read")
            if (k, v) in own:
                hit("precommitted-read")

    def idx(k: str, o: int | None) -> int | None:
        return None if o is None else index.get(k, {}).get(o)

    # Inside one operation, each key: consecutive reads of an ok one (the contract is silent on
    # other outcomes; the checker has always taken ok ones), and consecutive sends that landed of
    # one whose sends must have committed (ok, or info proven by a read).
    for op in ops:
        if op.type == "ok":
            _steps([(k, idx(k, o)) for k, o, _ in op.reads], "int-poll-skip", "int-nonmonotonic-poll", hit)
        if op.id in committed_ids:
            sends = [(k, landing(k, v)) for k, v, _ in op.sends]
            _steps(sends, "int-send-skip", "int-nonmonotonic-send", hit, ties_restate=op.type == "info")

    # Across operations of one process: references, moved by ok operations, cleared by an
    # assign/subscribe that leaves the key out.
    poll_ref: dict[tuple[str, str], int] = {}
    send_ref: dict[tuple[str, str], tuple[int, bool]] = {}  # index, and whether an info op put it there
    mode: dict[str, str] = {}
    for op in sorted(ops, key=lambda x: x.id):
        if op.keys is not None:
            mode[op.process] = op.f
            for ref in (poll_ref, send_ref):
                for p, k in [pk for pk in ref if pk[0] == op.process and pk[1] not in op.keys]:
                    del ref[(p, k)]
            continue
        if op.type == "ok" or (op.type == "info" and op.reads):
            first, last = _ends((k, idx(k, o)) for k, o, _ in op.reads)
            allowed = mode.get(op.process) == "subscribe"
            for k, i in first.items():
                ref = poll_ref.get((op.process, k))
                if ref is not None and i - ref > 1:
                    hit("poll-skip", not allowed)
                if ref is not None and i <= ref:
                    hit("nonmonotonic-poll", not allowed)
            if op.type == "ok":
                for k, i in last.items():
                    poll_ref[(op.process, k)] = i
        # Sends: every operation whose sends must have committed is compared and moves the
        # reference; an unproven info one does neither. An info send lands only where a read put
        # it, so at the very index of the send it is compared with, the two values share an
        # offset: the inconsistent-offsets already reported, not reported again.
        if op.id in committed_ids:
            info = op.type == "info"
            first_s, last_s = _ends((k, landing(k, v)) for k, v, _ in op.sends)
            for k, i in first_s.items():
                ref = send_ref.get((op.process, k))
                if ref is not None and (i < ref[0] or (i == ref[0] and not (info or ref[1]))):
                    hit("nonmonotonic-send")
            send_ref.update({(op.process, k): (i, info) for k, i in last_s.items()})
    _cycles(ops, ok_read, value_idx, hit)
    _commit_lost(ops, hit)
    _share(ops, committed, hit, changes or {}, changes_unknown)
    return dict(found)


SLACK_NS = 5 * 10**9


#: The oracle's count of share findings that only an unknown leader change or reload excused.
UNVERIFIED = "#share-unverified"


def _share(ops: list[Op], committed: list[Op], hit, changes: dict[str, list[int]], unknown: bool) -> None:
    """The share-group rules. Deliveries are paired by record (key, offset). A leader change or a
    share-partition reload of a key between two times excuses; with them unknown, anything only
    one could excuse is excused and counted under UNVERIFIED."""
    if not any(op.f == "share-poll" for op in ops):
        return
    end = max(op.ctime if op.ctime is not None else op.itime for op in ops)
    mine: dict[str, list[Op]] = defaultdict(list)
    for op in sorted(ops, key=lambda x: x.id):
        mine[op.process].append(op)

    def changed(key: str, lo: float, hi: float) -> bool:
        return any(lo <= t <= hi for t in changes.get(key, []))

    def excused(key: str, lo: float, hi: float) -> tuple[bool, bool]:
        """(excused, excused only because changes are unknown)."""
        known = changed(key, lo, hi)
        return known or unknown, unknown and not known

    def hold_end(d: Op, key: str, offset: int) -> float:
        process = mine[d.process]
        last = process[-1]
        ends = [last.ctime if last.ctime is not None else last.itime] if last.type == "info" else [end]
        lock = d.settings.get("lock_ms")
        if isinstance(lock, int | float):
            ends.append(d.itime + lock * 1e6 - SLACK_NS)
        for later in process:
            if later.itime < d.ctime:
                continue
            if later.f in ("crash", "close") or (
                later.f == "share-ack" and any(a[:2] == (key, offset) for a in later.acks)
            ):
                ends.append(later.itime)
                break
        return min(ends)

    def own_ack(d: Op, key: str, offset: int) -> str | None:
        """The outcome for `key` of the process's first share-ack naming the record after `d`."""
        for later in mine[d.process]:
            if later.f == "share-ack" and d.ctime is not None and later.itime >= d.ctime:
                for k, o, _, outcome in later.acks:
                    if (k, o) == (key, offset):
                        return outcome
        return None

    deliveries = [(d, key, o, v, n) for d in ops if d.f == "share-poll" for key, o, v, n in d.delivered]
    for d in ops:
        seen = set()
        for key, o, _, _ in d.delivered:
            if (key, o) in seen:
                hit("share-duplicate-in-poll")
            seen.add((key, o))
    limit = lambda d: d.settings.get("delivery_limit")  # noqa: E731
    for d, _, _, _, n in deliveries:
        if n is not None and isinstance(limit(d), int | float) and n > limit(d):
            hit("share-delivery-count")
    # Final acknowledgements: ok accepts and rejects, by record. A stale delivery's count is
    # judged by its own row (not above the accepted one's), not compared again as a pair's.
    stale: set[tuple[int, str, int]] = set()
    final: dict[tuple[str, int], list[tuple[Op, str]]] = defaultdict(list)
    for op in ops:
        if op.f == "share-ack" and op.ctime is not None:
            for key, o, t, outcome in op.acks:
                if outcome == "ok" and t in ("accept", "reject"):
                    final[(key, o)].append((op, op.process))
    for (key, o), acks in final.items():
        if len({p for _, p in acks}) >= 2:
            hit("share-double-acceptance")
        first, acker = min(acks, key=lambda x: (x[0].ctime, x[0].id))
        theirs = [d for d, k, off, _, _ in deliveries if d.process == acker and (k, off) == (key, o)]
        theirs = [d for d in theirs if d.ctime is not None and d.ctime <= first.itime]
        accepted = max(theirs, key=lambda d: d.ctime) if theirs else None
        n_acc = next((n for k, off, _, n in accepted.delivered if (k, off) == (key, o)), None) if accepted else None
        since = accepted.itime if accepted else first.itime
        for b, k, off, _, nb in deliveries:
            if (k, off) != (key, o) or not b.itime > first.ctime:
                continue
            own = own_ack(b, key, o)
            above = nb is not None and n_acc is not None and nb > n_acc
            ok, only_unknown = excused(key, since, b.ctime if b.ctime is not None else b.itime)
            if own == "ok" or (above and not ok):
                hit("share-redelivered-after-ack")
            elif above and only_unknown:
                hit(UNVERIFIED, False)
            elif not above and own in (None, "fail") and b.process != acker:
                hit("share-stale-delivery", False)
                stale.add((b.id, key, o))

    for a, key, o, _, na in deliveries:
        if a.ctime is None or o is None:
            continue
        for b, key_b, o_b, _, nb in deliveries:
            if (key_b, o_b) != (key, o) or b.ctime is None or not b.itime > a.ctime:
                continue
            concurrent = b.ctime < hold_end(a, key, o)
            stuck = na is not None and nb is not None and nb <= na and (b.id, key, o) not in stale
            if not (concurrent or stuck):
                continue
            ok, only_unknown = excused(key, a.itime, b.ctime)
            if ok:
                hit("share-redelivered-on-failover", False)
                if only_unknown:
                    hit(UNVERIFIED, False)
                continue
            if concurrent:
                hit("share-concurrent-delivery")
            if stuck:
                hit("share-delivery-count")

    got = {(key, v) for _, key, _, v, _ in deliveries}
    starts: dict[str, int] = {}
    for op in ops:
        if op.starts is not None:
            starts.update(op.starts)
    # The keys a share group consumed: the ones its operations name (the group's topic).
    consumed = set(starts) | {key for _, key, *_ in deliveries} | {key for op in ops for key, *_ in op.acks}
    for op in committed:
        for key, v, offset in op.sends:
            if (key, v) in got or key not in consumed:
                continue
            if offset is not None and key in starts and offset < starts[key]:
                hit("share-lost")
            elif op.type == "ok":
                hit("share-unseen")


def _commit_lost(ops: list[Op], hit) -> None:
    """A member given a key by a subscribe whose first poll of it (before its next assignment)
    starts below the latest ok commit of the key completed before the subscribe was invoked,
    when no other commit of the key overlapped that commit."""
    end = float("inf")
    commits = [op for op in ops if op.commits is not None]
    by_process: dict[str, list[Op]] = defaultdict(list)
    for op in sorted(ops, key=lambda x: x.id):
        by_process[op.process].append(op)
    for mine in by_process.values():
        before: list[str] = []
        for n, a in enumerate(mine):
            if a.keys is None:
                continue
            prior, before = before, a.keys
            if a.f != "subscribe" or a.type != "ok":
                continue
            for k in [k for k in a.keys if k not in prior]:
                done = [c for c in commits if k in c.commits and c.type == "ok" and c.ctime is not None]
                done = [c for c in done if c.ctime < a.itime]
                if not done:
                    continue
                latest = max(done, key=lambda c: c.ctime)
                lo, hi = latest.itime, latest.ctime
                others = [c for c in commits if c is not latest and k in c.commits]
                if any(c.itime <= hi and (c.ctime if c.ctime is not None else end) >= lo for c in others):
                    continue
                for later in mine[n + 1 :]:
                    if later.keys is not None:
                        break
                    offsets = [o for key, o, _ in later.reads if key == k and o is not None]
                    if offsets:
                        if offsets[0] < latest.commits[k]:
                            hit("commit-lost")
                        break


Graph = dict[int, set[int]]


def _cycles(ops: list[Op], ok_read: set, value_idx: dict[tuple[str, int], list[int]], hit) -> None:
    """G0, G1c, G1c-process, G1c-realtime: one instance per component of 2+ transactions."""
    nodes = [
        op
        for op in ops
        if op.f == "txn" and (op.type == "ok" or (op.type == "info" and any((k, v) in ok_read for k, v, _ in op.sends)))
    ]
    writer = {(k, v): op.id for op in nodes for k, v, _ in op.sends}
    at: dict[tuple[str, int], set[int]] = defaultdict(set)  # (key, index) -> transactions that wrote there
    for (k, v), t in writer.items():
        for i in value_idx.get((k, v), []):
            at[(k, i)].add(t)
    ww: set[tuple[int, int]] = set()
    for (k, i), ts in at.items():
        ww |= {(a, b) for a in ts for b in at.get((k, i + 1), set()) if a != b}
    wr = {(writer[(k, v)], op.id) for op in nodes if op.type == "ok" for k, _, v in op.reads if (k, v) in writer}
    wr = {(a, b) for a, b in wr if a != b}
    process = {(a.id, b.id) for a in nodes for b in nodes if a.process == b.process and a.invoke < b.invoke}
    realtime = {(a.id, b.id) for a in nodes for b in nodes if a.ctime is not None and a.ctime < b.itime}
    ids = [op.id for op in nodes]

    def comps(edges: set[tuple[int, int]]) -> list[set[int]]:
        out: dict[int, list[int]] = defaultdict(list)
        for a, b in edges:
            out[a].append(b)
        reach = {t: _reachable(t, out) for t in ids}
        out: list[set[int]] = []
        for t in ids:
            mine = {u for u in reach[t] if t in reach[u]} | {t}
            if len(mine) > 1 and mine not in out:
                out.append(mine)
        return out

    def inside(c: set[int], edges: set[tuple[int, int]]) -> bool:
        return any(a in c and b in c for a, b in edges)

    read_cycles = comps(wr)
    on_read = set().union(*read_cycles)
    for _ in comps(ww):
        hit("G0", False)
    for _ in read_cycles:
        hit("G1c")
    for c in comps(ww | wr):
        if inside(c, wr) and not c & on_read:
            hit("G1c", False)
    by_process = comps(wr | process)
    for c in by_process:
        if not c & on_read:
            hit("G1c-process")
    on_process = set().union(*by_process)
    for c in comps(wr | realtime):
        if not c & on_process:
            hit("G1c-realtime")


def _reachable(start: int, out: dict[int, list[int]]) -> set[int]:
    seen, todo = set(), [start]
    while todo:
        for b in out[todo.pop()]:
            if b not in seen:
                seen.add(b)
                todo.append(b)
    return seen


def _ends(rows: Iterable[tuple[str, int | None]]) -> tuple[dict[str, int], dict[str, int]]:
    """Per key, the first and the last index of an operation's rows (rows without one passed over)."""
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for k, i in rows:
        if i is not None:
            first.setdefault(k, i)
            last[k] = i
    return first, last


def _steps(rows: list[tuple[str, int | None]], skip: str, back: str, hit, ties_restate: bool = False) -> None:
    """Consecutive (key, index) rows of one operation, per key; rows without an index are passed
    over. `ties_restate`: two rows at one index are an inconsistent offset already reported (an
    info operation's sends), not a `back`."""
    prev: dict[str, int] = {}
    for k, i in rows:
        if i is None:
            continue
        if k in prev:
            if i - prev[k] > 1:
                hit(skip, skip != "int-send-skip")
            if i < prev[k] or (i == prev[k] and not ties_restate):
                hit(back)
        prev[k] = i


def check_file(path: str | Path) -> dict[str, Found]:
    with open(path, encoding="utf-8") as fh:
        return check(json.loads(line) for line in fh if line.strip())
