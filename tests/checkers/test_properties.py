"""Property tests: generated consistent histories have no anomaly; each injected anomaly is found,
and nothing else is.

The generator models the logs themselves: sends append to a key's log (ok ones learn their
offsets; an info send may or may not land; a failed one never does), consumers read each key in
log order from where they are, and a final reader catches every key up. Injections append a few
operations at the end, by fresh processes where a reference would otherwise get in the way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kafka_chaos.checkers.anomalies import ANOMALIES, BY_NAME, DATA
from tests.checkers import histories as H
from tests.checkers.builder import History

pytestmark = pytest.mark.spark

FRESH = 1000  # processes for injected operations
FINAL = 900  # the final reader


@dataclass
class Model:
    keys: list[str]
    h: History = field(default_factory=History)
    logs: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # key -> [(offset, value)]
    next_value: int = 1
    next_fresh: int = FRESH

    def __post_init__(self) -> None:
        self.logs = {k: [] for k in self.keys}

    def value(self) -> int:
        self.next_value += 1
        return self.next_value

    def fresh(self) -> int:
        self.next_fresh += 1
        return self.next_fresh

    def end(self, key: str) -> int:
        return self.logs[key][-1][0] + 1 if self.logs[key] else 0

    def append(self, key: str, value: int, gap: int = 0) -> int:
        offset = self.end(key) + gap
        self.logs[key].append((offset, value))
        return offset


def consistent(draw_steps: list[tuple], keys: int) -> Model:
    m = Model([f"t/{i}" for i in range(keys)])
    positions: dict[int, dict[str, int]] = {}
    for step in draw_steps:
        kind, who, key_i, n, outcome, gap = step
        key = m.keys[key_i % keys]
        if kind == "send":
            values = [m.value() for _ in range(n)]
            if outcome == "ok":
                offsets = [m.append(key, v, gap if i == 0 else 0) for i, v in enumerate(values)]
                m.h.send(who, key, list(zip(values, offsets, strict=True)))
            else:
                if outcome == "info-landed":
                    for v in values:
                        m.append(key, v)
                m.h.send(who, key, [(v, None) for v in values], type="fail" if outcome == "fail" else "info")
        elif kind == "txn":
            _txn(m, positions, 200 + who, key, n, outcome)
        else:
            consumer = 100 + who
            if consumer not in positions:
                positions[consumer] = {k: 0 for k in m.keys}
                m.h.assign(consumer, list(m.keys))
            read = {}
            for k in m.keys:
                pos = positions[consumer][k]
                got = m.logs[k][pos : pos + n]
                positions[consumer][k] = pos + len(got)
                if got:
                    read[k] = got
            m.h.poll(consumer, read)
    m.h.assign(FINAL, list(m.keys))
    m.h.poll(FINAL, {k: list(log) for k, log in m.logs.items() if log})
    return m


def _txn(m: Model, positions: dict[int, dict[str, int]], process: int, key: str, n: int, outcome: str) -> None:
    """A transaction of one process: it polls up to n values of each key from where it is, then
    sends n values to `key` (its poll comes first: read_committed never shows it its own sends).
    A failed one lands nothing; only an ok one moves its position (the workload seeks back)."""
    if process not in positions:
        positions[process] = {k: 0 for k in m.keys}
        m.h.assign(process, list(m.keys))
    read = {k: m.logs[k][positions[process][k] : positions[process][k] + n] for k in m.keys}
    read = {k: got for k, got in read.items() if got}
    values = [m.value() for _ in range(n)]
    landed = outcome in ("ok", "info-landed")
    offsets = [m.append(key, v) if landed else None for v in values]
    if outcome == "ok":  # only an ok poll moves the reference
        positions[process] = {k: positions[process][k] + len(read.get(k, [])) for k in m.keys}
    invoke = [["poll"], *[["send", key, v] for v in values]]
    done = [["poll", {k: [list(p) for p in got] for k, got in read.items()}]]
    done += [["send", key, [o, v] if outcome == "ok" else v] for o, v in zip(offsets, values, strict=True)]
    type_ = {"ok": "ok", "fail": "fail"}.get(outcome, "info")
    m.h.txn(process, invoke, done, type_)


STEPS = st.lists(
    st.tuples(
        st.sampled_from(["send", "send", "poll", "txn"]),
        st.integers(0, 2),
        st.integers(0, 2),
        st.integers(1, 3),
        st.sampled_from(["ok", "ok", "ok", "info-landed", "info-lost", "fail"]),
        st.sampled_from([0, 0, 0, 1]),  # an offset gap (as transaction markers leave)
    ),
    min_size=3,
    max_size=30,
)
MODELS = st.builds(consistent, STEPS, st.integers(1, 3))


def _tail(m: Model) -> tuple[str, int, int]:
    """A key with at least two values, its last offset and value."""
    key = next((k for k in m.keys if len(m.logs[k]) >= 2), None)
    if key is None:
        key = m.keys[0]
        for _ in range(2):
            v = m.value()
            m.h.send(m.fresh(), key, [(v, m.append(key, v))])
        m.h.poll(FINAL, {key: m.logs[key][-2:]})
    offset, value = m.logs[key][-1]
    return key, offset, value


def _two_new(m: Model, key: str) -> tuple[tuple[int, int], tuple[int, int]]:
    out = []
    for _ in range(2):
        v = m.value()
        out.append((m.append(key, v), v))
        m.h.send(m.fresh(), key, [(v, out[-1][0])])
    return out[0], out[1]


def lost_write(m: Model) -> None:
    key, *_ = _tail(m)
    _, second = _two_new(m, key)
    m.h.poll(m.fresh(), {key: [second]})  # a fresh reader past the first: it is lost


def unseen(m: Model) -> None:
    key, *_ = _tail(m)
    v = m.value()
    m.h.send(m.fresh(), key, [(v, m.append(key, v))])


def duplicate(m: Model) -> None:
    key, offset, value = _tail(m)
    m.h.poll(FINAL, {key: [(offset + 1, value)]})


def inconsistent_offsets(m: Model) -> None:
    key, offset, _ = _tail(m)
    v = m.value()
    m.h.send(m.fresh(), key, [(v, None)], type="info")
    m.h.poll(m.fresh(), {key: [(offset, v)]}, type="fail")


def g1a(m: Model) -> None:
    key, offset, _ = _tail(m)
    v = m.value()
    m.h.send(m.fresh(), key, [(v, None)], type="fail")
    m.h.poll(FINAL, {key: [(offset + 1, v)]})


def garbage_read(m: Model) -> None:
    key, offset, _ = _tail(m)
    m.h.poll(FINAL, {key: [(offset + 1, 10**9)]})


def poll_skip(m: Model) -> None:
    key, *_ = _tail(m)
    first, second = _two_new(m, key)
    m.h.poll(m.fresh(), {key: [first, second]})
    m.h.poll(FINAL, {key: [second]})


def nonmonotonic_poll(m: Model) -> None:
    key, offset, value = _tail(m)
    m.h.poll(FINAL, {key: [(offset, value)]})


def int_poll_skip(m: Model) -> None:
    key, offset, value = _tail(m)
    first, second = _two_new(m, key)
    m.h.poll(m.fresh(), {key: [first]})
    m.h.poll(m.fresh(), {key: [(offset, value), second]})


def int_nonmonotonic_poll(m: Model) -> None:
    key, *_ = _tail(m)
    (o1, v1), (o2, v2) = m.logs[key][-2], m.logs[key][-1]
    m.h.poll(m.fresh(), {key: [(o2, v2), (o1, v1)]})


def _sends_landing(m: Model, key: str, order: list[int], one_op: bool, info: bool = False) -> None:
    """New values whose offsets are the end of the log permuted by `order`; a fresh reader reads
    them. `info`: the sends are info operations that learned no offset (the reader proves them)."""
    base = m.end(key)
    values = [m.value() for _ in order]
    offsets = [base + i for i in order]
    acked = [None if info else o for o in offsets]
    type_ = "info" if info else "ok"
    p = m.fresh()
    if one_op:
        m.h.send(p, key, list(zip(values, acked, strict=True)), type=type_)
    else:
        for v, o in zip(values, acked, strict=True):
            m.h.send(p, key, [(v, o)], type=type_)
    landed = sorted(zip(offsets, values, strict=True))
    m.logs[key].extend(landed)
    m.h.poll(m.fresh(), {key: landed})


def nonmonotonic_send(m: Model, info: bool = False) -> None:
    _sends_landing(m, _tail(m)[0], [1, 0], one_op=False, info=info)


def int_nonmonotonic_send(m: Model, info: bool = False) -> None:
    _sends_landing(m, _tail(m)[0], [1, 0], one_op=True, info=info)


def int_send_skip(m: Model, info: bool = False) -> None:
    key, *_ = _tail(m)
    base = m.end(key)
    v1, v2, v3 = m.value(), m.value(), m.value()
    m.h.send(m.fresh(), key, [(v1, None if info else base), (v3, None if info else base + 2)], "info" if info else "ok")
    m.h.send(m.fresh(), key, [(v2, base + 1)])
    m.h.poll(m.fresh(), {key: [(base, v1), (base + 1, v2), (base + 2, v3)]})


def precommitted_read(m: Model) -> None:
    key, *_ = _tail(m)
    v = m.value()
    offset = m.append(key, v)
    m.h.txn(m.fresh(), [["send", key, v], ["poll"]], [["send", key, [offset, v]], ["poll", {key: [[offset, v]]}]])


def commit_lost(m: Model) -> None:
    """A fresh member commits the key's end; the next member it goes to starts from its beginning."""
    key, *_ = _tail(m)
    m.h.op(m.fresh(), "commit", {key: m.end(key)}, {key: m.end(key)})
    member = m.fresh()
    m.h.assign(member, [key], "subscribe")
    m.h.poll(member, {key: list(m.logs[key])})


