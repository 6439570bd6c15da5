"""For every anomaly of ../shared/anomalies.md, a history that has it (bad=True) and a near-identical
one that does not (bad=False). Key "t/0" unless said; values are small integers, offsets from 0."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.checkers.builder import History

K = "t/0"


def _sends(h: History, n: int, process: int = 0) -> None:
    for v in range(1, n + 1):
        h.send(process, K, [(v, v - 1)])


def lost_write(bad: bool) -> History:
    h = History()
    _sends(h, 3)
    h.poll(1, {K: [(0, 1)]})
    h.poll(2, {K: [(2, 3)]} if bad else {K: [(1, 2), (2, 3)]})
    return h


def lost_write_info(bad: bool) -> History:
    """Must have committed: an info send counts once an ok poll read one of its values."""
    h = History()
    h.send(0, K, [(1, 0)])
    h.send(0, K, [(2, None), (4, None)], type="info")
    h.send(5, K, [(3, 2)])
    h.poll(3, {K: [(1, 2)]}, type="fail")  # shows offset 1 holds value 2
    h.poll(1, {K: [(0, 1)]})
    h.poll(2, {K: [(2, 3), (3, 4)]} if bad else {K: [(2, 3)]})
    return h


def unseen(bad: bool) -> History:
    h = History()
    _sends(h, 2)
    h.poll(1, {K: [(0, 1)]} if bad else {K: [(0, 1), (1, 2)]})
    return h


def duplicate(bad: bool) -> History:
    h = History()
    _sends(h, 1)
    if not bad:
        h.send(0, K, [(2, 1)])
    h.poll(1, {K: [(0, 1), (1, 1 if bad else 2)]})
    return h


def inconsistent_offsets(bad: bool) -> History:
    h = History()
    h.send(0, K, [(1, 0)])
    h.send(0, K, [(2, None)], type="info")
    h.poll(1, {K: [(0, 2 if bad else 1)]})
    return h


def g1a(bad: bool) -> History:
    h = History()
    h.send(0, K, [(1, 0)])
    h.send(0, K, [(2, None)], type="fail" if bad else "info")
    h.poll(1, {K: [(0, 1), (1, 2)]})
    return h


def garbage_read(bad: bool) -> History:
    h = History()
    h.send(0, K, [(1, 0)])
    if not bad:
        h.send(0, K, [(9, None)], type="info")
    h.poll(1, {K: [(0, 1), (1, 9)]})
    return h


def poll_skip(bad: bool, f: str = "assign") -> History:
    h = History()
    h.assign(1, [K], f)
    _sends(h, 3)
    h.poll(2, {K: [(0, 1), (1, 2), (2, 3)]})
    h.poll(1, {K: [(0, 1)]})
    h.poll(1, {K: [(2, 3)]} if bad else {K: [(1, 2), (2, 3)]})
    return h


def poll_skip_cleared(bad: bool) -> History:
    """An assign that leaves the key out clears the reference: no skip after it."""
    h = History()
    h.assign(1, [K])
    _sends(h, 3)
    h.poll(2, {K: [(0, 1), (1, 2), (2, 3)]})
    h.poll(1, {K: [(0, 1)]})
    h.assign(1, [K] if bad else ["t/1"])
    h.assign(1, [K])
    h.poll(1, {K: [(2, 3)]})
    return h


def poll_skip_info(bad: bool) -> History:
    """Only ok operations move the reference: an info poll in between does not."""
    h = History()
    _sends(h, 3)
    h.poll(2, {K: [(0, 1), (1, 2), (2, 3)]})
    h.poll(1, {K: [(0, 1)]})
    h.poll(1, {K: [(1, 2)]}, type="info" if bad else "ok")
    h.poll(1, {K: [(2, 3)]})
    return h


def nonmonotonic_poll(bad: bool) -> History:
    h = History()
    _sends(h, 3)
    h.poll(1, {K: [(0, 1), (1, 2)]})
    h.poll(1, {K: [(1, 2), (2, 3)]} if bad else {K: [(2, 3)]})
    return h


def int_poll_skip(bad: bool) -> History:
    h = History()
    _sends(h, 3)
    h.poll(2, {K: [(0, 1), (1, 2), (2, 3)]})
    h.poll(1, {K: [(0, 1), (2, 3)]} if bad else {K: [(0, 1), (1, 2), (2, 3)]})
    return h


def int_nonmonotonic_poll(bad: bool) -> History:
    """Across two poll micro-ops of one transaction."""
    h = History()
    _sends(h, 2)
    first, second = ([(1, 2)], [(0, 1)]) if bad else ([(0, 1)], [(1, 2)])
    h.txn(1, [["poll"], ["poll"]], [["poll", {K: first}], ["poll", {K: second}]])
    return h


def nonmonotonic_send(bad: bool) -> History:
    h = History()
    h.send(0, K, [(1, 1)])
    h.send(0, K, [(2, 0)] if bad else [(2, 2)])
    h.send(3, K, [(3, 2 if bad else 0)])
    h.poll(1, {K: [(0, 2), (1, 1), (2, 3)]} if bad else {K: [(0, 3), (1, 1), (2, 2)]})
    return h


def int_nonmonotonic_send(bad: bool) -> History:
    h = History()
    h.send(0, K, [(1, 1), (2, 0)] if bad else [(1, 0), (2, 1)])
    h.poll(1, {K: [(0, 2), (1, 1)]} if bad else {K: [(0, 1), (1, 2)]})
    return h


def int_send_skip(bad: bool) -> History:
    h = History()
    h.send(0, K, [(1, 0), (3, 2)] if bad else [(1, 0), (3, 1)])
    h.send(2, K, [(2, 1 if bad else 2)])
    h.poll(1, {K: [(0, 1), (1, 2), (2, 3)]} if bad else {K: [(0, 1), (1, 3), (2, 2)]})
    return h


def precommitted_read(bad: bool) -> History:
    h = History()
    h.send(0, K, [(1, 0)])
    h.txn(1, [["send", K, 2], ["poll"]], [["send", K, [1, 2]], ["poll", {K: [[0, 1]] + ([[1, 2]] if bad else [])}]])
    h.poll(2, {K: [(0, 1), (1, 2)]})
    return h


# The contract as amended on 2026-11-23.


def info_poll_skip(bad: bool) -> History:
    """An info poll that carries values is compared with the reference (it does not move it)."""
    h = History()
    _sends(h, 3)
    h.poll(2, {K: [(0, 1), (1, 2), (2, 3)]})
    h.poll(1, {K: [(0, 1)]})
    h.poll(1, {K: [(2, 3)]} if bad else {K: [(1, 2)]}, type="info")
    return h


def send_reference_cleared(bad: bool) -> History:
    """An assign that leaves the key out clears the process's send reference too."""
    h = History()
    h.send(0, K, [(1, 1)])
    h.assign(0, [K] if bad else ["t/1"])
    h.send(0, K, [(2, 0)])
    h.poll(1, {K: [(0, 2), (1, 1)]})
    return h


