"""Every key's version order, and the tables the per-key rules share, as Spark SQL over all keys.

The same definitions as checkers/data_plane/version_order.py's pandas view of one key, computed for
every key at once, so the rules are DataFrame operations (joins, and windows partitioned by key)
and no row goes to a Python worker:

- `committed`: the sends that must have committed: `ok`, or `info` with a value some ok poll read
  (`evidenced`: an operation's sends stand or fall together, across keys).
- `observed`: every sighting that builds the order: any poll's read (ok, info or fail) and any
  committed send, where its offset is known; each with `idx`, its offset's index in the key's
  version order (0, 1, 2, ... without holes: a dense rank of the key's offsets).
- `seen`: each distinct (key, offset, value) sighted, with its index.
- `values`: per (key, value) seen: its first and last index, its first offset and how many
  offsets it was seen at (more than one only for a `duplicate`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kafka_chaos.checkers.sql import in_list

#: The micro-op kinds of a share group (checkers/tables.py).
SHARE_KINDS = ("deliver", "ack", "start")
#: The micro table's columns a rule reads.
COLUMNS = "kind, key, op, process, f, `type`, pos, offset, `value`, n_assign, mode, `time`, itime"


@dataclass
class KeyTables:
    spark: SparkSession
    sends: DataFrame
    reads: DataFrame  # of every outcome
    ok_reads: DataFrame
    assigns: DataFrame  # a row per key an assign/subscribe holds
    commits: DataFrame  # a row per key a commit names (offset: the next to read)
    committed: DataFrame
    ok_values: DataFrame  # key, value: distinct values some ok poll read
    observed: DataFrame  # the micro columns and idx
    seen: DataFrame  # key, offset, value, idx
    values: DataFrame  # key, value, first_idx, last_idx, first_offset, n
    share_only: DataFrame | None  # key: keys only a share group read (no poll read them)

    def sql(self, text: str, **tables: DataFrame) -> DataFrame:
        """`text` with `{name}` standing for this object's tables and `tables`."""
        named = {n: getattr(self, n) for n in self.__dataclass_fields__ if n != "spark" and "{" + n + "}" in text}
        return self.spark.sql(text, **named, **tables)


def build(micro: DataFrame, evidenced: DataFrame, share: bool) -> KeyTables:
    """The tables of `micro` (checkers/tables.py's micro-ops); `evidenced`: the info operations an
    ok poll proved committed (column `op`); `share`: whether the run has share consumers."""
    spark = micro.sparkSession
    rows = micro.selectExpr(*COLUMNS.split(", "))
    sends = rows.where("kind = 'send'")
    reads = rows.where("kind = 'read'")
    ok_reads = reads.where("`type` = 'ok'")
    committed = spark.sql(
        "SELECT * FROM {sends} WHERE `type` = 'ok'"
        " OR (`type` = 'info' AND op IN (SELECT /*+ BROADCAST */ op FROM {evidenced}))",
        sends=sends,
        evidenced=evidenced,
    )
    ok_values = ok_reads.selectExpr("key", "`value`").distinct()
    observed = spark.sql(
        """SELECT *, dense_rank() OVER (PARTITION BY key ORDER BY offset) - 1 AS idx FROM (
            SELECT * FROM {reads} WHERE offset IS NOT NULL
            UNION ALL SELECT * FROM {committed} WHERE offset IS NOT NULL)""",
        reads=reads,
        committed=committed,
    )
    seen = observed.selectExpr("key", "offset", "`value`", "idx").distinct()
    values = (
        seen.where("`value` IS NOT NULL")
        .groupBy("key", "value")
        .agg(
            F.expr("min(idx) AS first_idx"),
            F.expr("max(idx) AS last_idx"),
            F.expr("min(offset) AS first_offset"),
            F.expr("count(1) AS n"),
        )
    )
    share_only = None
    if share:
        share_only = spark.sql(
            "SELECT key FROM {micro} GROUP BY key"
            f" HAVING max(CAST(kind IN {in_list(SHARE_KINDS)} AS INT)) = 1 AND max(CAST(kind = 'read' AS INT)) = 0",
            micro=micro,
        )
    return KeyTables(
        spark,
        sends,
        reads,
        ok_reads,
        rows.where("kind = 'assign'"),
        rows.where("kind = 'commit'"),
        committed,
        ok_values,
        observed,
        seen,
        values,
        share_only,
    )
