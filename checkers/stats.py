"""The `stats` of results.json: operations by function and outcome, latencies, value counts.

The operation counts and latencies are Spark aggregations over the operations table, collected
with the check's other small results (checkers/parts.py); the value counts come from the per-key
pass (checkers/data_plane/tallies.py)."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_chaos.checkers.sql import double
from kafka_chaos.history.events import NEMESIS

QUANTILES = (0.5, 0.9, 0.99)


def queries(ops: DataFrame) -> dict[str, DataFrame]:
    """The aggregations `summary` reads (checkers/parts.py collects them)."""
    ok = ops.where(f"`type` = 'ok' AND process != '{NEMESIS}' AND ctime IS NOT NULL")
    quantiles = "array(" + ", ".join(double(q) for q in QUANTILES) + ")"
    return {
        "stats.operations": ops.groupBy("f", "type").count(),
        "stats.latency": ok.selectExpr("f", f"(ctime - itime) / {double(1e6)} AS lat")
        .groupBy("f")
        .agg(
            F.expr(f"percentile_approx(lat, {quantiles}, 10000)").alias("q"),
            F.expr("max(lat)").alias("max"),
            F.expr("count(1)").alias("n"),
        ),
    }


def operations(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        out.setdefault(row["f"], {})[row["type"]] = row["count"]
    return {f: dict(sorted(v.items())) for f, v in sorted(out.items())}


def latencies_ms(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Quantiles and maximum of ok client operations' latency, per function, in milliseconds."""
    out = {}
    for row in rows:
        entry = {f"p{round(q * 100)}": round(v, 3) for q, v in zip(QUANTILES, row["q"], strict=True)}
        entry["max"] = round(row["max"], 3)
        entry["count"] = row["n"]
        out[row["f"]] = entry
    return dict(sorted(out.items()))


def values(counts: dict[str, int]) -> dict[str, int]:
    """Distinct (key, value) counts summed over keys (checkers/data_plane/tallies.py's, by name); lost and
    unseen are filled in from the anomalies."""
    # The tallies also count ok transaction reads: for the verdict (an ok poll), not for results.json.
    return {name: n for name, n in counts.items() if name != "ok_txn_reads"}


def summary(parts: dict[str, list[dict[str, Any]]], facts: dict[str, Any], counts: dict[str, int]) -> dict[str, Any]:
    return {
        "operations": operations(parts["stats.operations"]),
        "latency_ms": latencies_ms(parts["stats.latency"]),
        "values": values(counts),
        "duration_s": round((facts["end"] or 0) / 1e9, 3),
        "processes": facts["processes"],
    }
