"""The report's small tables, aggregated by Spark (the report never sees the whole history).

Time is cut into at most BUCKETS buckets; everything here is a few hundred rows at most, handed
to pandas for the report: throughput and latency over time, the nemesis's fault windows, the
number of acknowledged values not yet read over time, and offset timelines of anomalous keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.faults import MAX_NEMESIS_OPS, fault_windows
from checkers.tables import NEMESIS, committed_send

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
    faults: list[dict[str, Any]]  # f, start, end (s), nodes
    timelines: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)  # key -> kind -> t, offset


def _pandas(df: Any, columns: list[str]) -> pd.DataFrame:
    rows = df.collect()
    return pd.DataFrame([r.asDict() for r in rows], columns=columns)


def _zero_filled(throughput: pd.DataFrame, bucket_s: float, last: int) -> pd.DataFrame:
    """Every bucket of every outcome, 0 where nothing completed: a stall must plot as zero, not
    as a line drawn straight across it from the buckets on either side."""
    parts = []
    for typ, part in throughput.groupby("type"):
        rates = pd.Series(part["per_s"].to_numpy(), index=(part["t"] / bucket_s).round().astype(int))
        rates = rates.groupby(level=0).sum().reindex(range(last + 1), fill_value=0.0)
        parts.append(pd.DataFrame({"t": rates.index * bucket_s, "type": typ, "per_s": rates.to_numpy()}))
    return pd.concat(parts, ignore_index=True) if parts else throughput


def collect(ops: DataFrame, micro: DataFrame, anomalies: dict[str, dict[str, Any]]) -> Series:
    end_ns = ops.agg(F.max(F.coalesce("ctime", "itime"))).first()[0] or 0
    width = max(1, -(-end_ns // BUCKETS))
    bucket_s = width / 1e9
    bucket = lambda c: (F.floor(F.col(c) / F.lit(width)) * F.lit(bucket_s)).alias("t")  # noqa: E731
    client = ops.where(F.col("process") != NEMESIS)
    done = client.where(F.col("ctime").isNotNull())
    throughput = _zero_filled(
        _pandas(
            done.groupBy(bucket("ctime"), "type").agg((F.count("*") / F.lit(bucket_s)).alias("per_s")).orderBy("t"),
            ["t", "type", "per_s"],
        ),
        bucket_s,
        end_ns // width,
    )
    lat = (F.col("ctime") - F.col("itime")) / F.lit(1e6)
    latency = _pandas(
        done.where(F.col("type") == "ok")
        .groupBy(bucket("ctime"), "f")
        .agg(F.percentile_approx(lat, 0.5).alias("p50"), F.percentile_approx(lat, 0.99).alias("p99"))
        .orderBy("t"),
        ["t", "f", "p50", "p99"],
    )
    # Unseen at time t: acknowledged by t and not read by an ok poll by t.
    acked = micro.where((F.col("kind") == "send") & (F.col("type") == "ok")).select(
        "key", "value", F.col("time").alias("ctime")
    )
    ok_reads = micro.where((F.col("kind") == "read") & (F.col("type") == "ok"))
    first_read = ok_reads.groupBy("key", "value").agg(F.min("time").alias("rtime"))
    both = acked.join(first_read, ["key", "value"], "left").select("ctime", F.greatest("ctime", "rtime").alias("seen"))
    ack_hist = _pandas(both.groupBy(bucket("ctime")).count(), ["t", "count"]).set_index("t")["count"]
    seen_hist = _pandas(both.where(F.col("seen").isNotNull()).groupBy(bucket("seen")).count(), ["t", "count"])
    seen_hist = seen_hist.set_index("t")["count"]
    grid = pd.Index([i * bucket_s for i in range(BUCKETS + 1)], name="t")
    cum = ack_hist.reindex(grid, fill_value=0).cumsum() - seen_hist.reindex(grid, fill_value=0).cumsum()
    unseen = cum.rename("unseen").reset_index()

    nemesis = (
        ops.where(F.col("process") == NEMESIS)
        .select("f", "type", "itime", "ctime")
        .orderBy("itime")
        .limit(MAX_NEMESIS_OPS)
        .collect()
    )
    faults = fault_windows(
        [
            {
                "f": r["f"],
                "type": r["type"],
                "start": r["itime"] / 1e9,
                "end": None if r["ctime"] is None else r["ctime"] / 1e9,
            }
            for r in nemesis
        ],
        end_ns / 1e9,
    )
    series = Series(bucket_s, end_ns / 1e9, throughput, latency, unseen, faults)
    series.timelines = _timelines(micro, anomalies)
    return series


def _anomalous_keys(anomalies: dict[str, dict[str, Any]]) -> list[str]:
    keys: list[str] = []
    for a in sorted(anomalies.values(), key=lambda a: -a["errors"]):
        for ex in a["examples"]:
            if a["errors"] and ex["key"] not in keys:
                keys.append(ex["key"])
    return keys[:TIMELINE_KEYS]


def _timelines(micro: DataFrame, anomalies: dict[str, dict[str, Any]]) -> dict[str, dict[str, pd.DataFrame]]:
    keys = _anomalous_keys(anomalies)
    if not keys:
        return {}
    mine = micro.where(F.col("key").isin(keys)).select("*", (F.col("time") / F.lit(1e9)).alias("t"))
    sends = mine.where(committed_send() & F.col("offset").isNotNull())
    reads = mine.where((F.col("kind") == "read") & (F.col("type") == "ok"))
    out: dict[str, dict[str, pd.DataFrame]] = {k: {} for k in keys}
    for kind, df in (("acknowledged", sends), ("read", reads)):
        counts = {r["key"]: r["count"] for r in df.groupBy("key").count().collect()}
        for key in keys:
            n = counts.get(key, 0)
            part = df.where(F.col("key") == key)
            if n > TIMELINE_POINTS:
                part = part.sample(fraction=TIMELINE_POINTS / n, seed=1)
            out[key][kind] = _pandas(part.select("t", "offset", "value").orderBy("t"), ["t", "offset", "value"])
    return out