def send_lands_where_read(bad: bool) -> History:
    """A send acknowledged without an offset lands where a read put its value."""
    h = History()
    h.send(0, K, [(1, 1)])
    h.send(0, K, [(2, None)])
    h.poll(1, {K: [(0, 2), (1, 1)]} if bad else {K: [(1, 1), (2, 2)]})
    return h


# The contract as amended on 2026-11-26: the send rules compare every operation whose sends must
# have committed. In each case below an info operation is proven (bad=True: an ok poll read its
# values) or not (bad=False: only an info poll read them, which puts them in the version order but
# proves nothing); nothing else differs.


def _proving(bad: bool) -> str:
    return "ok" if bad else "info"


def nonmonotonic_send_info(bad: bool) -> History:
    """As Jepsen's analysis has it: a late info send that a poll shows landing before the
    process's earlier acknowledged send."""
    h = History()
    h.send(0, K, [(1, 1)])
    h.send(0, K, [(2, None)], type="info")
    h.poll(1, {K: [(1, 1)]})
    h.poll(2, {K: [(0, 2)]}, type=_proving(bad))
    return h


def send_reference_info(bad: bool) -> History:
    """A proven info operation moves its process's send reference, so the next send, landing
    before it, goes back; an unproven one does not move it (the next send follows the first)."""
    h = History()
    h.send(0, K, [(1, 0)])
    h.send(0, K, [(2, None)], type="info")
    h.send(0, K, [(3, 1)])
    h.poll(1, {K: [(0, 1), (1, 3)]})
    h.poll(2, {K: [(2, 2)]}, type=_proving(bad))
    return h


