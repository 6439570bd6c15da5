"""Must-have-committed sends, the version order of each key, and each value's place in it.

- A send must have committed if its operation is `ok`, or `info` with at least one of its values
  read by an `ok` poll (an operation's sends stand or fall together).
- The version order of a key: offsets seen by any poll (ok, info or fail) or by a must-have-
  committed send, numbered 0, 1, 2, ... without holes. An offset with several values keeps the
  smallest for the order; the conflict is an `inconsistent-offsets` anomaly.
- A value's first and last index: the lowest and highest index of the offsets it was seen at
  (they differ only for a `duplicate`). Jepsen's lost-write bound uses first appearances and its
  test uses last appearances; so does ours.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from checkers.spark import materialize
from checkers.tables import Tables


@dataclass
class Order:
    ok_read: DataFrame  # key, value: distinct values some ok poll read
    committed: DataFrame  # op, process, type, pos, key, value, offset: must-have-committed sends
    offsets: DataFrame  # key, offset, idx, values (sorted), nvals
    value_index: DataFrame  # key, value, first_idx, last_idx, offsets (sorted)
    read_idx: DataFrame  # the reads with the index of their offset (column idx)


def build(t: Tables) -> Order:
    ok_read = materialize(t.reads.where(F.col("type") == "ok").select("key", "value").distinct())
    info_sends = t.sends.where(F.col("type") == "info")
    evidenced = info_sends.join(ok_read, ["key", "value"], "left_semi").select("op").distinct()
    committed = materialize(
        t.sends.where(F.col("type") == "ok").unionByName(info_sends.join(evidenced, "op", "left_semi"))
    )
    seen = (
        t.reads.where(F.col("offset").isNotNull())
        .select("key", "offset", "value")
        .unionByName(committed.where(F.col("offset").isNotNull()).select("key", "offset", "value"))
        .distinct()
    )
    by_offset = seen.groupBy("key", "offset").agg(F.array_sort(F.collect_list("value")).alias("values"))
    offsets = materialize(
        by_offset.select(
            "key",
            "offset",
            (F.dense_rank().over(Window.partitionBy("key").orderBy("offset")) - 1).alias("idx"),
            "values",
            F.size("values").alias("nvals"),
        )
    )
    value_index = materialize(
        seen.join(offsets.select("key", "offset", "idx"), ["key", "offset"])
        .groupBy("key", "value")
        .agg(
            F.min("idx").alias("first_idx"),
            F.max("idx").alias("last_idx"),
            F.array_sort(F.collect_list("offset")).alias("offsets"),
        )
    )
    read_idx = materialize(t.reads.join(offsets.select("key", "offset", "idx"), ["key", "offset"], "left"))
    return Order(ok_read, committed, offsets, value_index, read_idx)
