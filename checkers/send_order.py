"""Producer order: `nonmonotonic-send`, `int-nonmonotonic-send` and `int-send-skip`.

Compared by version-order index of the offsets that ok sends were acknowledged at. A process's
sends to a key must land in the order it made them (one operation at a time per process), inside
an operation and across its ok operations. Consecutive sends of one operation landing more than
one index apart is reported as `int-send-skip` but allowed: other producers may interleave.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from checkers.anomalies import consecutive_in_op, instances, step_instances
from checkers.version_order import Order


def rules(o: Order) -> list[DataFrame]:
    acked = (
        o.committed.where((F.col("type") == "ok") & F.col("offset").isNotNull())
        .join(o.offsets.select("key", "offset", "idx"), ["key", "offset"])
        .select("process", "key", "op", "pos", "offset", "value", "idx")
    )
    entry = F.struct("pos", "idx", "offset", "value")
    per_op = acked.groupBy("process", "key", "op").agg(
        F.min(entry).alias("first"), F.min(F.struct(-F.col("pos"), "idx", "offset", "value")).alias("last")
    )
    wp = Window.partitionBy("process", "key").orderBy("op")
    across = per_op.select("*", F.lag("last").over(wp).alias("prev"), F.lag("op").over(wp).alias("prev_op")).where(
        F.col("prev_op").isNotNull() & (F.col("first.idx") <= F.col("prev.idx"))
    )
    inner = consecutive_in_op(acked)
    return [
        instances(
            across,
            "nonmonotonic-send",
            ops=F.array("prev_op", "op"),
            offsets=F.array("prev.offset", "first.offset"),
            values=F.array("prev.value", "first.value"),
            process="process",
        ),
        step_instances(inner.where(F.col("idx") <= F.col("prev.idx")), "int-nonmonotonic-send"),
        step_instances(inner.where(F.col("idx") - F.col("prev.idx") > 1), "int-send-skip"),
    ]