def int_nonmonotonic_send_info(bad: bool) -> History:
    h = History()
    h.send(0, K, [(1, None), (2, None)], type="info")
    h.send(3, K, [(3, 2)])
    h.poll(1, {K: [(0, 2), (1, 1)]}, type=_proving(bad))
    h.poll(2, {K: [(2, 3)]})
    return h


def int_send_skip_info(bad: bool) -> History:
    h = History()
    h.send(0, K, [(1, None), (3, None)], type="info")
    h.send(2, K, [(2, 1)])
    h.poll(1, {K: [(0, 1), (1, 2), (2, 3)]}, type=_proving(bad))
    h.poll(3, {K: [(1, 2)]})
    return h


def unproven_info_between(bad: bool) -> History:
    """An unproven info send between two ok ones, seen landing before both, is not compared and
    does not move the reference: the third send is compared with the first (bad: it lands before
    it). Moving the reference to the info send would hide that."""
    h = History()
    h.send(0, K, [(1, 2)])
    h.send(0, K, [(2, None)], type="info")
    h.send(0, K, [(3, 1 if bad else 3)])
    h.poll(1, {K: [(1, 3), (2, 1)]} if bad else {K: [(2, 1), (3, 3)]})
    h.poll(2, {K: [(0, 2)]}, type="info")
    return h


# A proven info send at the offset of another of its process's sends: the offset is an
# `inconsistent-offsets`, and no send-order instance says it again (the existing
# `inconsistent_offsets` case has the info send after the ok one).


def inconsistent_offsets_info_reference(bad: bool) -> History:
    """The proven info send first: the ok send acknowledged at its offset is compared with it."""
    h = History()
    h.send(0, K, [(1, None)], type="info")
    h.send(0, K, [(2, 0 if bad else 1)])
    h.poll(1, {K: [(0, 1)]} if bad else {K: [(0, 1), (1, 2)]})
    return h


def inconsistent_offsets_inside_info(bad: bool) -> History:
    """Two sends of one proven info operation read at one offset."""
    h = History()
    h.send(0, K, [(1, 0)])
    h.send(0, K, [(2, None), (3, None)], type="info")
    h.poll(1, {K: [(0, 1), (1, 2)]})
    h.poll(2, {K: [(1 if bad else 2, 3)]})
    return h


# Transactions: dependency cycles. Each pattern is written into a Place (fresh keys, processes and
# values, so that the property tests can append one to a generated history) and ends with a fresh
# reader that reads its keys from the start, so nothing is unseen.


@dataclass
class Place:
    h: History = field(default_factory=History)
    keys: tuple[str, str, str] = (K, "t/1", "t/2")
    processes: tuple[int, int, int, int] = (0, 1, 2, 9)  # three writers, then the reader
    values: tuple[int, int, int, int] = (1, 2, 3, 4)


def _sent(key: str, value: int, offset: int) -> list[Any]:
    return ["send", key, [offset, value]]


def _read_all(p: Place, logs: dict[str, list[tuple[int, int]]]) -> History:
    p.h.poll(p.processes[3], {k: v for k, v in logs.items() if v})
    return p.h


