"""A process's reference for a key, as ../shared/anomalies.md defines it for consumers and producers.

For a process and a key: the last value of that key in the process's latest ok operation that
touched it (polled it, or sent to it). Only ok operations move it; an operation of another outcome
is still compared with it. An assign/subscribe that leaves the key out clears it.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F


def with_references(per_op: DataFrame, assigns: DataFrame) -> DataFrame:
    """`per_op` (process, key, op, type, first, last: one row per operation that touched the key)
    with the reference (prev_op, prev_last), whether an assignment cleared it (cleared), and the
    process's latest assignment mode (mode); rows with no reference before them are dropped."""
    a = assigns.select("process", "op", "f", "keys")
    u1 = per_op.select(
        "process",
        "key",
        "op",
        (F.col("type") == "ok").alias("moves"),
        "first",
        "last",
        F.lit(None).cast("string").alias("af"),
        F.lit(None).cast("array<string>").alias("keys"),
    ).unionByName(
        a.select(
            "process",
            F.lit(None).cast("string").alias("key"),
            "op",
            F.lit(None).cast("boolean").alias("moves"),
            F.lit(None).alias("first"),
            F.lit(None).alias("last"),
            F.col("f").alias("af"),
            "keys",
        ),
        allowMissingColumns=False,
    )
    wp = Window.partitionBy("process").orderBy("op").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    u1 = u1.select(
        "*",
        F.sum(F.col("af").isNotNull().cast("int")).over(wp).alias("n_assign"),
        F.last("af", ignorenulls=True).over(wp).alias("mode"),
    )
    touches = u1.where(F.col("key").isNotNull()).drop("af", "keys")
    with_key = (
        u1.where(F.col("af").isNotNull())
        .select("process", F.explode("keys").alias("key"), "op")
        .select("process", "key", "op", F.lit(1).alias("has"))
    )
    u2 = touches.withColumn("has", F.lit(0)).unionByName(with_key, allowMissingColumns=True)
    wk = Window.partitionBy("process", "key").orderBy("op")
    u2 = u2.withColumn("n_assign_key", F.sum("has").over(wk.rowsBetween(Window.unboundedPreceding, Window.currentRow)))
    prev = wk.rowsBetween(Window.unboundedPreceding, -1)
    is_touch = F.col("has") == 0
    moving = is_touch & F.col("moves")
    u2 = u2.select(
        "*",
        *[
            F.last(F.when(moving, F.col(c)), ignorenulls=True).over(prev).alias(f"prev_{c}")
            for c in ("op", "last", "n_assign", "n_assign_key")
        ],
    )
    cleared = (F.col("n_assign") - F.col("prev_n_assign")) > (F.col("n_assign_key") - F.col("prev_n_assign_key"))
    return u2.where(is_touch & F.col("prev_op").isNotNull()).withColumn("cleared", cleared)
