"""`duplicate` and `inconsistent-offsets`: the log disagrees with itself.

Both come from every observation of (key, offset, value): any poll (ok, info or fail) and any
must-have-committed send with a known offset. A value at two offsets is a duplicate (an idempotent
producer should never write one twice); an offset with two values means two clients were told
different things about the same log position (typically a truncated and rewritten log).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.anomalies import instances
from checkers.version_order import Order

MAX_OPS = 8  # operations named per instance


def _observations(o: Order) -> DataFrame:
    reads = o.read_idx.where(F.col("offset").isNotNull()).select("key", "offset", "value", "op")
    sends = o.committed.where(F.col("offset").isNotNull()).select("key", "offset", "value", "op")
    return reads.unionByName(sends)


def _ops(col: str = "op") -> F.Column:
    return F.slice(F.array_sort(F.collect_set(col)), 1, MAX_OPS)


def rules(o: Order) -> list[DataFrame]:
    obs = _observations(o)
    conflicts = (
        o.offsets.where(F.col("nvals") > 1)
        .join(obs.select("key", "offset", "op"), ["key", "offset"])
        .groupBy("key", "offset", "values")
        .agg(_ops().alias("ops"))
    )
    dups = (
        o.value_index.where(F.size("offsets") > 1)
        .join(obs.select("key", "value", "op"), ["key", "value"])
        .groupBy("key", "value", "offsets")
        .agg(_ops().alias("ops"))
    )
    return [
        instances(dups, "duplicate", ops=F.col("ops"), offsets=F.col("offsets"), values=F.array("value")),
        instances(
            conflicts, "inconsistent-offsets", ops=F.col("ops"), offsets=F.array("offset"), values=F.col("values")
        ),
    ]
