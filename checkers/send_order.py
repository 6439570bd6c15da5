"""Producer order: `nonmonotonic-send`, `int-nonmonotonic-send` and `int-send-skip`.

Compared by where each ok send landed: its value's index in the key's version order, wherever a
read or an acknowledgement put it (an ack without an offset still lands where a read saw the
value). A process's sends to a key must land in the order it made them (one operation at a time
per process), inside an operation and across its ok operations; an assign/subscribe that leaves
the key out clears the process's reference (checkers/references.py). Consecutive sends of one
operation landing more than one index apart is reported as `int-send-skip` but allowed: other
producers may interleave.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.anomalies import consecutive_in_op, instances, step_instances
from checkers.references import with_references
from checkers.tables import Tables
from checkers.version_order import Order


def rules(t: Tables, o: Order) -> list[DataFrame]:
    # Where each ok send landed: its value's (first) index, wherever a read or an ack put it.
    landed = (
        o.committed.where(F.col("type") == "ok")
        .join(o.value_index.select("key", "value", "first_idx", F.col("offsets")[0].alias("seen_at")), ["key", "value"])
        .select(
            "process", "key", "op", F.lit("ok").alias("type"), "pos",
            F.coalesce("offset", "seen_at").alias("offset"), "value", F.col("first_idx").alias("idx"),
        )
    )  # fmt: skip
    entry = F.struct("pos", "idx", "offset", "value")
    per_op = landed.groupBy("process", "key", "op", "type").agg(
        F.min(entry).alias("first"), F.min(F.struct(-F.col("pos"), "idx", "offset", "value")).alias("last")
    )
    refs = with_references(per_op, t.assigns)
    across = refs.where(~F.col("cleared") & (F.col("first.idx") <= F.col("prev_last.idx")))
    inner = consecutive_in_op(landed)
    return [
        instances(
            across,
            "nonmonotonic-send",
            ops=F.array("prev_op", "op"),
            offsets=F.array("prev_last.offset", "first.offset"),
            values=F.array("prev_last.value", "first.value"),
            process="process",
        ),
        step_instances(inner.where(F.col("idx") <= F.col("prev.idx")), "int-nonmonotonic-send"),
        step_instances(inner.where(F.col("idx") - F.col("prev.idx") > 1), "int-send-skip"),
    ]