def _replayed(case: Callable[[bool], History]) -> Callable[[Model], None]:
    """A share-group case of histories.py (its bad history) after the rest, on a fresh key read
    only by share consumers, with fresh processes and values, its times after the model's."""

    def inject(m: Model) -> None:
        n = m.fresh()
        key, processes, values = f"share-{n}/0", {}, {}

        def process(p):
            return processes.setdefault(p, m.fresh())

        def value(v):
            return values.setdefault(v, m.value())

        def renamed(x):
            if isinstance(x, dict):
                return {(key if k == H.K else k): renamed(v) for k, v in x.items()}
            if isinstance(x, list):
                return [renamed(e) for e in x]
            return key if x == H.K else x

        def revalued(f, val):
            if f == "send":  # [["send", key, v]] or [["send", key, [offset, v]]]
                return [[m0, k, [o[0], value(o[1])] if isinstance(o, list) else value(o)] for m0, k, o in val]
            if f == "share-poll" and isinstance(val[0][1], dict) and "lock_ms" not in val[0][1]:
                return [[val[0][0], {k: [[r[0], value(r[1]), *r[2:]] for r in rs] for k, rs in val[0][1].items()}]]
            return val

        base = m.h.time
        for e in case(True).events:
            m.h.events.append(
                {
                    **e,
                    "index": len(m.h.events),
                    "time": base + e["time"],
                    "process": process(e["process"]),
                    "value": renamed(revalued(e["f"], e["value"])),
                }
            )
        m.h.time = base + (m.h.events[-1]["time"] - base)

    return inject


