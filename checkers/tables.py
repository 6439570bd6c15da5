"""From events to the one flat table the checker works on: operations and micro-ops.

Every invoke is paired with the next event of its process (its completion) by one window over
the process's events in index order (one shuffle by process); an invoke with no completion by the
end of the file is `info`. An operation is named by the index of the event that completed it (or
of its invoke when none did). The same window counts the process's assignments so far and keeps
the latest one's function: what the reference rules (checkers/data_plane/references.py) need from outside a
key. Micro-ops come from the completion when it carries them, else from the invoke; completion
micro-op i answers invoke micro-op i. Operations and micro-ops are rows of one table (`flat`, the
one table the check caches): an `op` row per operation, and a row of one shape per send, read, or
key an assign/subscribe holds, which the rules see one key at a time (checkers/data_plane/per_key.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_chaos.checkers.sql import in_list, literal
from kafka_chaos.history import columns
from kafka_chaos.history.columns import Kind
from kafka_chaos.history.events import (
    ACK_TYPES,
    ASSIGNS,
    CLIENT_FS,
    COMMIT,
    INFO,
    NEMESIS,
    OK,
    POLL,
    SEND,
    SHARE_ACK,
    SHARE_FS,
    SHARE_OFFSETS,
    SHARE_POLL,
)


@dataclass
class Tables:
    #: op, invoke, process, f, type, itime, ctime, error, phase, problem, nvalue (the nemesis's
    #: and commits' values only)
    ops: DataFrame
    #: kind ("send", "read", "assign", "commit", and a share group's "deliver", "ack", "start"),
    #: key, op, process, f, type (an ack's: its key's outcome), pos (orders a key's rows in the
    #: op), offset (a commit's: the next offset to read; a start's: the share-partition start
    #: offset), value (an ack's: its type's id, ACK_TYPES), n_assign and mode (the process's
    #: assignments so far, the latest one's function), time (the op's completion, ns; null when it
    #: never completed), itime (the op's invoke, ns; on assign, commit, deliver and ack rows only),
    #: count (a delivery's count as the client reported it)
    micro: DataFrame


#: An assign or subscribe of a client (the nemesis has no keys), as SQL.
ASSIGN_SQL = f"(f IN {in_list(ASSIGNS)} AND process != '{NEMESIS}')"

# The two tables are written as SQL expressions, not PySpark column objects: each column object
# is a round trip to the JVM, and these two functions made about 2,000 of them per check
# (docs/measurements.md, 2026-11-25). Backquoted names are the history's fields.


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
            f"coalesce(c.`type`, '{INFO}') AS `type`",
            "`time` AS itime",
            "c.`time` AS ctime",
            f"CASE WHEN c.`type` IS NULL THEN {literal(columns.NO_COMPLETION)} ELSE c.`error` END AS `error`",
            "phase",
            "`value` AS ivalue",
            "c.`value` AS cvalue",
            # The value of a nemesis operation (how its fault ends: checkers/measures/faults.py), of a
            # commit (its keys: checkers/measures/group_coverage.py) and a share-poll's invoke (the
            # group's settings: checkers/share/); null for the others.
            f"CASE WHEN process = '{NEMESIS}' OR f = '{COMMIT}'"
            f" THEN to_json(coalesce(c.`value`, `value`)) WHEN f = '{SHARE_POLL}' THEN to_json(`value`) END AS nvalue",
            "problem",
            "n_assign",
            "mode",
        )
    )


def _q(name: str) -> str:
    """A column's name as SQL (backquoted: some are SQL words)."""
    return f"`{name}`"


#: The flat table's columns (history/columns.py spells them, for its copy and for this table): an
#: operation's own (the `op` row of each operation carries them) and the micro table's (kind,
#: key, pos, offset, value, ...; null on `op` rows), in the micro table's order.
OP_COLUMNS = tuple(_q(name) for name, _ in columns.OP_COLUMNS)
MICRO_COLUMNS = tuple(
    _q(name)
    for name in (
        "kind",
        "key",
        "op",
        "process",
        "f",
        "type",
        "pos",
        "offset",
        "value",
        "n_assign",
        "mode",
        "time",
        "itime",
        "count",
    )
)


