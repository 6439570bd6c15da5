"""checkers/data_plane/tallies.py on hand-made key rows (pandas, no Spark): the value counts and the unseen
series the per-key pass adds beside the anomalies."""

from __future__ import annotations

import pandas as pd

from kafka_chaos.checkers.data_plane import tallies, version_order

COLUMNS = [
    "kind",
    "key",
    "op",
    "process",
    "f",
    "type",
    "pos",
    "offset",
    "value",
    "n_assign",
    "mode",
    "evidenced",
    "time",
]


def row(kind: str, op: int, typ: str, offset: float | None, value: int, time: float, f: str = "send", evidenced=False):
    return dict(
        kind=kind,
        key="k",
        op=op,
        process="0",
        f=f,
        type=typ,
        pos=0,
        offset=offset,
        value=value,
        n_assign=0,
        mode=None,
        evidenced=evidenced,
        time=time,
    )


def tallied(rows: list[dict], width: int = 10) -> dict[str, dict[int, int]]:
    df = pd.DataFrame(rows, columns=COLUMNS).astype({"offset": "float64", "value": "float64", "time": "float64"})
    out = tallies.key_tallies(version_order.build(df), width)
    return {r["name"]: dict(zip(r["offsets"], r["values"], strict=True)) for _, r in out.iterrows()}


def test_a_value_read_after_its_ack_is_seen_at_the_read():
    t = tallied([row("send", 1, "ok", 0, 7, time=5), row("read", 2, "ok", 0, 7, time=25, f="poll")])
    assert t[tallies.ACKED] == {0: 1}
    assert t[tallies.SEEN] == {2: 1}


def test_a_value_never_read_is_never_seen():
    t = tallied([row("send", 1, "ok", 0, 7, time=5), row("read", 2, "info", 0, 7, time=25, f="poll")])
    assert t[tallies.ACKED] == {0: 1}
    assert t[tallies.SEEN] == {}


def test_a_value_read_before_its_ack_arrived_is_seen_at_the_ack():
    t = tallied([row("send", 1, "ok", 0, 7, time=35), row("read", 2, "ok", 0, 7, time=25, f="poll")])
    assert t[tallies.SEEN] == {3: 1}


def test_value_counts_are_distinct_values_by_outcome():
    t = tallied(
        [
            row("send", 1, "ok", 0, 7, time=5),
            row("send", 2, "ok", 1, 7, time=6),
            row("send", 3, "fail", None, 8, time=7),
            row("send", 4, "info", None, 9, time=8),
            row("send", 5, "info", None, 10, time=8, evidenced=True),
            row("read", 6, "ok", 0, 7, time=9, f="poll"),
            row("read", 7, "ok", 2, 10, time=9, f="txn"),
        ]
    )
    n = {name: t[tallies.VALUES].get(i, 0) for i, name in enumerate(tallies.VALUE_SLOTS)}
    assert n == {
        "attempted": 4,
        "acknowledged": 1,
        "failed": 1,
        "indeterminate": 2,
        "must_have_committed": 2,
        "read": 2,
        "ok_txn_reads": 1,
    }
