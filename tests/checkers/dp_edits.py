"""Edits of a real consumer group's history (a `subscribe` run), as a broken broker, coordinator or
client would have left it, and their near misses: what tests/checkers/test_real_runs.py makes the
data-plane rules of ../shared/anomalies.md flag, or not, by name.

Each edit finds its target by what it means (a record read once, at the end of its poll; a member
given a key after an acknowledged commit of it) and asserts that it found it, so that an edit that
changed nothing makes its test fail. Each returns the facts the rule's first example must show.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kafka_chaos.history.run_dir import RunDir
from tests.checkers.cp_edits import lines, write


def client_ops(events: list[dict]) -> Iterator[tuple[dict, dict]]:
    """Each client operation as (invoke, completion), in completion order (tests/checkers/share_edits.py too)."""
    pending: dict[Any, dict] = {}
    for e in events:
        if e["process"] == "nemesis":
            continue
        if e["type"] == "invoke":
            pending[e["process"]] = e
        else:
            yield pending.pop(e["process"]), e


def _reads(ok: dict) -> Iterator[tuple[str, list]]:
    """The (key, [[offset, value], ...]) of an ok poll, micro-op by micro-op."""
    for m in ok["value"]:
        yield from m[1].items()


def _polls(events: list[dict]) -> list[tuple[dict, dict]]:
    return [(i, o) for i, o in client_ops(events) if o["f"] == "poll" and o["type"] == "ok"]


def _tail_read(events: list[dict]) -> tuple[str, int, int]:
    """A record read by one poll alone, as the last of its key there, with a later record of its
    key read after it: (key, offset, value), the highest such offset of the first key."""
    seen: dict[tuple[str, int], list[bool]] = {}
    for _, ok in _polls(events):
        for key, records in _reads(ok):
            for n, (offset, _) in enumerate(records):
                seen.setdefault((key, offset), []).append(n == len(records) - 1)
    found = sorted(
        (k, o) for (k, o), last in seen.items() if last == [True] and any(k2 == k and o2 > o for k2, o2 in seen)
    )
    assert found, "no record read once, last of its poll, before a later one of its key"
    key = found[0][0]
    offset = max(o for k, o in found if k == key)
    value = next(v for _, ok in _polls(events) for k, rs in _reads(ok) if k == key for o, v in rs if o == offset)
    return key, offset, value


def _drop_read(events: list[dict], key: str, offset: int) -> None:
    for _, ok in _polls(events):
        for m in ok["value"]:
            if key in m[1]:
                m[1][key] = [r for r in m[1][key] if r[0] != offset]


def lose_write(run: RunDir) -> dict[str, Any]:
    """A broker loses an acknowledged record that later records of its key outlive: no poll reads it."""
    events = lines(run.history)
    key, offset, value = _tail_read(events)
    _drop_read(events, key, offset)
    write(run.history, events)
    return {"key": key, "values": [value]}


def lose_unacknowledged(run: RunDir) -> dict[str, Any]:
    """Near miss of `lose_write`: the same record unread, but its send timed out (`info`, no
    offset known): nothing says it committed."""
    events = lines(run.history)
    key, offset, value = _tail_read(events)
    _drop_read(events, key, offset)
    sent = [
        ok
        for _, ok in client_ops(events)
        if ok["f"] == "send" and ok["type"] == "ok" and [key, offset, value] in [[m[1], *m[2]] for m in ok["value"]]
    ]
    assert len(sent) == 1, f"no one send of {key} value {value}"
    (ok,) = sent
    assert len(ok["value"]) == 1, "the send wrote more than that record"
    ok.update(type="info", value=[["send", key, value]])
    write(run.history, events)
    return {"key": key, "values": [value]}


def _assignment_after_commit(events: list[dict]) -> tuple[dict, dict, str, dict]:
    """A `subscribe` that gives a member a key it did not hold, after an ok commit of that key that
    completed before it was invoked, with no other commit of the key overlapping that one; and the
    member's first poll of the key after it. Returns (subscribe invoke, that poll's completion,
    key, the commit's completion)."""
    ops = list(client_ops(events))
    held: dict[Any, set[str]] = {}
    for n, (inv, ok) in enumerate(ops):
        if ok["f"] != "subscribe" or ok["type"] != "ok":
            continue
        added = set(ok["value"]) - held.get(ok["process"], set())
        held[ok["process"]] = set(ok["value"])
        for key in sorted(added):
            commits = [
                (ci, co)
                for ci, co in ops
                if co["f"] == "commit" and co["type"] == "ok" and key in co["value"] and co["time"] < inv["time"]
            ]
            if not commits:
                continue
            ci, co = max(commits, key=lambda c: c[1]["time"])
            if any(c is not co and c["time"] > ci["time"] and i["time"] < co["time"] for i, c in commits):
                continue
            poll = next(
                (
                    o
                    for _, o in ops[n + 1 :]
                    if o["process"] == ok["process"]
                    and o["f"] == "poll"
                    and o["type"] == "ok"
                    and key in o["value"][0][1]
                ),
                None,
            )
            if poll is not None:
                return inv, poll, key, co
    raise AssertionError("no member given a key after an acknowledged commit of it")