def flat(paired: DataFrame) -> DataFrame:
    """One table of every operation (kind `op`) and every micro-op (kind `send`, `read`,
    `assign`: a key an assign/subscribe holds, `commit`: a key a commit names, and a share
    group's `deliver`, `ack` and `start`), from `pair`'s rows; the caller caches it.

    One generator (`inline`) over `paired` makes all of them from one array per operation, so the
    file is read and shuffled by process once, the operation's columns are copied once per row,
    and no raw JSON is cached; each value was parsed once, by the reader (Spark's VARIANT), and
    its parts are typed reads of it."""
    client = f"(process != '{NEMESIS}' AND (f IN {in_list((*CLIENT_FS, *SHARE_FS))} OR {ASSIGN_SQL}))"
    # Micro-ops from the completion when it carries them, else from the invoke.
    of = "coalesce(try_variant_get(cvalue, '$', '{0}'), try_variant_get(ivalue, '$', '{0}'), array())"
    micro_ops, held_keys = of.format("array<variant>"), of.format("array<string>")
    null = "CAST(NULL AS BIGINT)"
    nothing = "CAST(NULL AS STRING)"

    def row(kind: str, key: str, pos: str, offset: str, value: str, count: str = null, mtype: str = nothing) -> str:
        # `mtype`: the micro-op's own outcome where it has one (an ack's key), else the op's.
        return (
            f"named_struct('kind', {literal(kind)}, 'key', {key}, 'pos', {pos}, 'offset', {offset}, 'value', {value},"
            f" 'count', {count}, 'mtype', {mtype})"
        )

    op_row = row(Kind.OP, nothing, null, null, null)
    held_row = row(Kind.ASSIGN, "k", "CAST(0 AS BIGINT)", null, null)
    # A commit: {key: next offset to read}, a row per key.
    commit_row = row(Kind.COMMIT, "e.key", "CAST(0 AS BIGINT)", "e.value", null)
    committed = of.format("map<string,bigint>").replace("array()", "map()")
    is_commit = f"(process != '{NEMESIS}' AND f = '{COMMIT}')"
    # A send: [kind, key, [offset, value]], or a bare value (no offset); its place in the operation orders it.
    send_row = row(
        Kind.SEND,
        "try_variant_get(m, '$[1]', 'string')",
        "CAST(i AS BIGINT)",
        "try_variant_get(m, '$[2][0]', 'bigint')",
        "coalesce(try_variant_get(m, '$[2][1]', 'bigint'), try_variant_get(m, '$[2]', 'bigint'))",
    )
    # A poll: [kind, {key: [[offset, value], ...]}]; a read is ordered by its micro-op, then its
    # place in the key's list. A share-poll's the same, each record with its delivery count.
    polled = "map_entries(try_variant_get(m, '$[1]', 'map<string,array<array<bigint>>>'))"

    def per_record(kind: str, count: str = null) -> str:
        record = row(kind, "e.key", f"i * {columns.READ_STRIDE} + j", "p[0]", "p[1]", count)
        per_key = f"e -> transform(coalesce(e.value, array()), (p, j) -> {record})"
        return f"coalesce(flatten(transform({polled}, {per_key})), array())"

    reads, deliveries = per_record(Kind.READ), per_record(Kind.DELIVER, "p[2]")
    # A share-ack's invoke: [kind, {key: [[offset, type], ...]}]; its completion: [kind, {key:
    # outcome}], each key's outcome its rows' type (no completion, or a key it leaves out: info).
    acked = "map_entries(try_variant_get(ivalue, '$[0][1]', 'map<string,array<array<string>>>'))"
    outcomes = "try_variant_get(cvalue, '$[0][1]', 'map<string,string>')"
    ack_types = "map(" + ", ".join(f"'{name}', {code}" for name, code in ACK_TYPES.items()) + ")"
    ack_row = row(
        Kind.ACK,
        "e.key",
        "CAST(j AS BIGINT)",
        "CAST(a[0] AS BIGINT)",
        f"CAST(element_at({ack_types}, a[1]) AS BIGINT)",
        null,
        f"coalesce(element_at(coalesce({outcomes}, map()), e.key), '{INFO}')",
    )
    per_ack = f"e -> transform(coalesce(e.value, array()), (a, j) -> {ack_row})"
    acks = f"coalesce(flatten(transform({acked}, {per_ack})), array())"
    # A share-offsets completion: [kind, {key: start offset}].
    start_row = row(Kind.START, "e.key", "CAST(0 AS BIGINT)", "e.value", null)
    started = "map_entries(coalesce(try_variant_get(m, '$[1]', 'map<string,bigint>'), map()))"
    starts = f"transform({started}, e -> {start_row})"
    per_micro = f"""CASE try_variant_get(m, '$[0]', 'string')
        WHEN '{SEND}' THEN array({send_row}) WHEN '{POLL}' THEN {reads} WHEN '{SHARE_POLL}' THEN {deliveries}
        WHEN '{SHARE_OFFSETS}' THEN {starts} ELSE array() END"""
    rows = f"""concat(
        array({op_row}),
        CASE WHEN {client} AND NOT {ASSIGN_SQL} AND f != '{SHARE_ACK}'
            THEN flatten(transform({micro_ops}, (m, i) -> {per_micro})) ELSE array() END,
        CASE WHEN {client} AND f = '{SHARE_ACK}' THEN {acks} ELSE array() END,
        CASE WHEN {client} AND {ASSIGN_SQL} THEN transform({held_keys}, k -> {held_row}) ELSE array() END,
        CASE WHEN {is_commit} THEN transform(map_entries({committed}), e -> {commit_row}) ELSE array() END
    )"""
    carried = [*OP_COLUMNS, _q("n_assign"), _q("mode")]
    # Each row keeps only its own kind's columns (null in the others): the cache's column builders
    # pass over a null for nothing, and a value for a second or so per 1M operations.
    shared = tuple(_q(c) for c in ("op", "process", "f"))
    op, micro = f"kind = {literal(Kind.OP)}", f"kind != {literal(Kind.OP)}"
    chosen = {c: c if c in shared else f"CASE WHEN {op} THEN {c} END AS {c}" for c in OP_COLUMNS}
    chosen[_q("type")] = "coalesce(mtype, `type`) AS `type`"
    # The invoke time also on the rows the rules order by it (data_plane/commit_lost.py, share/).
    chosen[_q("itime")] = f"CASE WHEN kind IN {in_list(columns.TIMED)} THEN itime END AS itime"
    for c, name in (("n_assign", "n_assign"), ("mode", "mode"), ("ctime", "time")):
        chosen[_q(name)] = f"CASE WHEN {micro} THEN {_q(c)} END AS {_q(name)}"
    return (
        paired.selectExpr(*carried, f"inline({rows})")
        .where(f"kind != {literal(Kind.SEND)} OR `value` IS NOT NULL")
        .selectExpr(*(chosen.get(_q(name), _q(name)) for name in columns.NAMES))
    )


