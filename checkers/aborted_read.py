"""`G1a`, aborted read: an ok poll read a value whose send operation failed.

`fail` means certainly did not happen (for a transaction: it aborted), so the value must never be
visible; for read_committed consumers this is the transactional guarantee at stake.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.anomalies import instances
from checkers.tables import Tables
from checkers.version_order import Order


def rules(t: Tables, o: Order) -> list[DataFrame]:
    failed = t.sends.where(F.col("type") == "fail").select("key", "value", F.col("op").alias("send_op"))
    ok_reads = o.read_idx.where(F.col("type") == "ok").select("key", "value", "offset", "op", "process")
    hits = ok_reads.join(failed, ["key", "value"])
    return [
        instances(
            hits,
            "G1a",
            ops=F.array("op", "send_op"),
            offsets=F.array("offset"),
            values=F.array("value"),
            process="process",
        )
    ]