def _record(events: list[dict], key: str, offset: int) -> list:
    return next([o, v] for _, ok in _polls(events) for k, rs in _reads(ok) if k == key for o, v in rs if o == offset)


def start_below_commit(run: RunDir) -> dict[str, Any]:
    """The member given a key after an acknowledged commit of it starts one record below that
    commit (a coordinator that lost the commit: KAFKA-20634): its first poll of the key reads the
    record before the committed offset first."""
    events = lines(run.history)
    _, poll, key, commit = _assignment_after_commit(events)
    committed = commit["value"][key]
    records = poll["value"][0][1][key]
    assert records[0][0] == committed, (records[0], committed)
    records.insert(0, _record(events, key, committed - 1))
    write(run.history, events)
    return {"key": key}


def start_below_unacknowledged_commit(run: RunDir) -> dict[str, Any]:
    """Near miss of `start_below_commit`: the same first poll, but the commit it starts below
    timed out (`info`): the coordinator never said it took it, and the member starts above the
    commit before it."""
    events = lines(run.history)
    _, _, key, commit = _assignment_after_commit(events)
    start_below_commit(run)
    events = lines(run.history)
    (unsure,) = [e for e in events if e["time"] == commit["time"] and e["process"] == commit["process"]]
    unsure["type"] = "info"
    write(run.history, events)
    return {"key": key}


def reread_in_poll(run: RunDir) -> dict[str, Any]:
    """A client hands its application, at the end of one poll, the first record that poll returned
    again (a fetch buffer replayed): inside one operation, a record at or before the one before it."""
    events = lines(run.history)
    _, ok = next((i, o) for i, o in _polls(events) if any(len(rs) > 1 for _, rs in _reads(o)))
    key, records = next((k, rs) for k, rs in _reads(ok) if len(rs) > 1)
    records.append(list(records[0]))
    write(run.history, events)
    return {"key": key}


def reread_in_next_poll(run: RunDir) -> dict[str, Any]:
    """Near miss of `reread_in_poll`: the record read again by a poll of its own, right after
    (a subscribe group's member may go back after a rebalance: `nonmonotonic-poll` is reported,
    not an error)."""
    events = lines(run.history)
    inv, ok = next((i, o) for i, o in _polls(events) if any(len(rs) > 1 for _, rs in _reads(o)))
    key, records = next((k, rs) for k, rs in _reads(ok) if len(rs) > 1)
    again_inv = {**inv, "time": ok["time"] + 1}
    again_ok = {**ok, "time": ok["time"] + 2, "value": [["poll", {key: [list(records[0])]}]]}
    at = events.index(ok) + 1
    events[at:at] = [again_inv, again_ok]
    write(run.history, [{**e, "index": i} for i, e in enumerate(events)])
    return {"key": key}


def write_again(run: RunDir) -> dict[str, Any]:
    """A producer's retry wrote a key's first value again, past the key's last record, and the
    key's last poll read it there: one value at two offsets."""
    events = lines(run.history)
    key = min(k for _, ok in _polls(events) for k, _ in _reads(ok))
    last = [rs for _, ok in _polls(events) for k, rs in _reads(ok) if k == key][-1]
    first = min((r for _, ok in _polls(events) for k, rs in _reads(ok) if k == key for r in rs), key=lambda r: r[0])
    end = max(r[0] for _, ok in _polls(events) for k, rs in _reads(ok) if k == key for r in rs)
    assert last[-1][0] == end, "the key's last poll did not read its last record"
    last.append([end + 1, first[1]])
    write(run.history, events)
    return {"key": key, "values": [first[1]]}


def read_again(run: RunDir) -> dict[str, Any]:
    """Near miss of `write_again`: the key's first value read again, at its own offset, by a poll
    of its own right after the key's last poll (a member gone back after a rebalance:
    `nonmonotonic-poll`, reported, not an error)."""
    events = lines(run.history)
    key = min(k for _, ok in _polls(events) for k, _ in _reads(ok))
    inv, ok = [(i, o) for i, o in _polls(events) if any(k == key for k, _ in _reads(o))][-1]
    first = min((r for _, o in _polls(events) for k, rs in _reads(o) if k == key for r in rs), key=lambda r: r[0])
    again = [{**inv, "time": ok["time"] + 1}, {**ok, "time": ok["time"] + 2, "value": [["poll", {key: [first]}]]}]
    at = events.index(ok) + 1
    events[at:at] = again
    write(run.history, [{**e, "index": i} for i, e in enumerate(events)])
    return {"key": key, "values": [first[1]]}


#: Each data-plane edit of a subscribe run, by the rule it must make fire, with its near miss.
EDITS: dict[str, tuple[Callable[[RunDir], dict[str, Any]], Callable[[RunDir], dict[str, Any]]]] = {
    "lost-write": (lose_write, lose_unacknowledged),
    "commit-lost": (start_below_commit, start_below_unacknowledged_commit),
    "int-nonmonotonic-poll": (reread_in_poll, reread_in_next_poll),
    "duplicate": (write_again, read_again),
}
