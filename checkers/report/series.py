"""The report's small tables, aggregated by Spark (the report never sees the whole history).

Time is cut into at most BUCKETS buckets; everything here is a few hundred rows at most, handed
to pandas for the report: throughput and latency over time, the nemesis's fault windows, the
number of acknowledged values not yet read over time, and offset timelines of anomalous keys.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from kafka_chaos.checkers import parts
from kafka_chaos.checkers.measures.faults import fault_windows
from kafka_chaos.checkers.sql import double
from kafka_chaos.checkers.tables import committed_send, evidenced_ops
from kafka_chaos.history.events import NEMESIS
from kafka_chaos.history.faults import Op

BUCKETS = 200
TIMELINE_KEYS = 4
TIMELINE_POINTS = 1500  # per key and kind


@dataclass
class Series:
    bucket_s: float
    end_s: float
    throughput: pd.DataFrame  # t, type, per_s
    latency: pd.DataFrame  # t, f, p50, p99 (ms)
    unseen: pd.DataFrame  # t, unseen
    faults: list[dict[str, Any]]  # f, start, end (s), nodes (a list), colour
    timelines: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)  # key -> kind -> t, offset
    #: node -> its control-plane timeline (checkers/control_plane/judge.py `timelines`), when checked
    control: dict[str, dict[str, Any]] = field(default_factory=dict)


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame([{c: r[c] for c in columns} for r in rows], columns=columns)


def _zero_filled(throughput: pd.DataFrame, bucket_s: float, last: int) -> pd.DataFrame:
    """Every bucket of every outcome, 0 where nothing completed: a stall must plot as zero, not
    as a line drawn straight across it from the buckets on either side."""
    parts = []
    for typ, part in throughput.groupby("type"):
        rates = pd.Series(part["per_s"].to_numpy(), index=(part["t"] / bucket_s).round().astype(int))
        rates = rates.groupby(level=0).sum().reindex(range(last + 1), fill_value=0.0)
        parts.append(pd.DataFrame({"t": rates.index * bucket_s, "type": typ, "per_s": rates.to_numpy()}))
    return pd.concat(parts, ignore_index=True) if parts else throughput


def _by_time(rows: list[dict[str, Any]], then: str) -> list[dict[str, Any]]:
    """Rows in time order, then by `then` (Spark hands them over unsorted: see `queries`)."""
    return sorted(rows, key=lambda r: (r["t"], r[then]))


def bucket_width_ns(end_ns: int) -> int:
    """The report's time bucket: BUCKETS of them up to the history's last event."""
    return max(1, -(-end_ns // BUCKETS))


def queries(ops: DataFrame, end_ns: int) -> dict[str, DataFrame]:
    """The aggregations `build` reads (checkers/parts.py collects them with the check's others)."""
    width = bucket_width_ns(end_ns)
    bucket_s = double(width / 1e9)
    bucket = f"floor(ctime / {width}) * {bucket_s} AS t"
    done = ops.where(f"process != '{NEMESIS}' AND ctime IS NOT NULL")
    lat = f"(ctime - itime) / {double(1e6)}"
    # No ordering here (a sort of a few hundred rows would cost a range-partitioning job of its
    # own); `build` sorts. Both quantiles come from one digest per bucket: the same answers as a
    # digest each (the same rows go into both in the same order), for half the work.
    return {
        "series.throughput": done.selectExpr(bucket, "`type`")
        .groupBy("t", "type")
        .agg(F.expr(f"count(1) / {bucket_s}").alias("per_s")),
        "series.latency": done.where("`type` = 'ok'")
        .selectExpr(bucket, "f", f"{lat} AS lat")
        .groupBy("t", "f")
        .agg(F.expr(f"percentile_approx(lat, array({double(0.5)}, {double(0.99)}))").alias("q"))
        .selectExpr("t", "f", "q[0] AS p50", "q[1] AS p99"),
    }


def build(
    parts: dict[str, list[dict[str, Any]]],
    end_ns: int,
    acked: dict[int, int],
    seen: dict[int, int],
    nemesis: list[Op],
    colours: dict[str, str] | None = None,
) -> Series:
    """The report's series from the collected parts; `acked` and `seen` count, per time bucket,
    acknowledgements and first reads of acknowledged values (checkers/data_plane/tallies.py); `nemesis`: the
    nemesis's operations in invoke order (history/faults.py); `colours`: each
    fault's shading, from the run's config.json (checkers/measures/faults.py colours_of)."""
    width = bucket_width_ns(end_ns)
    bucket_s = width / 1e9
    throughput = _frame(_by_time(parts["series.throughput"], "type"), ["t", "type", "per_s"])
    throughput = _zero_filled(throughput, bucket_s, end_ns // width)
    latency = _frame(_by_time(parts["series.latency"], "f"), ["t", "f", "p50", "p99"])
    # Unseen at time t: acknowledged by t and not read by an ok poll by t.
    grid = pd.Index([i * bucket_s for i in range(BUCKETS + 1)], name="t")

    def cumulative(counts: dict[int, int]) -> pd.Series:
        hist = pd.Series(list(counts.values()), index=[b * bucket_s for b in counts], dtype="int64")
        return hist.groupby(level=0).sum().reindex(grid, fill_value=0).cumsum()

    unseen = (cumulative(acked) - cumulative(seen)).rename("unseen").reset_index()
    faults = fault_windows(nemesis, end_ns / 1e9, colours)
    return Series(bucket_s, end_ns / 1e9, throughput, latency, unseen, faults)


def _anomalous_keys(anomalies: dict[str, dict[str, Any]]) -> list[str]:
    keys: list[str] = []
    for a in sorted(anomalies.values(), key=lambda a: -a["errors"]):
        for ex in a["examples"]:
            if a["errors"] and "key" in ex and ex["key"] not in keys:  # a control-plane example has none
                keys.append(ex["key"])
    return keys[:TIMELINE_KEYS]


def timelines(micro: DataFrame, anomalies: dict[str, dict[str, Any]]) -> dict[str, dict[str, pd.DataFrame]]:
    """Offsets over time of the keys with the most errors (acknowledged and read), at most
    TIMELINE_POINTS of each kind per key (a seeded sample beyond that), in one Spark action."""
    keys = _anomalous_keys(anomalies)
    if not keys:
        return {}
    marked = evidenced_ops(micro).select("op", F.lit(True).alias("evidenced"))
    mine = micro.where(F.col("key").isin(keys)).join(F.broadcast(marked), "op", "left")
    is_evidenced = F.coalesce(F.col("evidenced"), F.lit(False))
    kind = F.when(committed_send(is_evidenced) & F.col("offset").isNotNull(), F.lit("acknowledged")).when(
        (F.col("kind") == "read") & (F.col("type") == "ok"), F.lit("read")
    )
    rows = mine.select("key", kind.alias("line"), (F.col("time") / F.lit(1e9)).alias("t"), "offset", "value")
    rows = rows.where(F.col("line").isNotNull())
    n = F.count(F.lit(1)).over(Window.partitionBy("key", "line"))
    counted = rows.select("*", n.alias("n"))
    keep = (F.col("n") <= TIMELINE_POINTS) | (F.rand(seed=1) < F.lit(TIMELINE_POINTS) / F.col("n"))
    picked = counted.where(keep).orderBy("key", "line", "t")
    out: dict[str, dict[str, pd.DataFrame]] = {k: {"acknowledged": _empty(), "read": _empty()} for k in keys}
    got = parts.collect({"timelines": picked.select("key", "line", "t", "offset", "value")})["timelines"]
    for (key, line), group in itertools.groupby(got, key=lambda r: (r["key"], r["line"])):
        out[key][line] = _frame(list(group), ["t", "offset", "value"])
    return out


def _empty() -> pd.DataFrame:
    return pd.DataFrame([], columns=["t", "offset", "value"])
