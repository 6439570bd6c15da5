"""The `stats` of results.json: operations by function and outcome, latencies, value counts."""

from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from checkers.tables import NEMESIS, Tables
from checkers.version_order import Order

QUANTILES = (0.5, 0.9, 0.99)


def operations(t: Tables) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for row in t.ops.groupBy("f", "type").count().collect():
        out.setdefault(row["f"], {})[row["type"]] = row["count"]
    return {f: dict(sorted(v.items())) for f, v in sorted(out.items())}


def latencies_ms(t: Tables) -> dict[str, dict[str, float]]:
    """Quantiles and maximum of ok client operations' latency, per function, in milliseconds."""
    ok = t.ops.where((F.col("type") == "ok") & (F.col("process") != NEMESIS) & F.col("ctime").isNotNull())
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


def values(t: Tables, o: Order) -> dict[str, int]:
    """Distinct (key, value) counts; lost and unseen are filled in from the anomalies."""
    sent = t.sends.groupBy("type").agg(F.countDistinct("key", "value").alias("n")).collect()
    by_type = {r["type"]: r["n"] for r in sent}
    return {
        "attempted": sum(by_type.values()),
        "acknowledged": by_type.get("ok", 0),
        "failed": by_type.get("fail", 0),
        "indeterminate": by_type.get("info", 0),
        "must_have_committed": o.committed.select("key", "value").distinct().count(),
        "read": o.ok_read.count(),
    }


def has_ok_poll(t: Tables) -> bool:
    """An ok poll, or an ok transaction that read something."""
    if t.ops.where((F.col("f") == "poll") & (F.col("type") == "ok")).limit(1).count():
        return True
    return bool(t.reads.where((F.col("f") == "txn") & (F.col("type") == "ok")).limit(1).count())


def summary(t: Tables, o: Order) -> dict[str, Any]:
    span = t.ops.agg(F.max(F.coalesce("ctime", "itime")).alias("end"), F.countDistinct("process").alias("p")).first()
    return {
        "operations": operations(t),
        "latency_ms": latencies_ms(t),
        "values": values(t, o),
        "duration_s": round((span["end"] or 0) / 1e9, 3),
        "processes": span["p"],
    }
