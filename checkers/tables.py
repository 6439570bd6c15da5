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

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from checkers.sql import in_list

NEMESIS = "nemesis"
CLIENT_FS = ("send", "poll", "txn")
ASSIGNS = ("assign", "subscribe")


@dataclass
class Tables:
    ops: DataFrame  # op, invoke, process, f, type, itime, ctime, error, phase, problem
    #: kind ("send", "read", "assign"), key, op, process, f, type, pos (orders a key's rows in the
    #: op), offset, value, n_assign and mode (the process's assignments so far, the latest one's
    #: function), time (the op's completion, ns; null when it never completed)
    micro: DataFrame


#: An assign or subscribe of a client (the nemesis has no keys), as SQL.
ASSIGN_SQL = f"(f IN {in_list(ASSIGNS)} AND process != '{NEMESIS}')"

# The two tables are written as SQL expressions, not PySpark column objects: each column object
# is a round trip to the JVM, and these two functions made about 2,000 of them per check (0.4 s
# of a small check's 2.7 s). Backquoted names are the history's fields.


def pair(events: DataFrame) -> DataFrame:
    """One row per operation, with its completion; `problem` names a broken pairing (the check
    reports the first as bad input)."""
    w = "PARTITION BY `process` ORDER BY `index`"
    # The process's assignments so far and the latest one's function, over the same window (one sort).
    so_far = f"({w} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
    is_assign = f"(`type` = 'invoke' AND {ASSIGN_SQL})"
    ev = events.selectExpr(
        "*",
        f"lag(`type`) OVER ({w}) AS prev_type",
        "lead(named_struct('index', `index`, 'time', `time`, 'type', `type`, 'f', f, 'value', `value`,"
        f" 'error', `error`)) OVER ({w}) AS c",
        f"sum(CAST({is_assign} AS BIGINT)) OVER {so_far} AS n_assign",
        f"last(CASE WHEN {is_assign} THEN f END, true) OVER {so_far} AS mode",
    )
    # Rows that are not events (a `bad` message from load) are kept only to be reported.
    problem = """CASE
        WHEN bad IS NOT NULL THEN bad
        WHEN `type` != 'invoke' AND (prev_type IS NULL OR prev_type != 'invoke')
            THEN concat('event ', `index`, ': a completion of process ', process, ' with no invoke outstanding')
        WHEN `type` = 'invoke' AND c.`type` = 'invoke'
            THEN concat('event ', `index`, ': process ', process, ' invokes again before its operation completed')
        WHEN `type` = 'invoke' AND c.f != f
            THEN concat('event ', `index`, ': completed as ', c.f, ', invoked as ', f)
    END"""
    return (
        ev.selectExpr("*", f"{problem} AS problem")
        .where("`type` = 'invoke' OR problem IS NOT NULL")
        .selectExpr(
            "coalesce(c.`index`, `index`) AS op",
            "`index` AS invoke",
            "process",
            "f",
            "coalesce(c.`type`, 'info') AS `type`",
            "`time` AS itime",
            "c.`time` AS ctime",
            "CASE WHEN c.`type` IS NULL THEN 'no completion' ELSE c.`error` END AS `error`",
            "phase",
            "`value` AS ivalue",
            "c.`value` AS cvalue",
            "problem",
            "n_assign",
            "mode",
        )
    )


def build(paired: DataFrame) -> Tables:
    """The two tables from `pair`'s operations (the caller caches those: both tables start there,
    and the file is read and shuffled by process once)."""
    client = paired.where(f"process != '{NEMESIS}' AND (f IN {in_list(CLIENT_FS)} OR {ASSIGN_SQL})")
    micro_json = "coalesce(from_json(cvalue, 'array<array<string>>'), from_json(ivalue, 'array<array<string>>'))"
    keys_json = (
        "coalesce(from_json(cvalue, 'array<string>'), from_json(ivalue, 'array<string>'),"
        " CAST(array() AS array<string>))"
    )
    common = ["op", "process", "f", "`type`", "n_assign", "mode", "ctime AS `time`"]
    ops_micro = client.where(f"NOT {ASSIGN_SQL}").selectExpr(*common, f"posexplode({micro_json}) AS (mpos, m)")
    pair_col = "from_json(m[2], 'array<bigint>')"
    sends = ops_micro.where("m[0] = 'send'").selectExpr(
        "'send' AS kind", "m[1] AS key", "op", "process", "f", "`type`", "CAST(mpos AS BIGINT) AS pos",
        f"{pair_col}[0] AS offset", f"coalesce({pair_col}[1], CAST(m[2] AS BIGINT)) AS `value`",
        "n_assign", "mode", "`time`",
    ).where("`value` IS NOT NULL")  # fmt: skip

    polls = ops_micro.where("m[0] = 'poll' AND size(m) > 1")
    per_key = polls.selectExpr(
        "op", "process", "f", "`type`", "n_assign", "mode", "`time`", "mpos",
        "explode(from_json(m[1], 'map<string,array<array<bigint>>>')) AS (key, `value`)",
    )  # fmt: skip
    reads = per_key.selectExpr("*", "posexplode(`value`) AS (ipos, pair)").selectExpr(
        "'read' AS kind", "key", "op", "process", "f", "`type`",
        f"mpos * {1 << 32} + ipos AS pos",
        "pair[0] AS offset", "pair[1] AS `value`",
        "n_assign", "mode", "`time`",
    )  # fmt: skip

    held = client.where(ASSIGN_SQL).selectExpr(
        "'assign' AS kind", f"explode({keys_json}) AS key", "op", "process", "f", "`type`",
        "CAST(0 AS BIGINT) AS pos", "CAST(NULL AS BIGINT) AS offset", "CAST(NULL AS BIGINT) AS `value`",
        "n_assign", "mode", "ctime AS `time`",
    )  # fmt: skip
    micro = sends.unionByName(reads).unionByName(held)
    ops = paired.drop("ivalue", "cvalue", "n_assign", "mode")
    return Tables(ops, micro)


def evidenced_ops(micro: DataFrame) -> DataFrame:
    """The info operations an ok poll proved committed: an info send whose value some ok poll
    read in that key (an operation's sends stand or fall together, across keys, so this is known
    before the shuffle by key and handed to it; checkers/per_key.py). Info sends are few, so they
    are broadcast to the reads; no shuffle of the reads."""
    info = micro.where("kind = 'send' AND `type` = 'info'").select("key", "value", "op")
    ok_reads = micro.where("kind = 'read' AND `type` = 'ok'").select("key", "value")
    return ok_reads.join(F.broadcast(info), ["key", "value"]).select("op").distinct()


def committed_send(evidenced: Column) -> Column:
    """A micro-op row that is a send which must have committed: ok, or info and `evidenced`."""
    return (F.col("kind") == "send") & ((F.col("type") == "ok") | ((F.col("type") == "info") & evidenced))
