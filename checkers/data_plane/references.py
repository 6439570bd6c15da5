"""A process's reference for a key, as ../shared/anomalies.md defines it for consumers and producers.

For a process and a key: the last value of that key in the process's latest operation that moved
it. A consumer's moves only with ok operations (a failed or unknown poll must rewind); an info poll
that carries values is still compared with it; a producer's moves with every operation whose sends
must have committed, the only ones the send rules compare (checkers/data_plane/send_order.py). An
assign/subscribe that leaves the key out clears it: the pipeline gives each row its process's count
of assignments so far (n_assign), and the key's rows hold the assignments that keep the key, so
more assignments since the reference than ones that keep the key means one left it out.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame

from kafka_chaos.checkers.anomalies import instance_sql, instances, pairs
from kafka_chaos.checkers.data_plane.key_tables import KeyTables
from kafka_chaos.checkers.sql import in_list
from kafka_chaos.history.events import OK

PREV = ("op", "last_idx", "last_offset", "last_value", "n_assign", "n_assign_key")


def per_op(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per operation that touched the key (rows with an index `idx`): its first and last
    entry by pos, its process, outcome, assignment count and mode."""
    r = rows.sort_values(["op", "pos"])
    g = r.groupby("op", sort=True)
    first, last = g.head(1).set_index("op"), g.tail(1).set_index("op")
    return pd.DataFrame(
        {
            "process": first["process"],
            "type": first["type"],
            "n_assign": first["n_assign"],
            "mode": first["mode"],
            "first_idx": first["idx"],
            "first_offset": first["offset"],
            "first_value": first["value"],
            "last_idx": last["idx"],
            "last_offset": last["offset"],
            "last_value": last["value"],
        }
    ).reset_index()


def with_references(ops: pd.DataFrame, assigns: pd.DataFrame, moved_by: Collection[str] = (OK,)) -> pd.DataFrame:
    """Each operation of `per_op` with its process's reference (prev_*), leaving out those with
    none and those whose reference an assignment cleared; operations of the outcomes `moved_by`
    move the reference."""
    if ops.empty:
        return ops
    held = assigns[["process", "op", "n_assign"]].assign(has=1)
    u = pd.concat([ops.assign(has=0), held], ignore_index=True).sort_values(["process", "op"], kind="stable")
    u = u.reset_index(drop=True)
    # Rows are grouped by process (contiguous after the sort); everything below is array
    # arithmetic over the whole key at once, the group boundaries standing in for group-bys.
    n = len(u)
    process = u["process"].to_numpy()
    starts = np.flatnonzero(np.r_[True, process[1:] != process[:-1]])
    group_start = np.repeat(starts, np.diff(np.r_[starts, n]))
    has = u["has"].to_numpy(dtype="int64")
    held_so_far = np.cumsum(has)
    # Assignments that keep the key, so far in the process (the row's own included).
    n_assign_key = held_so_far - np.r_[0, held_so_far][group_start]
    moving = (has == 0) & u["type"].isin(list(moved_by)).to_numpy()
    # Row by row, the process's latest moving row strictly before it; every prev_* column is
    # read from that row.
    last_mover = np.maximum.accumulate(np.where(moving, np.arange(n), -1))
    before = np.r_[-1, last_mover[:-1]]
    has_ref = before >= group_start
    at = np.where(has_ref, before, 0)
    u = u.assign(n_assign_key=n_assign_key)
    u = u.assign(**{"prev_" + c: np.where(has_ref, u[c].to_numpy(dtype="float64")[at], np.nan) for c in PREV})
    u = u[(has == 0) & has_ref]
    cleared = (u["n_assign"] - u["prev_n_assign"]) > (u["n_assign_key"] - u["prev_n_assign_key"])
    return u[~cleared]


def across(name: str, key: str, r: pd.DataFrame) -> pd.DataFrame:
    """Instances comparing an operation's first entry with the reference before it, each with its
    process's mode (the table exempts some under `subscribe`, checkers/anomalies.py)."""
    return instances(
        name,
        key,
        r["process"],
        pairs(r["prev_op"], r["op"]),
        pairs(r["prev_last_offset"], r["first_offset"]),
        pairs(r["prev_last_value"], r["first_value"]),
        r["mode"],
    )


# --- the same over every key, in Spark SQL ------------------------------------------------------


def per_op_query(t: KeyTables, rows: DataFrame) -> DataFrame:
    """`per_op` over every key: `rows` carry key, op, pos, process, type, n_assign, mode, idx,
    offset and value."""
    return t.sql(
        """SELECT key, op, f.process, f.`type`, f.n_assign, f.mode, f.idx AS first_idx, f.offset AS first_offset,
            f.`value` AS first_value, l.idx AS last_idx, l.offset AS last_offset, l.`value` AS last_value
        FROM (
            SELECT key, op, min(struct(pos, process, `type`, n_assign, mode, idx, offset, `value`)) AS f,
                max(struct(pos, idx, offset, `value`)) AS l
            FROM {rows} GROUP BY key, op)""",
        rows=rows,
    )


def with_references_query(t: KeyTables, ops: DataFrame, moved_by: Collection[str] = (OK,)) -> DataFrame:
    """`with_references` over every key: each row of `per_op_query` with its process's reference
    (`prev`: op, type, last_idx, last_offset, last_value), less those with none or cleared."""
    window = "PARTITION BY key, process ORDER BY op, has"
    held = t.sql(
        """SELECT key, process, op, 0 AS has, `type`, n_assign, mode, first_idx, first_offset, first_value,
            last_idx, last_offset, last_value FROM {ops}
        UNION ALL
        SELECT key, process, op, 1, NULL, n_assign, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM {assigns}""",
        ops=ops,
    ).selectExpr("*", f"sum(has) OVER ({window} ROWS UNBOUNDED PRECEDING) AS n_assign_key")
    mover = (
        "named_struct('op', op, 'type', `type`, 'last_idx', last_idx, 'last_offset', last_offset,"
        " 'last_value', last_value, 'n_assign', n_assign, 'n_assign_key', n_assign_key)"
    )
    return (
        held.selectExpr(
            "*",
            f"last(CASE WHEN has = 0 AND `type` IN {in_list(moved_by)} THEN {mover} END, true)"
            f" OVER ({window} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev",
        )
        .where("has = 0 AND prev IS NOT NULL")
        .where("n_assign - prev.n_assign <= n_assign_key - prev.n_assign_key")
    )


def across_sql(name: str) -> list[str]:
    """`across`'s instances, from `with_references_query`'s rows."""
    return instance_sql(
        name,
        "process",
        "array(prev.op, op)",
        "array(prev.last_offset, first_offset)",
        "array(prev.last_value, first_value)",
        mode="mode",
    )


def steps_query(t: KeyTables, rows: DataFrame, skip: str, back: str) -> DataFrame:
    """`step_instances` over every key: consecutive rows of a key inside one operation (by pos)
    more than one index apart (`skip`), or at or before the one just before (`back`)."""
    stepped = rows.selectExpr(
        "*", "lag(struct(idx, offset, `value`)) OVER (PARTITION BY key, op ORDER BY pos) AS p"
    ).where("p IS NOT NULL")
    hit = ["process", "array(op)", "array(p.offset, offset)", "array(p.`value`, `value`)"]
    return t.sql(
        f"""SELECT {", ".join(instance_sql(skip, *hit))} FROM {{stepped}} WHERE idx - p.idx > 1
        UNION ALL SELECT {", ".join(instance_sql(back, *hit))} FROM {{stepped}} WHERE idx - p.idx <= 0""",
        stepped=stepped,
    )
