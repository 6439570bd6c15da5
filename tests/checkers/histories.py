"""For every anomaly of ../shared/anomalies.md, a history that has it (bad=True) and a near-identical
one that does not (bad=False). Key "t/0" unless said; values are small integers, offsets from 0."""

from __future__ import annotations

from collections.abc import Callable

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


# name -> builders whose bad history has exactly that anomaly (plus the listed companions)
CASES: dict[str, list[tuple[Callable[[bool], History], set[str]]]] = {
    "lost-write": [(lost_write, set()), (lost_write_info, set())],
    "unseen": [(unseen, set())],
    "duplicate": [(duplicate, set())],
    "inconsistent-offsets": [(inconsistent_offsets, {"lost-write"})],
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
    ],
    "int-nonmonotonic-send": [(int_nonmonotonic_send, set())],
    "int-send-skip": [(int_send_skip, set())],
    "precommitted-read": [(precommitted_read, set())],
}