def g0(bad: bool, p: Place | None = None) -> History:
    """T1 and T2 each write two keys; in the second their order is reversed (a ww cycle)."""
    p = p or Place()
    (a, b, _), (v1, v2, v3, v4) = p.keys, p.values
    p.h.txn(p.processes[0], [["send", a, v1], ["send", b, v2]], [_sent(a, v1, 0), _sent(b, v2, 1 if bad else 0)])
    p.h.txn(p.processes[1], [["send", a, v3], ["send", b, v4]], [_sent(a, v3, 1), _sent(b, v4, 0 if bad else 1)])
    return _read_all(p, {a: [(0, v1), (1, v3)], b: [(0, v4), (1, v2)] if bad else [(0, v2), (1, v4)]})


def g1c(bad: bool, p: Place | None = None) -> History:
    """Each of two transactions reads the other's write: a cycle of wr edges only (an error)."""
    p = p or Place()
    (a, b, _), (v1, v2, *_) = p.keys, p.values
    p.h.txn(p.processes[0], [["send", a, v1], ["poll"]], [_sent(a, v1, 0), ["poll", {b: [[0, v2]]} if bad else {}]])
    p.h.txn(p.processes[1], [["send", b, v2], ["poll"]], [_sent(b, v2, 0), ["poll", {a: [[0, v1]]}]])
    return _read_all(p, {a: [(0, v1)], b: [(0, v2)]})


def g1c_needs_ww(bad: bool, p: Place | None = None) -> History:
    """T1 writes a key first and reads T2's write to another, which T2 made inside T1's span,
    writing the first key after T1: ww T1 -> T2, wr T2 -> T1 (allowed: writes are not isolated)."""
    p = p or Place()
    (a, b, _), (v1, v2, v3, _) = p.keys, p.values
    p.h.invoke(p.processes[0], "txn", [["send", a, v1], ["poll"]])
    p.h.txn(p.processes[1], [["send", a, v3], ["send", b, v2]], [_sent(a, v3, 1 if bad else 0), _sent(b, v2, 0)])
    p.h.complete(p.processes[0], "txn", [_sent(a, v1, 0 if bad else 1), ["poll", {b: [[0, v2]]}]])
    return _read_all(p, {a: [(0, v1), (1, v3)] if bad else [(0, v3), (1, v1)], b: [(0, v2)]})


def _ordered(p: Place, same_process: bool, t2_reads: bool, t3_after_t1: bool = True) -> History:
    """T1 then T3, T2 spanning both: T2 reads T3's write, T1 reads T2's. Only T1 -> T3 (process
    order when they share a process, realtime order when T3 was invoked after T1 completed)
    closes the cycle."""
    (a, b, c), (v1, v2, v3, _) = p.keys, p.values
    p1, p2, p3 = p.processes[0], p.processes[1], p.processes[0 if same_process else 2]
    t1 = ([["send", a, v1], ["poll"]], [_sent(a, v1, 0), ["poll", {b: [[0, v2]]}]])
    p.h.invoke(p2, "txn", [["send", b, v2], ["poll"]])
    if t3_after_t1:
        p.h.txn(p1, *t1)
        p.h.txn(p3, [["send", c, v3]], [_sent(c, v3, 0)])
    else:
        p.h.invoke(p1, "txn", t1[0])
        p.h.txn(p3, [["send", c, v3]], [_sent(c, v3, 0)])
        p.h.complete(p1, "txn", t1[1])
    p.h.complete(p2, "txn", [_sent(b, v2, 0), ["poll", {c: [[0, v3]]} if t2_reads else {}]])
    return _read_all(p, {a: [(0, v1)], b: [(0, v2)], c: [(0, v3)]})


def g1c_process(bad: bool, p: Place | None = None) -> History:
    return _ordered(p or Place(), same_process=True, t2_reads=bad)


def g1c_realtime(bad: bool, p: Place | None = None) -> History:
    """As g1c_process, T3 on another process: realtime order closes the cycle. The near miss
    invokes T3 before T1 completes, so nothing orders them."""
    return _ordered(p or Place(), same_process=False, t2_reads=True, t3_after_t1=bad)


