"""Consumer order: `poll-skip`, `nonmonotonic-poll` and their in-operation forms.

A consumer's *reference* for a key is the last value of that key in its latest ok operation that
polled it. Only ok operations move it (a process that saw an `info` is rebuilt as a new process);
an assign/subscribe that leaves the key out clears it. Each ok operation's first value of the key
is compared with the reference by version-order index: more than one after is a skip, at or
before is nonmonotonic. Under `subscribe` a group rebalance may legally move positions, so those
two are reported as allowed when the process's latest assignment was a subscribe. Inside one ok
operation, consecutive values of a key (across its poll micro-ops, in order) must be adjacent.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from checkers.anomalies import consecutive_in_op, instances, step_instances
from checkers.tables import Tables
from checkers.version_order import Order


def _per_op(o: Order) -> DataFrame:
    """One row per (process, key, ok operation that polled the key): its first and last value."""
    ok = o.read_idx.where((F.col("type") == "ok") & F.col("idx").isNotNull())
    first, last = F.struct("pos", "idx", "offset", "value"), F.struct(-F.col("pos"), "idx", "offset", "value")
    return ok.groupBy("process", "key", "op").agg(F.min(first).alias("first"), F.min(last).alias("last"))


def _with_references(per_op: DataFrame, assigns: DataFrame) -> DataFrame:
    """Adds the reference (prev_*), whether an assignment cleared it, and the assignment mode."""
    a = assigns.select("process", "op", "f", "keys")
    u1 = per_op.select(
        "process",
        "key",
        "op",
        "first",
        "last",
        F.lit(None).cast("string").alias("af"),
        F.lit(None).cast("array<string>").alias("keys"),
    ).unionByName(
        a.select(
            "process",
            F.lit(None).cast("string").alias("key"),
            "op",
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
    polls = u1.where(F.col("key").isNotNull()).drop("af", "keys")
    with_key = (
        u1.where(F.col("af").isNotNull())
        .select("process", F.explode("keys").alias("key"), "op")
        .select("process", "key", "op", F.lit(1).alias("has"))
    )
    u2 = polls.withColumn("has", F.lit(0)).unionByName(with_key, allowMissingColumns=True)
    wk = Window.partitionBy("process", "key").orderBy("op")
    u2 = u2.withColumn("n_assign_key", F.sum("has").over(wk.rowsBetween(Window.unboundedPreceding, Window.currentRow)))
    prev = wk.rowsBetween(Window.unboundedPreceding, -1)
    is_poll = F.col("has") == 0
    u2 = u2.select(
        "*",
        *[
            F.last(F.when(is_poll, F.col(c)), ignorenulls=True).over(prev).alias(f"prev_{c}")
            for c in ("op", "last", "n_assign", "n_assign_key")
        ],
    )
    cleared = (F.col("n_assign") - F.col("prev_n_assign")) > (F.col("n_assign_key") - F.col("prev_n_assign_key"))
    return u2.where(is_poll & F.col("prev_op").isNotNull()).withColumn("cleared", cleared)


def rules(t: Tables, o: Order) -> list[DataFrame]:
    refs = _with_references(_per_op(o), t.assigns).where(~F.col("cleared"))
    delta = F.col("first.idx") - F.col("prev_last.idx")
    common = dict(
        ops=F.array("prev_op", "op"),
        offsets=F.array("prev_last.offset", "first.offset"),
        values=F.array("prev_last.value", "first.value"),
        process="process",
        allowed=F.coalesce(F.col("mode") == "subscribe", F.lit(False)),
    )
    inner = consecutive_in_op(o.read_idx.where((F.col("type") == "ok") & F.col("idx").isNotNull()))
    inner_delta = F.col("idx") - F.col("prev.idx")
    return [
        instances(refs.where(delta > 1), "poll-skip", **common),
        instances(refs.where(delta <= 0), "nonmonotonic-poll", **common),
        step_instances(inner.where(inner_delta > 1), "int-poll-skip"),
        step_instances(inner.where(inner_delta <= 0), "int-nonmonotonic-poll"),
    ]