def _cycle(pattern: Callable[..., History]) -> Callable[[Model], None]:
    """A transaction cycle of histories.py on fresh keys, processes and values, after the rest."""

    def inject(m: Model) -> None:
        n = m.fresh()
        keys = (f"cycle-{n}/0", f"cycle-{n}/1", f"cycle-{n}/2")
        place = H.Place(m.h, keys, (m.fresh(), m.fresh(), m.fresh(), m.fresh()), tuple(m.value() for _ in range(4)))
        pattern(True, place)

    return inject


INJECTIONS: dict[str, Callable[[Model], None]] = {
    "lost-write": lost_write,
    "unseen": unseen,
    "duplicate": duplicate,
    "inconsistent-offsets": inconsistent_offsets,
    "G1a": g1a,
    "garbage-read": garbage_read,
    "poll-skip": poll_skip,
    "nonmonotonic-poll": nonmonotonic_poll,
    "int-poll-skip": int_poll_skip,
    "int-nonmonotonic-poll": int_nonmonotonic_poll,
    "nonmonotonic-send": nonmonotonic_send,
    "int-nonmonotonic-send": int_nonmonotonic_send,
    "int-send-skip": int_send_skip,
    "precommitted-read": precommitted_read,
    "commit-lost": commit_lost,
    "share-lost": _replayed(H.share_lost),
    "share-unseen": _replayed(H.share_unseen),
    "share-concurrent-delivery": _replayed(H.share_concurrent_delivery),
    "share-redelivered-after-ack": _replayed(H.share_redelivered_after_ack),
    "share-double-acceptance": _replayed(H.share_double_acceptance),
    "share-stale-delivery": _replayed(H.share_stale_delivery),
    "share-delivery-count": _replayed(H.share_delivery_count),
    "share-duplicate-in-poll": _replayed(H.share_duplicate_in_poll),
    "G0": _cycle(H.g0),
    "G1c": _cycle(H.g1c),
    "G1c-process": _cycle(H.g1c_process),
    "G1c-realtime": _cycle(H.g1c_realtime),
}
#: The send-order injections made by info operations that the reader's ok poll proves: compared as
#: ok ones are (../shared/anomalies.md, ground rules, 2026-11-26).
PROVEN_INFO: dict[str, Callable[[Model], None]] = {
    name: lambda m, inject=inject: inject(m, info=True)
    for name, inject in (
        ("nonmonotonic-send", nonmonotonic_send),
        ("int-nonmonotonic-send", int_nonmonotonic_send),
        ("int-send-skip", int_send_skip),
    )
}
# Each example is a Spark job of seconds: few examples, no shrinking (a failure prints its example).
QUICK = dict(
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
)


def test_every_anomaly_is_injected():
    """Every anomaly of the history (the control plane's are generated in test_cp_contract.py)."""
    # share-redelivered-on-failover needs a leader change: the control plane's evidence (test_share.py).
    assert set(INJECTIONS) == {a.name for a in ANOMALIES if a.plane == DATA} - {"share-redelivered-on-failover"}


@settings(max_examples=6, **QUICK)
@given(MODELS)
def test_consistent_histories_are_valid(check, m):
    result = check(m.h)
    assert result.anomalies == {}, result.anomalies
    acknowledged = any(e["type"] == "ok" and e["f"] in ("send", "txn") for e in m.h.events)
    assert result.valid == (True if acknowledged else "unknown")


@pytest.mark.parametrize("name", list(INJECTIONS))
@settings(max_examples=2, **QUICK)
@given(m=MODELS)
def test_injected_anomaly_is_exactly_found(check, name, m):
    INJECTIONS[name](m)
    result = check(m.h)
    assert set(result.anomalies) == {name}, result.anomalies
    assert result.anomalies[name]["count"] >= 1
    assert result.valid is (BY_NAME[name].error == "never")