def _owned_then_moved(h: History, commit: Callable[[], None]) -> None:
    """Four values at offsets 0-3; member 1 is given the key, reads offsets 0 and 1, and commits
    (`commit`: next offset 2); then the key leaves it."""
    _sends(h, 4)
    h.assign(1, [K], "subscribe")
    h.poll(1, {K: [(0, 1), (1, 2)]})
    commit()
    h.assign(1, [], "subscribe")


def _starts(h: History, at: int, process: int = 2) -> None:
    h.poll(process, {K: [(o, o + 1) for o in range(at, 4)]})


def commit_lost(bad: bool) -> History:
    """Member 2, given the key after member 1's ok commit of offset 2, starts at 0 (or at 2)."""
    h = History()
    _owned_then_moved(h, lambda: h.op(1, "commit", {K: 2}, {K: 2}))
    h.assign(2, [K], "subscribe")
    _starts(h, 0 if bad else 2)
    return h


def commit_lost_overlapped(bad: bool) -> History:
    """Another commit overlapping the ok one: of another key (still lost), or of this key (its
    order at the coordinator unknown: not judged)."""
    h = History()

    def commits() -> None:
        h.invoke(3, "commit", {"t/1" if bad else K: 1})
        h.op(1, "commit", {K: 2}, {K: 2})
        h.complete(3, "commit", {"t/1" if bad else K: 1}, "info")

    _owned_then_moved(h, commits)
    h.assign(2, [K], "subscribe")
    _starts(h, 0)
    return h


def commit_lost_not_before(bad: bool) -> History:
    """The ok commit completes before member 2's subscribe is invoked, or only after."""
    h = History()
    _sends(h, 4)
    h.assign(1, [K], "subscribe")
    h.poll(1, {K: [(0, 1), (1, 2)]})
    h.invoke(1, "commit", {K: 2})
    if bad:
        h.complete(1, "commit", {K: 2})
        h.assign(2, [K], "subscribe")
    else:
        h.invoke(2, "subscribe", [K])
        h.complete(1, "commit", {K: 2})
        h.complete(2, "subscribe", [K])
    _starts(h, 0)
    return h


def commit_lost_info(bad: bool) -> History:
    """The commit was ok, or info (its outcome unknown: nothing was acknowledged)."""
    h = History()
    _owned_then_moved(h, lambda: h.op(1, "commit", {K: 2}, {K: 2}, "ok" if bad else "info"))
    h.assign(2, [K], "subscribe")
    _starts(h, 0)
    return h


def commit_lost_kept(bad: bool) -> History:
    """Member 2's subscribe adds the key, or keeps it (its previous assignment held it, so its
    position is its own, not the group's)."""
    h = History()
    h.assign(2, ["t/1"] if bad else [K], "subscribe")
    _owned_then_moved(h, lambda: h.op(1, "commit", {K: 2}, {K: 2}))
    h.assign(2, [K], "subscribe")
    _starts(h, 0)
    return h


def _shared(h: History, n: int = 2) -> None:
    """Values 1..n sent to K at offsets 0..n-1."""
    _sends(h, n)


def share_lost(bad: bool) -> History:
    """Value 2 (offset 1) never delivered: below the final start offset 2, or delivered."""
    h = History()
    _shared(h)
    h.share_poll(1, {K: [(0, 1, 1), (1, 2, 1)] if not bad else [(0, 1, 1)]})
    h.share_ack(1, {K: [(0, "accept"), (1, "accept")] if not bad else [(0, "accept")]})
    h.share_offsets({K: 2})
    return h


def share_unseen(bad: bool) -> History:
    """Value 2 (offset 1) never delivered and the start offset still 1 (not done), or delivered."""
    h = History()
    _shared(h)
    h.share_poll(1, {K: [(0, 1, 1)] if bad else [(0, 1, 1), (1, 2, 1)]})
    h.share_ack(1, {K: [(0, "accept")] if bad else [(0, "accept"), (1, "accept")]})
    h.share_offsets({K: 1 if bad else 2})
    return h


