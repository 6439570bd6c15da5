"""Edits of a real share group's history, as a broken share-partition leader or client would have
left it, and their near misses: what tests/checkers/test_real_runs.py makes the share rules of
../shared/anomalies.md ("Share groups") flag, or not, by name.

Each edit finds its target by what it means (a record delivered once and accepted; a member's
later poll of its key) and asserts that it found it, so that an edit that changed nothing makes
its test fail. Each returns the facts the rule's first example must show.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_chaos.history.run_dir import RunDir
from tests.checkers.cp_edits import lines, write
from tests.checkers.dp_edits import client_ops


def _deliveries(events: list[dict]) -> list[tuple[dict, dict, str, list]]:
    """Each record an ok share-poll delivered: (invoke, completion, key, [offset, value, count])."""
    return [
        (i, o, k, r)
        for i, o in client_ops(events)
        if o["f"] == "share-poll" and o["type"] == "ok"
        for m in o["value"]
        for k, rs in m[1].items()
        for r in rs
    ]


def _accepted_once(events: list[dict]) -> tuple[dict, str, list, dict, dict]:
    """A record delivered once, in a poll whose next operation, an `accept` of it, came back ok
    for its key, and a later ok poll of the same process that delivered its key again: (the
    poll's completion, key, record, the ack's completion, that later poll's completion)."""
    ops = list(client_ops(events))
    times: dict[tuple[str, int], int] = {}
    for _, _, k, r in _deliveries(events):
        times[(k, r[0])] = times.get((k, r[0]), 0) + 1
    for n, (_, poll) in enumerate(ops):
        if poll["f"] != "share-poll" or poll["type"] != "ok":
            continue
        after = [(i, o) for i, o in ops[n + 1 :] if o["process"] == poll["process"]]
        if not after or after[0][1]["f"] != "share-ack" or after[0][1]["type"] != "ok":
            continue
        ack_inv, ack = after[0]
        for key, records in poll["value"][0][1].items():
            acks = dict((o, a) for o, a in ack_inv["value"][0][1].get(key, []))
            later = next(
                (o for i, o in after[1:] if o["f"] == "share-poll" and o["type"] == "ok" and key in o["value"][0][1]),
                None,
            )
            if ack["value"][0][1].get(key) != "ok" or later is None:
                continue
            for r in records:
                if times[(key, r[0])] == 1 and acks.get(r[0]) == "accept":
                    return poll, key, r, ack, later
    raise AssertionError("no record delivered once, accepted ok, before its member polled its key again")


def lose_delivery(run: RunDir) -> dict[str, Any]:
    """A share-partition leader marks a record acknowledged that it never handed anyone: no
    share-poll delivers it (nor does any ack name it), while the group's start offset passed it."""
    events = lines(run.history)
    poll, key, record, _, _ = _accepted_once(events)
    poll["value"][0][1][key].remove(record)
    for i, o in client_ops(events):
        if o["f"] == "share-ack" and o["process"] == poll["process"] and i["time"] > poll["time"]:
            i["value"][0][1][key] = [a for a in i["value"][0][1][key] if a[0] != record[0]]
            break
    write(run.history, events)
    return {"key": key, "values": [record[1]]}


def lose_unacknowledged_send(run: RunDir) -> dict[str, Any]:
    """Near miss of `lose_delivery`: the same record never delivered, but its send timed out
    (`info`, no offset known): nothing says it committed."""
    facts = lose_delivery(run)
    events = lines(run.history)
    key, (value,) = facts["key"], facts["values"]
    sent = [
        o
        for _, o in client_ops(events)
        if o["f"] == "send" and o["type"] == "ok" and [[m[1], m[2][1]] for m in o["value"]] == [[key, value]]
    ]
    assert len(sent) == 1, f"no one send of {key} value {value} alone"
    sent[0].update(type="info", value=[["send", key, value]])
    write(run.history, events)
    return facts


def redeliver_after_ack(run: RunDir, release: bool = False) -> dict[str, Any]:
    """The leader delivers an accepted record again to the member that accepted it, at a higher
    delivery count, and takes its acceptance again: the broker acquired an acknowledged record.
    `release`: the first acknowledgement released the record instead (`redeliver_released`)."""
    events = lines(run.history)
    poll, key, record, _, later = _accepted_once(events)
    offset, value, count = record
    records = later["value"][0][1][key]
    records.insert(next((n for n, r in enumerate(records) if r[0] > offset), len(records)), [offset, value, count + 1])
    acks = [i for i, o in client_ops(events) if o["f"] == "share-ack" and o["process"] == poll["process"]]
    first = next(i for i in acks if i["time"] > poll["time"])
    second = next(i for i in acks if i["time"] > later["time"])
    second["value"][0][1][key].append([offset, "accept"])
    if release:
        (mine,) = [a for a in first["value"][0][1][key] if a[0] == offset]
        mine[1] = "release"
    write(run.history, events)
    return {"key": key}


def redeliver_released(run: RunDir) -> dict[str, Any]:
    """Near miss of `redeliver_after_ack`: the same delivery again at a higher count, accepted,
    but the member had released the record the first time: a legal redelivery."""
    return redeliver_after_ack(run, release=True)


#: Each share edit, by the rule it must make fire, with its near miss.
EDITS: dict[str, tuple[Callable[[RunDir], dict[str, Any]], Callable[[RunDir], dict[str, Any]]]] = {
    "share-lost": (lose_delivery, lose_unacknowledged_send),
    "share-redelivered-after-ack": (redeliver_after_ack, redeliver_released),
}
