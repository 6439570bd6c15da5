"""From events to the two tables the checker works on: operations, and one flat table of micro-ops.

Every invoke is paired with the next event of its process (its completion) by one window over
the process's events in index order (one shuffle by process); an invoke with no completion by the
end of the file is `info`. An operation is named by the index of the event that completed it (or
of its invoke when none did). The same window counts the process's assignments so far and keeps
the latest one's function: what the reference rules (checkers/references.py) need from outside a
key. Micro-ops come from the completion when it carries them, else from the invoke; completion
micro-op i answers invoke micro-op i. They are exploded into rows of one shape (a send, a read, or
a key an assign/subscribe holds), which the rules see one key at a time (checkers/per_key.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

NEMESIS = "nemesis"
CLIENT_FS = ("send", "poll", "txn")
ASSIGNS = ("assign", "subscribe")
MICRO = T.ArrayType(T.ArrayType(T.StringType()))
POLLED = T.MapType(T.StringType(), T.ArrayType(T.ArrayType(T.LongType())))
PAIR = T.ArrayType(T.LongType())
KEYS = T.ArrayType(T.StringType())


@dataclass
class Tables:
    ops: DataFrame  # op, invoke, process, f, type, itime, ctime, error, phase, problem
    #: kind ("send", "read", "assign"), key, op, process, f, type, pos (orders a key's rows in the
    #: op), offset, value, n_assign and mode (the process's assignments so far, the latest one's
    #: function), time (the op's completion, ns; null when it never completed)
    micro: DataFrame


def _assigns() -> Column:
    """An assign or subscribe of a client (the nemesis has no keys)."""
    return F.col("f").isin(*ASSIGNS) & (F.col("process") != NEMESIS)


def pair(events: DataFrame) -> DataFrame:
    """One row per operation, with its completion; `problem` names a broken pairing (the check
    reports the first as bad input)."""
    w = Window.partitionBy("process").orderBy("index")
    nxt = F.lead(F.struct("index", "time", "type", "f", "value", "error")).over(w)
    # The process's assignments so far and the latest one's function, over the same window (one sort).
    so_far = w.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    is_assign = (F.col("type") == "invoke") & _assigns()
    ev = events.select(
        "*",
        F.lag("type").over(w).alias("prev_type"),
        nxt.alias("c"),
        F.sum(is_assign.cast("long")).over(so_far).alias("n_assign"),
        F.last(F.when(is_assign, F.col("f")), ignorenulls=True).over(so_far).alias("mode"),
    )
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
        "n_assign",
        "mode",
    )


def build(paired: DataFrame) -> Tables:
    """The two tables from `pair`'s operations (the caller caches those: both tables start there,
    and the file is read and shuffled by process once)."""
    is_assign = _assigns()
    client = paired.where((F.col("process") != NEMESIS) & (F.col("f").isin(*CLIENT_FS) | is_assign))
    micro_json = F.coalesce(F.from_json("cvalue", MICRO), F.from_json("ivalue", MICRO))
    keys_json = F.coalesce(F.from_json("cvalue", KEYS), F.from_json("ivalue", KEYS), F.array().cast(KEYS))
    common = [
        "op", "process", "f", "type", "n_assign", "mode",
        F.col("ctime").alias("time"),
    ]  # fmt: skip
    ops_micro = client.where(~is_assign).select(*common, F.posexplode(micro_json).alias("mpos", "m"))

    sends_m = ops_micro.where(F.col("m")[0] == "send")
    pair_col = F.from_json(F.col("m")[2], PAIR)
    sends = sends_m.select(
        F.lit("send").alias("kind"),
        F.col("m")[1].alias("key"),
        "op", "process", "f", "type",
        F.col("mpos").cast("long").alias("pos"),
        pair_col[0].alias("offset"),
        F.coalesce(pair_col[1], F.col("m")[2].cast("bigint")).alias("value"),
        "n_assign", "mode", "time",
    ).where(F.col("value").isNotNull())  # fmt: skip

    polls = ops_micro.where((F.col("m")[0] == "poll") & (F.size("m") > 1))
    per_key = polls.select(
        "op", "process", "f", "type", "n_assign", "mode", "time", "mpos",
        F.explode(F.from_json(F.col("m")[1], POLLED)),
    )  # fmt: skip
    reads = per_key.select(
        "*", F.posexplode("value").alias("ipos", "pair")
    ).select(
        F.lit("read").alias("kind"), "key", "op", "process", "f", "type",
        (F.col("mpos") * F.lit(1 << 32) + F.col("ipos")).alias("pos"),
        F.col("pair")[0].alias("offset"), F.col("pair")[1].alias("value"),
        "n_assign", "mode", "time",
    )  # fmt: skip

    held = client.where(is_assign).select(
        F.lit("assign").alias("kind"), F.explode(keys_json).alias("key"), "op", "process", "f", "type",
        F.lit(0).cast("long").alias("pos"), F.lit(None).cast("long").alias("offset"),
        F.lit(None).cast("long").alias("value"), "n_assign", "mode",
        F.col("ctime").alias("time"),
    )  # fmt: skip
    micro = sends.unionByName(reads).unionByName(held)
    ops = paired.drop("ivalue", "cvalue", "n_assign", "mode")
    return Tables(ops, micro)


def evidenced_ops(micro: DataFrame) -> DataFrame:
    """The info operations an ok poll proved committed: an info send whose value some ok poll
    read in that key (an operation's sends stand or fall together, across keys, so this is known
    before the shuffle by key and handed to it; checkers/per_key.py). Info sends are few, so they
    are broadcast to the reads; no shuffle of the reads."""
    info = micro.where((F.col("kind") == "send") & (F.col("type") == "info")).select("key", "value", "op")
    ok_reads = micro.where((F.col("kind") == "read") & (F.col("type") == "ok")).select("key", "value")
    return ok_reads.join(F.broadcast(info), ["key", "value"]).select("op").distinct()


def committed_send(evidenced: Column) -> Column:
    """A micro-op row that is a send which must have committed: ok, or info and `evidenced`."""
    return (F.col("kind") == "send") & ((F.col("type") == "ok") | ((F.col("type") == "info") & evidenced))
