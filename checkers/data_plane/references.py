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

from kafka_chaos.checkers.anomalies import instances, pairs
from kafka_chaos.history.events import OK

#: per_op's columns: from each operation's first entry (by pos), and from its last.
FIRST = ("process", "type", "n_assign", "mode", "idx", "offset", "value")
LAST = ("idx", "offset", "value")


def per_op(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per operation that touched the key (rows with an index `idx`), in op order: its first
    and last entry by pos, its process, outcome, assignment count and mode."""
    op = rows["op"].to_numpy()
    order = np.lexsort((rows["pos"].to_numpy(), op))
    op = op[order]
    starts = np.flatnonzero(np.r_[True, op[1:] != op[:-1]])
    first, last = order[starts], order[np.r_[starts[1:], len(op)] - 1]
    out = {"op": op[starts]}
    out.update({("first_" + c if c in LAST else c): rows[c].to_numpy()[first] for c in FIRST})
    out.update({"last_" + c: rows[c].to_numpy()[last] for c in LAST})
    return pd.DataFrame(out)


def with_references(ops: pd.DataFrame, assigns: pd.DataFrame, moved_by: Collection[str] = (OK,)) -> pd.DataFrame:
    """Each operation of `per_op` with its process's reference (prev_*), leaving out those with
    none and those whose reference an assignment cleared; operations of the outcomes `moved_by`
    move the reference. In the order of (process, op)."""
    if ops.empty:
        return ops
    # The operations and the assignments that keep the key (`has`), grouped by process, in op
    # order within it; everything below is array arithmetic over the whole key at once, the
    # group boundaries standing in for group-bys.
    n_ops = len(ops)
    process, _ = pd.factorize(np.r_[ops["process"].to_numpy(object), assigns["process"].to_numpy(object)], sort=True)
    order = np.lexsort((np.r_[ops["op"].to_numpy(), assigns["op"].to_numpy()], process))
    process = process[order]
    n = len(order)
    starts = np.flatnonzero(np.r_[True, process[1:] != process[:-1]])
    group_start = np.repeat(starts, np.diff(np.r_[starts, n]))
    has = (order >= n_ops).astype("int64")
    held_so_far = np.cumsum(has)
    # Assignments that keep the key, so far in the process (the row's own included).
    n_assign_key = held_so_far - np.r_[0, held_so_far][group_start]
    n_assign = np.r_[ops["n_assign"].to_numpy("float64"), assigns["n_assign"].to_numpy("float64")][order]
    moving = (has == 0) & np.r_[ops["type"].isin(list(moved_by)).to_numpy(), np.zeros(n - n_ops, bool)][order]
    # Row by row, the process's latest moving row strictly before it; every prev_* column is
    # read from that row.
    last_mover = np.maximum.accumulate(np.where(moving, np.arange(n), -1))
    before = np.r_[-1, last_mover[:-1]]
    mine = np.flatnonzero((has == 0) & (before >= group_start))
    at = before[mine]
    # Cleared: more assignments since the reference than ones that keep the key.
    cleared = (n_assign[mine] - n_assign[at]) > (n_assign_key[mine] - n_assign_key[at])
    mine, at = mine[~cleared], at[~cleared]
    out = ops.iloc[order[mine]].reset_index(drop=True)
    prev = ops.iloc[order[at]]
    for c in ("op", "type", "last_idx", "last_offset", "last_value"):
        out["prev_" + c] = prev[c].to_numpy()
    return out


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