def share_concurrent_delivery(bad: bool) -> History:
    """Member 1 acquires value 1 with a 10 s lock, and holds it surely until 10 - 5 s after its
    poll's invoke; member 2 is delivered it again 4 s later, or 6 s later (the hold lapsed one
    second before)."""
    h = History()
    _shared(h, 1)
    h.share_poll(1, {K: [(0, 1, 1)]})
    h.wait(3.0 if bad else 5.0)
    h.share_poll(2, {K: [(0, 1, 2)]}, took=0.5)
    h.share_ack(2, {K: [(0, "accept")]})
    h.share_offsets({K: 1})
    return h


def share_redelivered_after_ack(bad: bool) -> History:
    """Member 1 accepts value 1 (ok, or an ack whose outcome is unknown); the broker hands it to
    member 2 again, its count grown past the accepted delivery's (member 2 never acknowledges)."""
    h = History()
    _shared(h, 1)
    h.share_poll(1, {K: [(0, 1, 1)]})
    h.share_ack(1, {K: [(0, "accept")]}, "ok" if bad else "info")
    h.share_poll(2, {K: [(0, 1, 2)]})
    h.share_offsets({K: 1})
    return h


def share_redelivered_after_ack_taken(bad: bool) -> History:
    """The same record handed to member 2 from a stale buffer (its count not above the accepted
    one's); member 2's own release of it comes back ok (the broker took its acquisition: an
    error), or with no outcome known (neither taken nor refused: nothing to say)."""
    h = History()
    _shared(h, 1)
    h.share_poll(1, {K: [(0, 1, 1)]})
    h.share_ack(1, {K: [(0, "accept")]})
    h.share_poll(2, {K: [(0, 1, None)]})
    h.share_ack(2, {K: [(0, "release")]}, "ok" if bad else "info")
    h.share_offsets({K: 1})
    return h


def share_double_acceptance(bad: bool) -> History:
    """Member 1 holds value 1 past its 10 s lock; member 2 is handed it (count 2) and accepts it;
    member 1's late accept then comes back ok (both taken: an error) or is refused."""
    h = History()
    _shared(h, 1)
    h.share_poll(1, {K: [(0, 1, 1)]})
    h.wait(11.0)
    h.share_poll(2, {K: [(0, 1, 2)]})
    h.share_ack(2, {K: [(0, "accept")]})
    h.share_ack(1, {K: [(0, "accept")]}, "ok" if bad else "fail")
    h.share_offsets({K: 1})
    return h


def share_stale_delivery(bad: bool) -> History:
    """Member 1 accepts value 1; member 2 is handed it (no count said) by a poll invoked after
    that accept completed, or (the near miss) just before it did, and its accept is refused."""
    h = History()
    _shared(h, 1)
    h.share_poll(1, {K: [(0, 1, 1)]})
    accept = [["share-ack", {K: [[0, "accept"]]}]]
    poll = [["share-poll", {"group": "g", "lock_ms": 10_000, "delivery_limit": 5}]]
    if bad:
        h.op(1, "share-ack", accept, [["share-ack", {K: "ok"}]])
        h.invoke(2, "share-poll", poll)
    else:
        h.invoke(1, "share-ack", accept)
        h.invoke(2, "share-poll", poll)
        h.complete(1, "share-ack", [["share-ack", {K: "ok"}]])
    h.complete(2, "share-poll", [["share-poll", {K: [[0, 1, None]]}]])
    h.share_ack(2, {K: [(0, "accept")]}, "fail")
    h.share_offsets({K: 1})
    return h


def share_delivery_count(bad: bool) -> History:
    """A release, then a second delivery whose count does not grow (2 then 2), or does (2 then 3)."""
    h = History()
    _shared(h, 1)
    h.share_poll(1, {K: [(0, 1, 2)]})
    h.share_ack(1, {K: [(0, "release")]})
    h.share_poll(2, {K: [(0, 1, 2 if bad else 3)]})
    h.share_ack(2, {K: [(0, "accept")]})
    h.share_offsets({K: 1})
    return h


