"""From events to the tables the rules work on: operations, sends, reads, assignments.

Every invoke is paired with the next event of its process (its completion); an invoke with no
completion by the end of the file is `info`. An operation is named by the index of the event
that completed it (or of its invoke when none did). Micro-ops come from the completion when it
carries them, else from the invoke; completion micro-op i answers invoke micro-op i.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from checkers.errors import BadHistory
from checkers.spark import materialize

NEMESIS = "nemesis"
CLIENT_FS = ("send", "poll", "txn")
MICRO = T.ArrayType(T.ArrayType(T.StringType()))
POLLED = T.MapType(T.StringType(), T.ArrayType(T.ArrayType(T.LongType())))
PAIR = T.ArrayType(T.LongType())
KEYS = T.ArrayType(T.StringType())


@dataclass
class Tables:
    ops: DataFrame  # op, invoke, process, f, type, itime, ctime, error, phase
    sends: DataFrame  # op, process, f, type, pos, key, value, offset
    reads: DataFrame  # op, process, f, type, pos, key, offset, value (pos orders a key's reads in the op)
    assigns: DataFrame  # op, process, f, type, keys


def pair(events: DataFrame) -> DataFrame:
    """One row per operation, with its completion; raises BadHistory on a broken pairing."""
    w = Window.partitionBy("process").orderBy("index")
    nxt = F.lead(F.struct("index", "time", "type", "f", "value", "error")).over(w)
    ev = events.select("*", F.lag("type").over(w).alias("prev_type"), nxt.alias("c"))
    # Rows that are not events (a `bad` message from load) are kept only to be reported.
    problem = (
        F.when(F.col("bad").isNotNull(), F.col("bad"))
        .when(
            (F.col("type") != "invoke") & (F.col("prev_type").isNull() | (F.col("prev_type") != "invoke")),
            F.concat(
                F.lit("event "),
                F.col("index"),
                F.lit(": a completion of process "),
                F.col("process"),
                F.lit(" with no invoke outstanding"),
            ),
        )
        .when(
            (F.col("type") == "invoke") & (F.col("c.type") == "invoke"),
            F.concat(
                F.lit("event "),
                F.col("index"),
                F.lit(": process "),
                F.col("process"),
                F.lit(" invokes again before its operation completed"),
            ),
        )
        .when(
            (F.col("type") == "invoke") & (F.col("c.f") != F.col("f")),
            F.concat(
                F.lit("event "),
                F.col("index"),
                F.lit(": completed as "),
                F.col("c.f"),
                F.lit(", invoked as "),
                F.col("f"),
            ),
        )
    )
    return ev.where((F.col("type") == "invoke") | problem.isNotNull()).select(
        F.coalesce(F.col("c.index"), F.col("index")).alias("op"),
        F.col("index").alias("invoke"),
        "process",
        "f",
        F.coalesce(F.col("c.type"), F.lit("info")).alias("type"),
        F.col("time").alias("itime"),
        F.col("c.time").alias("ctime"),
        F.when(F.col("c.type").isNull(), F.lit("no completion")).otherwise(F.col("c.error")).alias("error"),
        "phase",
        F.col("value").alias("ivalue"),
        F.col("c.value").alias("cvalue"),
        problem.alias("problem"),
    )


def build(events: DataFrame) -> Tables:
    paired = materialize(pair(events))
    bad = paired.where(F.col("problem").isNotNull()).orderBy("invoke").select("problem").first()
    if bad is not None:
        raise BadHistory(bad["problem"])
    client = paired.where((F.col("process") != NEMESIS) & F.col("f").isin(*CLIENT_FS))
    micro = F.coalesce(F.from_json("cvalue", MICRO), F.from_json("ivalue", MICRO))
    ops_micro = client.select("op", "process", "f", "type", F.posexplode(micro).alias("mpos", "m"))

    sends_m = ops_micro.where(F.col("m")[0] == "send")
    pair_col = F.from_json(F.col("m")[2], PAIR)
    sends = sends_m.select(
        "op",
        "process",
        "f",
        "type",
        F.col("mpos").alias("pos"),
        F.col("m")[1].alias("key"),
        F.coalesce(pair_col[1], F.col("m")[2].cast("bigint")).alias("value"),
        pair_col[0].alias("offset"),
    ).where(F.col("value").isNotNull())

    polls = ops_micro.where((F.col("m")[0] == "poll") & (F.size("m") > 1))
    per_key = polls.select("op", "process", "f", "type", "mpos", F.explode(F.from_json(F.col("m")[1], POLLED)))
    reads = per_key.select(
        "op", "process", "f", "type", "mpos", "key", F.posexplode("value").alias("ipos", "pair")
    ).select(
        "op",
        "process",
        "f",
        "type",
        (F.col("mpos") * F.lit(1 << 32) + F.col("ipos")).alias("pos"),
        "key",
        F.col("pair")[0].alias("offset"),
        F.col("pair")[1].alias("value"),
    )

    assigns = paired.where(F.col("f").isin("assign", "subscribe") & (F.col("process") != NEMESIS)).select(
        "op",
        "process",
        "f",
        "type",
        F.coalesce(F.from_json("cvalue", KEYS), F.from_json("ivalue", KEYS), F.array().cast(KEYS)).alias("keys"),
    )
    ops = paired.drop("ivalue", "cvalue", "problem")
    return Tables(materialize(ops), materialize(sends), materialize(reads), materialize(assigns))
