"""From events to the one flat table the checker works on: operations and micro-ops.

Every invoke is paired with the next event of its process (its completion) by one window over
the process's events in index order (one shuffle by process); an invoke with no completion by the
end of the file is `info`. An operation is named by the index of the event that completed it (or
of its invoke when none did). The same window counts the process's assignments so far and keeps
the latest one's function: what the reference rules (checkers/references.py) need from outside a
key. Micro-ops come from the completion when it carries them, else from the invoke; completion
micro-op i answers invoke micro-op i. Operations and micro-ops are rows of one table (`flat`, the
one table the check caches): an `op` row per operation, and a row of one shape per send, read, or
key an assign/subscribe holds, which the rules see one key at a time (checkers/per_key.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_chaos.checkers.sql import in_list

NEMESIS = "nemesis"
CLIENT_FS = ("send", "poll", "txn")
ASSIGNS = ("assign", "subscribe")


@dataclass
class Tables:
    ops: DataFrame  # op, invoke, process, f, type, itime, ctime, error, phase, problem, nvalue (nemesis only)
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
            # A nemesis operation's value (how its fault ends: checkers/faults.py); null for clients.
            f"CASE WHEN process = '{NEMESIS}' THEN coalesce(c.`value`, `value`) END AS nvalue",
            "problem",
            "n_assign",
            "mode",
        )
    )


#: The flat table's columns: an operation's own (the `op` row of each operation carries them)
#: and a micro-op's (kind, key, pos, offset, value; null on `op` rows).
OP_COLUMNS = ("op", "invoke", "process", "f", "`type`", "itime", "ctime", "`error`", "phase", "problem", "nvalue")
MICRO_COLUMNS = (
    "kind", "key", "op", "process", "f", "`type`", "pos", "offset", "`value`", "n_assign", "mode", "`time`",
)  # fmt: skip


def flat(paired: DataFrame) -> DataFrame:
    """One table of every operation (kind `op`) and every micro-op (kind `send`, `read`, or
    `assign`: a key an assign/subscribe holds), from `pair`'s rows; the caller caches it.

    One chain of generators over `paired` makes all of them, so the file is read and shuffled by
    process once and no raw JSON is cached; each operation's value is parsed once (Spark's
    VARIANT: `parse_json`, then typed reads of its parts)."""
    client = f"(process != '{NEMESIS}' AND (f IN {in_list(CLIENT_FS)} OR {ASSIGN_SQL}))"
    # Micro-ops from the completion when it carries them, else from the invoke.
    array_of = "try_variant_get(try_parse_json({}), '$', 'array<variant>')"
    micro_ops = f"coalesce({array_of.format('cvalue')}, {array_of.format('ivalue')}, array())"
    held_keys = "coalesce(from_json(cvalue, 'array<string>'), from_json(ivalue, 'array<string>'), array())"
    unit = "named_struct('unit', {}, 'm', {}, 'held', {}, 'mpos', {})"
    op_unit = unit.format("'op'", "CAST(NULL AS VARIANT)", "CAST(NULL AS STRING)", "0")
    micro_unit = unit.format("'micro'", "m", "CAST(NULL AS STRING)", "i")
    held_unit = unit.format("'assign'", "CAST(NULL AS VARIANT)", "k", "0")
    units = f"""concat(
        array({op_unit}),
        CASE WHEN {client} AND NOT {ASSIGN_SQL} THEN transform({micro_ops}, (m, i) -> {micro_unit}) ELSE array() END,
        CASE WHEN {client} AND {ASSIGN_SQL} THEN transform({held_keys}, k -> {held_unit}) ELSE array() END
    )"""
    # Every row as (key, [[offset, value], ...]): an operation or a held key one empty pair, a send
    # one pair (a bare value: no offset), a poll one entry per key it read.
    none = "array(CAST(array(NULL, NULL) AS array<bigint>))"
    send_pair = (
        "array(array(try_variant_get(u.m, '$[2][0]', 'bigint'),"
        " coalesce(try_variant_get(u.m, '$[2][1]', 'bigint'), try_variant_get(u.m, '$[2]', 'bigint'))))"
    )
    mkind = "try_variant_get(u.m, '$[0]', 'string')"
    mkey = "try_variant_get(u.m, '$[1]', 'string')"
    entries = f"""CASE
        WHEN u.unit = 'op' THEN array(named_struct('key', CAST(NULL AS STRING), 'value', {none}))
        WHEN u.unit = 'assign' THEN array(named_struct('key', u.held, 'value', {none}))
        WHEN {mkind} = 'send' THEN array(named_struct('key', {mkey}, 'value', {send_pair}))
        WHEN {mkind} = 'poll' THEN map_entries(try_variant_get(u.m, '$[1]', 'map<string,array<array<bigint>>>'))
    END"""
    carried = [*OP_COLUMNS, "n_assign", "mode"]
    kind = f"CASE WHEN u.unit != 'micro' THEN u.unit WHEN {mkind} = 'send' THEN 'send' ELSE 'read' END AS kind"
    return (
        paired.selectExpr(*carried, f"explode({units}) AS u")
        .selectExpr(*carried, kind, "u.mpos AS mpos", f"inline({entries}) AS (key, pairs)")
        .selectExpr(*carried, "kind", "mpos", "key", "posexplode(pairs) AS (ipos, pair)")
        .selectExpr(
            *carried, "kind", "key", "ctime AS `time`", "pair[0] AS offset", "pair[1] AS `value`",
            f"""CASE kind WHEN 'op' THEN CAST(NULL AS BIGINT) WHEN 'assign' THEN CAST(0 AS BIGINT)
                WHEN 'send' THEN CAST(mpos AS BIGINT) ELSE mpos * {1 << 32} + ipos END AS pos""",
        )
        .where("kind != 'send' OR `value` IS NOT NULL")
    )  # fmt: skip


def split(rows: DataFrame) -> Tables:
    """The operations and the micro-ops of `flat`'s table."""
    return Tables(
        rows.where("kind = 'op'").selectExpr(*OP_COLUMNS),
        rows.where("kind != 'op'").selectExpr(*MICRO_COLUMNS),
    )


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
