"""`lost-write` and `unseen`: acknowledged values that no ok poll read.

Per key, *bound* is the highest first-appearance index of any value an ok poll read. A must-have-
committed value whose last appearance is at or below bound, and that no ok poll read, is a lost
write: later values were read, so a consumer went past where it should have been. An ok-sent value
that no ok poll read and that is not lost is unseen: nothing after it was read, so the checker
cannot tell lost from late (the run's final read phase is what makes unseen meaningful).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.anomalies import instances
from checkers.version_order import Order


def lost(o: Order) -> DataFrame:
    """The lost writes: key, value, op, offset, idx, bound."""
    bound = o.ok_read.join(o.value_index, ["key", "value"]).groupBy("key").agg(F.max("first_idx").alias("bound"))
    unread = o.committed.join(o.ok_read, ["key", "value"], "left_anti")
    return (
        unread.join(o.value_index.select("key", "value", "last_idx", "offsets"), ["key", "value"])
        .join(bound, "key")
        .where(F.col("last_idx") <= F.col("bound"))
    )


def unseen(o: Order, lost_writes: DataFrame) -> DataFrame:
    ok_sent = o.committed.where(F.col("type") == "ok")
    return ok_sent.join(o.ok_read, ["key", "value"], "left_anti").join(
        lost_writes.select("key", "value"), ["key", "value"], "left_anti"
    )


def rules(o: Order) -> list[DataFrame]:
    lw = lost(o)
    return [
        instances(
            lw, "lost-write", ops=F.array("op"), offsets=F.col("offsets"), values=F.array("value"), process="process"
        ),
        instances(
            unseen(o, lw),
            "unseen",
            ops=F.array("op"),
            offsets=F.when(F.col("offset").isNull(), F.array().cast("array<bigint>")).otherwise(F.array("offset")),
            values=F.array("value"),
            process="process",
        ),
    ]
