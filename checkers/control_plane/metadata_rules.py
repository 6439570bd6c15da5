"""The record rules of ../shared/anomalies.md ("Control plane") over one node's metadata log.

`node_pass` is what Spark's applyInPandas runs per node (checkers/control_plane/judge.py): the node's
decoded records in offset order, replayed (history/metadata_replay.py), each record judged
after it is applied:
- `leader-not-in-isr`: the partition's leader is >= 0 and not in its ISR;
- `partition-epoch-regression`: its leader epoch or partition epoch is lower than before;
- `inactive-leader`: the record makes a broker leader (a PartitionRecord's leader, or a change's
  `Leader` other than -2, even one naming the leader it had: the contract's replay sets the leader
  and bumps its epoch all the same) that is fenced or in controlled shutdown at that offset;
- `fenced-in-isr`: the record adds to the ISR a broker fenced at that offset.
A broker the log never registered (its registration before a snapshot this log starts after) is
not judged. The node whose log is longest (the reference: `ref`) also returns its brokers' and
partitions' states after each change, for the timing rules (checkers/control_plane/fault_timing.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd

from kafka_chaos.history.metadata_replay import Broker, Replay

#: What the pass returns per node: a rule hit (`kind` "hit"), or the reference log's state after a
#: broker record ("broker": subject the broker id, fenced, active) or a partition record
#: ("partition": subject the partition, leader, isr; a deleted partition's leader null, its ISR empty).
OUT = (
    "node string, kind string, name string, `offset` long, time long, subject string, leader int,"
    " isr array<int>, fenced boolean, active boolean, record string, detail string"
)
COLUMNS = ("node", "kind", "name", "offset", "time", "subject", "leader", "isr", "fenced", "active", "record", "detail")


def _record(row: Any) -> str:
    """The record as its example shows it: its type and data."""
    if row.type is None:
        return str(row.raw)
    return f"{row.type} {row.data}"


def _data(text: Any) -> dict[str, Any]:
    if not isinstance(text, str):
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def judge(brokers_before: dict[int, Broker], step: Any, on_hit: Callable[[str, str, dict[str, Any]], None]) -> None:
    """Every record rule over one replayed step (`brokers_before`: the brokers as they were before it)."""
    after, before = step.after, step.before
    if after is None:
        return
    if after.leader >= 0 and after.leader not in after.isr:
        on_hit("leader-not-in-isr", step.partition, {"leader": after.leader, "isr": list(after.isr)})
    if before is not None and (
        after.leader_epoch < before.leader_epoch or after.partition_epoch < before.partition_epoch
    ):
        on_hit(
            "partition-epoch-regression",
            step.partition,
            {
                "leader_epoch": [before.leader_epoch, after.leader_epoch],
                "partition_epoch": [before.partition_epoch, after.partition_epoch],
            },
        )
    made = step.led and after.leader >= 0
    leader = brokers_before.get(after.leader) if made else None
    if leader is not None and leader.epoch >= 0 and (leader.fenced or leader.shutdown or not leader.registered):
        on_hit(
            "inactive-leader",
            step.partition,
            {"broker": after.leader, "fenced": leader.fenced, "controlled_shutdown": leader.shutdown},
        )
    for b in sorted(set(after.isr) - set(before.isr if before is not None else ())):
        known = brokers_before.get(b)
        if known is not None and known.epoch >= 0 and known.fenced:
            on_hit("fenced-in-isr", step.partition, {"broker": b, "isr": list(after.isr)})


def replay_node(records: pd.DataFrame, bump_on_shrink: bool, ref: bool) -> list[dict[str, Any]]:
    """One node's log: its rule hits, and (the reference log) its states."""
    node = str(records["node"].iloc[0]) if len(records) else ""
    replay = Replay(bump_on_shrink)
    out: list[dict[str, Any]] = []
    for row in records.sort_values("offset").itertuples(index=False):
        data = _data(row.data)
        brokers = {b: Broker(**vars(s)) for b, s in replay.brokers.items()}
        step = replay.step(int(row.offset), row.type, data)
        base = {"node": node, "offset": int(row.offset), "time": None if pd.isna(row.time) else int(row.time)}

        def hit(name: str, subject: str, detail: dict[str, Any], base=base, row=row) -> None:
            out.append(
                {
                    **base,
                    "kind": "hit",
                    "name": name,
                    "subject": subject,
                    "record": _record(row),
                    "detail": json.dumps(detail),
                }
            )

        judge(brokers, step, hit)
        if not ref:
            continue
        if step.broker is not None:
            b = replay.brokers[step.broker]
            out.append(
                {
                    **base,
                    "kind": "broker",
                    "subject": str(step.broker),
                    "fenced": b.fenced or not b.registered,
                    "active": b.active,
                    "record": row.type,
                }
            )
        elif step.removed:  # deleted: no leader, no ISR from here on
            out.extend({**base, "kind": "partition", "subject": p, "isr": [], "record": row.type} for p in step.removed)
        elif step.after is not None:
            out.append(
                {
                    **base,
                    "kind": "partition",
                    "subject": step.partition,
                    "leader": step.after.leader,
                    "isr": list(step.after.isr),
                }
            )
    return out


def node_pass(bump_on_shrink: bool) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The function applyInPandas runs per node; its rows carry `ref` (whether it is the reference log)."""

    def run(records: pd.DataFrame) -> pd.DataFrame:
        ref = bool(records["ref"].iloc[0]) if len(records) else False
        rows = replay_node(records, bump_on_shrink, ref)
        # Object columns of Python values and None: Arrow types them by the schema (pandas'
        # nullable dtypes would reach Arrow as chunked arrays, which the batch cannot take).
        frame = pd.DataFrame({c: pd.Series([r.get(c) for r in rows], dtype=object) for c in COLUMNS})
        return frame

    return run
