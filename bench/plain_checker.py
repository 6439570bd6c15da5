"""A plain, one-process Python checker of the data-plane rules: the baseline of issue 49's goal.

    .venv/bin/python bench/plain_checker.py HISTORY.jsonl

It is what a user would write instead of the Spark checker: the JSON Lines read once, streamed,
each invoke paired with its process's completion on the fly, and only each client operation's
sends and reads kept, as tuples in plain lists and dicts; then the rules of
../shared/anomalies.md over them, one pass each. It is written for speed (the standard library's
`json`, no dataclasses, no pandas) and for nothing else: no report, no examples, no share, commit
or transaction-cycle rules, no control plane. bench/check_scale.py times the checker against it.

The rules (RULES): `lost-write`, `unseen`, `duplicate`, `inconsistent-offsets`, `G1a`,
`garbage-read`, `precommitted-read`, and the poll and send order rules (`poll-skip`,
`nonmonotonic-poll`, `int-poll-skip`, `int-nonmonotonic-poll`, `nonmonotonic-send`,
`int-nonmonotonic-send`, `int-send-skip`), counted as results.json counts them (instances, and
how many are errors). tests/checkers/test_plain_checker.py holds its counts equal to the oracle's
(tests/checkers/oracle.py, a slower program that keeps every event) on the hand-made histories.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RULES = (
    "lost-write",
    "unseen",
    "duplicate",
    "inconsistent-offsets",
    "G1a",
    "garbage-read",
    "precommitted-read",
    "poll-skip",
    "nonmonotonic-poll",
    "int-poll-skip",
    "int-nonmonotonic-poll",
    "nonmonotonic-send",
    "int-nonmonotonic-send",
    "int-send-skip",
)
CLIENT_FS = frozenset(("send", "poll", "txn"))
ASSIGNS = frozenset(("assign", "subscribe"))

# An operation, as the first pass keeps it: (id, process, f, type, sends, reads, keys), where id is
# the completion's index (the invoke's when none came), sends [(key, value, offset)], reads
# [(key, offset, value)] in order, and keys the keys an assign/subscribe holds (else None).
Op = tuple


def _micro(value: object) -> list | None:
    # A list of micro-ops (the format's lists; the first one's shape stands for the rest).
    return value if isinstance(value, list) and value and isinstance(value[0], list) else None


def _op(invoke: dict, done: dict | None) -> Op:
    process, f = invoke["process"], invoke["f"]
    if done is None:
        id_, type_, cvalue = invoke["index"], "info", None
    else:
        id_, type_, cvalue = done["index"], done["type"], done.get("value")
    sends: list = []
    reads: list = []
    keys = None
    if f in CLIENT_FS:
        for m in _micro(cvalue) or _micro(invoke.get("value")) or ():
            if not m:
                continue
            kind = m[0]
            if kind == "send" and len(m) > 2:
                x = m[2]
                if isinstance(x, list):
                    offset, value = x[0], x[1]
                else:
                    offset, value = None, x
                if value is not None:
                    sends.append((m[1], int(value), offset))
            elif kind == "poll" and len(m) > 1 and m[1]:
                for key, pairs in m[1].items():
                    for o, v in pairs:
                        reads.append((key, o, v))
    elif f in ASSIGNS:
        held = cvalue if isinstance(cvalue, list) else invoke.get("value")
        keys = frozenset(held or ())
    return (id_, process, f, type_, sends, reads, keys)


def operations(lines) -> tuple[list[Op], set[str]]:
    """The client operations of a history's lines, in the order of their ids, and the keys a share
    consumer was delivered (the share rules judge a key only they read, not these)."""
    loads = json.JSONDecoder().decode
    open_: dict = {}
    ops: list[Op] = []
    shared: set[str] = set()
    for line in lines:
        if not line.strip():
            continue
        e = loads(line)
        p = e["process"]
        if p == "nemesis":
            continue
        if e["type"] == "invoke":
            open_[p] = e
            continue
        invoke = open_.pop(p)
        if invoke["f"] == "share-poll":
            got = _micro(e.get("value"))
            if got and len(got[0]) > 1 and isinstance(got[0][1], dict):
                shared.update(k for k, records in got[0][1].items() if records)
            continue
        ops.append(_op(invoke, e))
    ops.extend(_op(invoke, None) for invoke in open_.values() if invoke["f"] != "share-poll")
    ops.sort(key=lambda op: op[0])  # completed ones are in order already; the open ones go in place
    return ops, shared


def check(lines) -> dict[str, list[int]]:
    """Rule name -> [instances, errors], for the rules with any instance."""
    ops, shared = operations(lines)
    found: dict[str, list[int]] = {}

    def hit(name: str, error: bool = True) -> None:
        c = found.get(name)
        if c is None:
            found[name] = [1, int(error)]
        else:
            c[0] += 1
            c[1] += int(error)

    ok_read: dict[str, set] = {}  # key -> values an ok operation read
    ok_poll = False
    for _, _, f, type_, _, reads, _ in ops:
        if type_ != "ok":
            continue
        if f == "poll" or (f == "txn" and reads):
            ok_poll = True
        for k, _, v in reads:
            s = ok_read.get(k)
            if s is None:
                ok_read[k] = s = set()
            s.add(v)
    empty: frozenset = frozenset()

    # Must have committed: ok, or info with a value an ok operation read.
    committed = [
        op
        for op in ops
        if op[4] and (op[3] == "ok" or (op[3] == "info" and any(v in ok_read.get(k, empty) for k, v, _ in op[4])))
    ]

    # Version order: offset -> value from every read and every committed send with an offset;
    # a second value at an offset goes to `more`.
    at: dict[str, dict] = {}
    more: dict[tuple, set] = {}
    for op in ops:
        for k, o, v in op[5]:
            if o is None:
                continue
            offs = at.get(k)
            if offs is None:
                at[k] = offs = {}
            w = offs.setdefault(o, v)
            if w != v:
                more.setdefault((k, o), set()).add(v)
    for op in committed:
        for k, v, o in op[4]:
            if o is None:
                continue
            offs = at.get(k)
            if offs is None:
                at[k] = offs = {}
            w = offs.setdefault(o, v)
            if w != v:
                more.setdefault((k, o), set()).add(v)
    index: dict[str, dict] = {}  # key -> offset -> index
    lo: dict[str, dict] = {}  # key -> value -> its first index
    hi: dict[str, dict] = {}  # key -> value -> its last index, for a value seen at several offsets
    for k, offs in at.items():
        ix = index[k] = {}
        first = lo[k] = {}
        last = hi[k] = {}
        for i, o in enumerate(sorted(offs)):
            ix[o] = i
            vs = (offs[o],)
            extra = more.get((k, o))
            if extra is not None:
                extra.discard(offs[o])
                if extra:
                    hit("inconsistent-offsets")
                    vs = (offs[o], *extra)
            for v in vs:
                if v in first:
                    if v not in last:
                        hit("duplicate")
                    last[v] = i
                else:
                    first[v] = i

    # lost-write, unseen: per key, the highest index an ok operation read.
    bound: dict[str, int] = {}
    for k, vs in ok_read.items():
        first = lo.get(k, {})
        b = max((first[v] for v in vs if v in first), default=None)
        if b is not None:
            bound[k] = b
    share_only = shared - {k for op in ops for k, _, _ in op[5]}
    for op in committed:
        for k, v, _ in op[4]:
            if v in ok_read.get(k, empty) or k in share_only:
                continue
            first = lo.get(k)
            if first is not None and v in first and k in bound and hi[k].get(v, first[v]) <= bound[k]:
                hit("lost-write")
            elif op[3] == "ok":
                hit("unseen", ok_poll)

    # G1a, garbage-read, precommitted-read: one per read.
    failed: set = set()
    tried: set = set()
    for op in ops:
        sends = op[4]
        if sends:
            tried.update((k, v) for k, v, _ in sends)
            if op[3] == "fail":
                failed.update((k, v) for k, v, _ in sends)
    for op in ops:
        reads = op[5]
        if not reads:
            continue
        ok = op[3] == "ok"
        own = {(k, v) for k, v, _ in op[4]} if op[2] == "txn" else empty
        for k, _, v in reads:
            kv = (k, v)
            if ok and kv in failed:
                hit("G1a")
            if kv not in tried:
                hit("garbage-read")
            if kv in own:
                hit("precommitted-read")

    _orders(ops, {id(op) for op in committed}, index, lo, hit)
    return found


def _orders(ops: list[Op], committed: set[int], index: dict, lo: dict, hit) -> None:
    """The poll and send order rules, inside each operation and across a process's operations."""
    poll_ref: dict = {}  # process -> key -> index of its last ok read
    send_ref: dict = {}  # process -> key -> (index of its last committed send, whether info put it)
    subscribed: set = set()
    for op in ops:
        _, p, f, type_, sends, reads, keys = op
        if keys is not None:
            if f == "subscribe":
                subscribed.add(p)
            else:
                subscribed.discard(p)
            for refs in (poll_ref, send_ref):
                mine = refs.get(p)
                if mine:
                    for k in [k for k in mine if k not in keys]:
                        del mine[k]
            continue
        if reads and (type_ == "ok" or type_ == "info"):
            ok = type_ == "ok"
            first: dict = {}
            last: dict = {}
            for k, o, _ in reads:
                i = None if o is None else index.get(k, {}).get(o)
                if i is None:
                    continue
                if k in last:
                    if ok:
                        prev = last[k]
                        if i - prev > 1:
                            hit("int-poll-skip")
                        if i <= prev:
                            hit("int-nonmonotonic-poll")
                else:
                    first[k] = i
                last[k] = i
            error = p not in subscribed
            mine = poll_ref.get(p)
            if mine:
                for k, i in first.items():
                    ref = mine.get(k)
                    if ref is not None:
                        if i - ref > 1:
                            hit("poll-skip", error)
                        if i <= ref:
                            hit("nonmonotonic-poll", error)
            if ok and last:
                if mine is None:
                    poll_ref[p] = mine = {}
                mine.update(last)
        if sends and id(op) in committed:
            info = type_ == "info"
            first = {}
            last = {}
            for k, v, _ in sends:
                i = lo.get(k, {}).get(v)
                if i is None:
                    continue
                if k in last:
                    prev = last[k]
                    if i - prev > 1:
                        hit("int-send-skip", False)
                    if i < prev or (i == prev and not info):
                        hit("int-nonmonotonic-send")
                else:
                    first[k] = i
                last[k] = i
            mine = send_ref.get(p)
            if mine:
                for k, i in first.items():
                    ref = mine.get(k)
                    if ref is not None and (i < ref[0] or (i == ref[0] and not (info or ref[1]))):
                        hit("nonmonotonic-send")
            if last:
                if mine is None:
                    send_ref[p] = mine = {}
                for k, i in last.items():
                    mine[k] = (i, info)


def check_file(path: str | Path) -> dict[str, list[int]]:
    with open(path, encoding="utf-8", buffering=1 << 20) as fh:
        return check(fh)


if __name__ == "__main__":
    print(json.dumps(check_file(sys.argv[1]), sort_keys=True))