def share_delivery_over_limit(bad: bool) -> History:
    """A delivery count above the limit D = 3 (4), or at it (3)."""
    h = History()
    _shared(h, 1)
    h.share_poll(1, {K: [(0, 1, 4 if bad else 3)]}, limit=3)
    h.share_ack(1, {K: [(0, "accept")]})
    h.share_offsets({K: 1})
    return h


def share_duplicate_in_poll(bad: bool) -> History:
    """One share-poll returns offset 0 twice, or offsets 0 and 1."""
    h = History()
    _shared(h)
    h.share_poll(1, {K: [(0, 1, 1), (0, 1, 1) if bad else (1, 2, 1)]})
    h.share_poll(2, {K: [(1, 2, 1)]} if bad else {})
    h.share_ack(2, {K: [(1, "accept")]} if bad else {})
    h.share_ack(1, {K: [(0, "accept")] if bad else [(0, "accept"), (1, "accept")]})
    h.share_offsets({K: 2})
    return h


#: Cases whose bad history has its anomaly only as allowed instances, though the anomaly can be an error.
ALLOWED = {g1c_needs_ww}

# name -> builders whose bad history has exactly that anomaly (plus the listed companions)
CASES: dict[str, list[tuple[Callable[[bool], History], set[str]]]] = {
    "lost-write": [(lost_write, set()), (lost_write_info, {"int-send-skip"})],
    "unseen": [(unseen, set())],
    "duplicate": [(duplicate, set())],
    "inconsistent-offsets": [
        (inconsistent_offsets, {"lost-write"}),
        (inconsistent_offsets_info_reference, {"lost-write"}),
        (inconsistent_offsets_inside_info, set()),
    ],
    "G1a": [(g1a, set())],
    "garbage-read": [(garbage_read, set())],
    "poll-skip": [(poll_skip, set()), (poll_skip_cleared, set()), (poll_skip_info, set()), (info_poll_skip, set())],
    "nonmonotonic-poll": [(nonmonotonic_poll, set())],
    "int-poll-skip": [(int_poll_skip, set())],
    "int-nonmonotonic-poll": [(int_nonmonotonic_poll, set())],
    "nonmonotonic-send": [
        (nonmonotonic_send, set()),
        (send_reference_cleared, set()),
        (send_lands_where_read, set()),
        (nonmonotonic_send_info, set()),
        (send_reference_info, set()),
        (unproven_info_between, set()),
    ],
    "int-nonmonotonic-send": [(int_nonmonotonic_send, set()), (int_nonmonotonic_send_info, set())],
    "int-send-skip": [(int_send_skip, set()), (int_send_skip_info, set())],
    "precommitted-read": [(precommitted_read, set())],
    "share-lost": [(share_lost, set())],
    "share-unseen": [(share_unseen, set())],
    "share-concurrent-delivery": [(share_concurrent_delivery, set())],
    "share-redelivered-after-ack": [
        (share_redelivered_after_ack, set()),
        (share_redelivered_after_ack_taken, set()),
    ],
    "share-double-acceptance": [(share_double_acceptance, set())],
    "share-stale-delivery": [(share_stale_delivery, set())],
    "share-delivery-count": [(share_delivery_count, set()), (share_delivery_over_limit, set())],
    "share-duplicate-in-poll": [(share_duplicate_in_poll, set())],
    "commit-lost": [
        (commit_lost, set()),
        (commit_lost_overlapped, set()),
        (commit_lost_not_before, set()),
        (commit_lost_info, set()),
        (commit_lost_kept, set()),
    ],
    "G0": [(g0, set())],
    "G1c": [(g1c, set()), (g1c_needs_ww, set())],
    "G1c-process": [(g1c_process, set())],
    "G1c-realtime": [(g1c_realtime, set())],
}
