"""The `stats` of results.json: operations by function and outcome, latencies, value counts."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.tables import NEMESIS, committed_send

QUANTILES = (0.5, 0.9, 0.99)


def operations(ops: DataFrame) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for row in ops.groupBy("f", "type").count().collect():
        out.setdefault(row["f"], {})[row["type"]] = row["count"]
    return {f: dict(sorted(v.items())) for f, v in sorted(out.items())}


def latencies_ms(ops: DataFrame) -> dict[str, dict[str, float]]:
    """Quantiles and maximum of ok client operations' latency, per function, in milliseconds."""
    ok = ops.where((F.col("type") == "ok") & (F.col("process") != NEMESIS) & F.col("ctime").isNotNull())
    lat = (F.col("ctime") - F.col("itime")) / F.lit(1e6)
    rows = ok.groupBy("f").agg(
        F.percentile_approx(lat, list(QUANTILES), 10000).alias("q"), F.max(lat).alias("max"), F.count("*").alias("n")
    )
    out = {}
    for row in rows.collect():
        entry = {f"p{round(q * 100)}": round(v, 3) for q, v in zip(QUANTILES, row["q"], strict=True)}
        entry["max"] = round(row["max"], 3)
        entry["count"] = row["n"]
        out[row["f"]] = entry
    return dict(sorted(out.items()))


def values(micro: DataFrame) -> dict[str, int]:
    """Distinct (key, value) counts, in one aggregation; lost and unseen are filled in from the
    anomalies."""
    sends = F.col("kind") == "send"
    pair = F.struct("key", "value")
    row = micro.agg(
        *[F.countDistinct(F.when(sends & (F.col("type") == t), pair)).alias(t) for t in ("ok", "fail", "info")],
        F.countDistinct(F.when(sends, pair)).alias("attempted"),
        F.countDistinct(F.when(committed_send(), pair)).alias("committed"),
        F.countDistinct(F.when((F.col("kind") == "read") & (F.col("type") == "ok"), pair)).alias("read"),
    ).first()
    return {
        "attempted": row["attempted"],
        "acknowledged": row["ok"],
        "failed": row["fail"],
        "indeterminate": row["info"],
        "must_have_committed": row["committed"],
        "read": row["read"],
    }


def has_ok_poll(ops: DataFrame, micro: DataFrame) -> bool:
    """An ok poll, or an ok transaction that read something."""
    if ops.where((F.col("f") == "poll") & (F.col("type") == "ok")).limit(1).count():
        return True
    ok_txn_read = (F.col("kind") == "read") & (F.col("f") == "txn") & (F.col("type") == "ok")
    return bool(micro.where(ok_txn_read).limit(1).count())


def summary(ops: DataFrame, micro: DataFrame) -> dict[str, Any]:
    span = ops.agg(F.max(F.coalesce("ctime", "itime")).alias("end"), F.countDistinct("process").alias("p")).first()
    return {
        "operations": operations(ops),
        "latency_ms": latencies_ms(ops),
        "values": values(micro),
        "duration_s": round((span["end"] or 0) / 1e9, 3),
        "processes": span["p"],
    }
