"""Why a write was lost: each lost write lined up with the controller's decisions.

When the run directory holds `metadata-timeline.json` (the KRaft metadata log, decoded by
harness/metadata_log.py after a scenario run) and `replicas.json` (the replicas' logs against
what clients saw, harness/replica_logs.py), the checker names, for each lost-write example,
the election that made a replica without the write the leader, and the ISR change that made
that replica eligible. Neither file is needed for the verdict: the history alone decides it.

For a write acknowledged at time t on a partition:
- the election: the first leader change after t to a live leader (leader >= 0);
- how its leader got there, the first that holds:
  - `unclean`: the election was unclean (leader recovery state RECOVERING), or the new leader
    was not in the ISR just before it;
  - `joined-isr-after-ack`: the new leader entered the ISR after t (the stale expansion of
    KAFKA-14139; a registration of that broker between t and the ISR change is named too:
    it came back with a new broker epoch, and perhaps an empty disk);
  - `same-leader-reelected`: the leader before and after is the same broker, which came back
    without the write (the "last replica standing" of KIP-966);
  - `in-isr-at-ack`: the new leader was in the ISR when the write was acknowledged, yet led
    without it (an acknowledgement that did not wait for it: acks=1).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka_chaos.history.run_dir import RunDir


def load_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def op_times(history: Path, indices: set[int]) -> dict[int, float]:
    """Seconds since time 0 of the events with these indices (one streaming pass)."""
    found: dict[int, float] = {}
    if not indices:
        return found
    with open(history, encoding="utf-8") as f:
        for line in f:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("index") in indices:
                found[event["index"]] = event.get("time", 0) / 1e9
                if len(found) == len(indices):
                    break
    return found


def explain_one(events: list[dict[str, Any]], key: str, acked_s: float) -> dict[str, Any]:
    """The election after `acked_s` on `key` and how its leader became eligible (pure)."""
    changes = [e for e in events if e.get("kind") == "partition" and e.get("key") == key]
    before = [e for e in changes if e["t_s"] <= acked_s]
    state_at_ack = before[-1] if before else None
    election = next(
        (e for e in changes if e["t_s"] > acked_s and "leader" in e.get("change", "") and e["leader"] >= 0), None
    )
    if election is None:
        return {"cause": "no-election", "text": "no leader change after the write: it was lost without an election"}
    leader = election["leader"]
    isr_at_ack = state_at_ack["isr"] if state_at_ack else []
    between = [e for e in changes if acked_s < e["t_s"] <= election["t_s"]]
    joined = next((e for e in between if leader in e["isr"] and leader not in e.get("previous_isr", e["isr"])), None)
    registered = [
        e
        for e in events
        if e.get("kind") == "register" and e.get("broker") == leader and acked_s < e["t_s"] <= election["t_s"]
    ]
    out: dict[str, Any] = {"election": _brief(election), "isr_at_ack": isr_at_ack}
    if election.get("unclean") or leader not in election.get("previous_isr", []) and not joined:
        out.update(
            cause="unclean",
            text=f"broker {leader} was elected leader of {key} without being in the ISR "
            f"{election.get('previous_isr')} (unclean election) at {election['t_s']:.1f} s",
        )
    elif joined is not None:
        last = registered[-1] if registered else None
        again = (
            f"; it had registered again (broker epoch {last['broker_epoch']}) at {last['t_s']:.1f} s" if last else ""
        )
        out.update(
            cause="joined-isr-after-ack",
            isr_change=_brief(joined),
            text=f"broker {leader} joined the ISR of {key} at {joined['t_s']:.1f} s, after the write "
            f"was acknowledged{again}, and became leader at {election['t_s']:.1f} s without it",
        )
    elif election.get("previous_leader") == leader or (state_at_ack and state_at_ack["leader"] == leader):
        out.update(
            cause="same-leader-reelected",
            text=f"broker {leader}, leader when the write was acknowledged (ISR {isr_at_ack}), was elected "
            f"again at {election['t_s']:.1f} s and had lost the write (last replica standing)",
        )
    else:
        text = (
            f"broker {leader} was in the ISR {isr_at_ack} when the write was acknowledged and became leader "
            f"at {election['t_s']:.1f} s without it: the acknowledgement did not wait for it"
        )
        out.update(cause="in-isr-at-ack", text=text)
    return out


def _brief(event: dict[str, Any]) -> dict[str, Any]:
    keep = (
        "t_s",
        "offset",
        "change",
        "leader",
        "previous_leader",
        "isr",
        "previous_isr",
        "leader_epoch",
        "partition_epoch",
    )
    return {k: event[k] for k in keep if k in event}


def lost_write_groups(lost: Any, ops: Any, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every lost write, grouped by the stretch between timeline events in which it was
    acknowledged (all writes of a stretch share one explanation), with each group explained.
    Runs on Spark: `lost` (key, value, op, offsets: the checker's lost-write instances) is never
    collected one by one, only the groups; `ops` is the checker's operations table."""
    from pyspark.sql import functions as F

    keys = sorted({e["key"] for e in events if e.get("kind") == "partition"})
    since = sorted({e["t_s"] for e in events})
    if not keys or not since:
        return []
    spark = ops.sparkSession
    bounds = spark.createDataFrame([(k, float(x)) for k in keys for x in since], "bkey string, since double")
    acked = lost.join(ops.select("op", F.coalesce("ctime", "itime").alias("t_ns")), "op").select(
        "key", "value", (F.col("t_ns") / 1e9).alias("t"), F.array_min("offsets").alias("offset")
    )
    stretch = (
        acked.join(F.broadcast(bounds), (F.col("key") == F.col("bkey")) & (F.col("since") <= F.col("t")), "left")
        .groupBy("key", "value", "t", "offset")
        .agg(F.max("since").alias("since"))
    )
    rows = (
        stretch.groupBy("key", "since")
        .agg(
            F.count(F.lit(1)).alias("count"),
            F.min("offset").alias("first_offset"),
            F.max("offset").alias("last_offset"),
            F.min("t").alias("first_s"),
            F.max("t").alias("last_s"),
        )
        .orderBy("key", "first_s")
        .collect()
    )
    out = []
    for r in rows:
        out.append(
            {
                "key": r["key"],
                "count": int(r["count"]),
                "offsets": [r["first_offset"], r["last_offset"]],
                "acked_s": [round(r["first_s"], 3), round(r["last_s"], 3)],
                **explain_one(events, r["key"], r["first_s"]),
            }
        )
    return out


def build(
    run_dir: Path,
    anomalies: dict[str, dict[str, Any]],
    history: Path,
    groups: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
) -> dict[str, Any] | None:
    """The root-cause section of results.json, or None when the run holds no metadata timeline.
    `groups` attributes every lost write (lost_write_groups, bound to the check's tables)."""
    files = RunDir(run_dir)
    timeline = load_json(files.timeline)
    replicas = load_json(files.replicas)
    if timeline is None and replicas is None:
        return None
    events = (timeline or {}).get("events", [])
    examples = anomalies.get("lost-write", {}).get("examples", [])
    times = op_times(history, {op for ex in examples for op in ex.get("ops", [])[:1]})
    explained = []
    for ex in examples:
        first_op = (ex.get("ops") or [None])[0]
        acked = times.get(first_op)
        if acked is None:
            continue
        explained.append(
            {
                "key": ex["key"],
                "offsets": ex.get("offsets"),
                "values": ex.get("values"),
                "acked_s": round(acked, 3),
                **explain_one(events, ex["key"], acked),
            }
        )
    every = groups(events) if groups is not None and examples and events else []
    return {
        "timeline": events,
        "replicas": (replicas or {}).get("keys", {}),
        "lost_writes": explained,
        "lost_write_groups": every,
    }