def split(rows: DataFrame) -> Tables:
    """The operations and the micro-ops of `flat`'s table."""
    return Tables(
        rows.where(f"kind = {literal(Kind.OP)}").selectExpr(*OP_COLUMNS),
        rows.where(f"kind != {literal(Kind.OP)}").selectExpr(*MICRO_COLUMNS),
    )


def evidenced_ops(micro: DataFrame) -> DataFrame:
    """The info operations an ok poll proved committed: an info send whose value some ok poll
    read in that key (an operation's sends stand or fall together, across keys, so this is known
    before the shuffle by key and handed to it; checkers/data_plane/per_key.py). Info sends are few, so they
    are broadcast to the reads; no shuffle of the reads."""
    info = micro.where(f"kind = {literal(Kind.SEND)} AND `type` = '{INFO}'").select("key", "value", "op")
    ok_reads = micro.where(f"kind = {literal(Kind.READ)} AND `type` = '{OK}'").select("key", "value")
    return ok_reads.join(F.broadcast(info), ["key", "value"]).select("op").distinct()


def committed_send(evidenced: Column) -> Column:
    """A micro-op row that is a send which must have committed: ok, or info and `evidenced`."""
    return (F.col("kind") == Kind.SEND) & ((F.col("type") == OK) | ((F.col("type") == INFO) & evidenced))
