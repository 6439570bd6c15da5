"""Transaction dependency cycles: `G0`, `G1c`, `G1c-process`, `G1c-realtime` (../shared/anomalies.md).

Nodes are the `txn` operations that must have committed. Edges are of the kinds of
checkers/edge_kinds.py: ww, wr, process and realtime.

The ww and wr edges are a join over each key's version order, so they come out of the per-key pass
(`rules`, one shuffle by key with every other rule) as rows of the instance table named `~ww` and
`~wr`. The check collects them with the transactions' times (`queries`), and `search` finds the
cycles in the driver: a cycle is inside one strongly connected component (checkers/txn/scc.py), so
each anomaly is counted once per component of its graph, and every component of one transaction
is pruned before any cycle is looked for. Each instance carries the edge kinds its cycles need
(those of the smallest graph it is a component of); whether that makes it an error is the anomaly
table's to say (checkers/anomalies.py `is_error`).

| anomaly | one instance per component (2+ transactions) of | counted when | needs |
|---|---|---|---|
| `G0` | ww | always | ww |
| `G1c` | wr | always | wr |
| `G1c` | ww + wr | it holds a wr edge and no wr-only cycle | ww, wr |
| `G1c-process` | wr + process | it holds no wr-only cycle | wr, process |
| `G1c-realtime` | wr + realtime | it holds no wr + process cycle | wr, realtime |

Realtime order has up to n^2 edges; it is never built. Instead, the transactions sorted by completion
form a chain of time points: T -> its own point, each point -> the next, and the last point before
T's invoke -> T; T1 reaches T2 through the chain exactly when T1 completed before T2 was invoked.
And it is needed only near a wr edge that goes back in invoke time (the reader invoked no later
than the writer): process and realtime edges always go forward in invoke time, so every wr +
realtime cycle has such an edge, and every transaction on the cycle was invoked inside the span of
one of them (a cycle's back edges cover every invoke time between its first and last). The rest
is pruned before the chain is built; a run without such a wr edge has no such cycle at all.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame

from kafka_chaos.checkers.anomalies import ANOMALIES, INSTANCE_COLUMNS, Fact, is_error
from kafka_chaos.checkers.data_plane.version_order import KeyView
from kafka_chaos.checkers.edge_kinds import EdgeKind
from kafka_chaos.checkers.txn import scc

PREFIX = "~"
#: The instance table's rows of a key's edges, by kind (`rules`).
WW, WR = PREFIX + EdgeKind.WW.label, PREFIX + EdgeKind.WR.label
#: The anomalies this module finds, in the table's order.
NAMES = tuple(a.name for a in ANOMALIES if a.module == __name__.removeprefix("kafka_chaos.checkers."))


# --- per key, in the rules' pass --------------------------------------------------------------


def _edge_row(name: str, key: str, a: pd.Series, b: pd.Series) -> pd.DataFrame:
    """All of a key's edges of one kind as one row: `ops` holds them as pairs, flattened (a row per
    edge cost a Python list per edge, and Spark a row per edge to gather them again)."""
    pairs = np.column_stack([a.to_numpy(dtype=np.int64), b.to_numpy(dtype=np.int64)]).ravel().tolist()
    return pd.DataFrame(
        {
            "name": [name],
            "key": [key],
            "process": [None],
            "ops": [pairs],
            "offsets": [[]],
            "values": [[]],
            "allowed": [True],
        },
        columns=list(INSTANCE_COLUMNS),
    )


def rules(k: KeyView) -> list[pd.DataFrame]:
    """The key's ww and wr edges between different transactions, each once."""
    writers = k.committed.loc[k.committed["f"] == "txn", ["op", "value"]].drop_duplicates()
    if writers.empty:
        return []
    out = []
    at = k.seen.merge(writers, on="value")[["idx", "op"]].drop_duplicates()
    ww = at.merge(at.assign(idx=at["idx"] - 1), on="idx", suffixes=("_a", "_b"))
    ww = ww[ww["op_a"] != ww["op_b"]].drop_duplicates(["op_a", "op_b"])
    if len(ww):
        out.append(_edge_row(WW, k.key, ww["op_a"], ww["op_b"]))
    readers = k.ok_reads.loc[k.ok_reads["f"] == "txn", ["op", "value"]]
    wr = writers.merge(readers, on="value", suffixes=("_a", "_b"))
    wr = wr[wr["op_a"] != wr["op_b"]].drop_duplicates(["op_a", "op_b"])
    if len(wr):
        out.append(_edge_row(WR, k.key, wr["op_a"], wr["op_b"]))
    return out


# --- in Spark: what the driver needs ------------------------------------------------------------


def queries(found: DataFrame, ops: DataFrame) -> dict[str, DataFrame]:
    """The edges (a row per key and kind, `rules`) and the transactions that may be nodes (ok, or
    info: the driver keeps the evidenced ones) as one row of arrays: a million transactions'
    numbers parse in the driver in a fraction of a second."""
    return {
        "txn_edges": found.where(f"startswith(name, '{PREFIX}')").select("name", "key", "ops"),
        "txn_nodes": ops.where("f = 'txn' AND `type` IN ('ok', 'info')").selectExpr(
            "collect_list(op) AS op",
            # Client processes are numbers; the rare one that is not gets a number of its own.
            "collect_list(coalesce(try_cast(process AS BIGINT), xxhash64(process))) AS process",
            "collect_list(itime) AS itime",
            "collect_list(coalesce(ctime, -1)) AS ctime",
            "collect_list(CASE WHEN `type` = 'info' THEN op END) AS info",
        ),
    }


# --- in the driver: the graphs and their cycles ---------------------------------------------------

NEVER = np.iinfo(np.int64).max  # the completion time of a transaction that never completed


@dataclass
class Graph:
    """The transactions (positions 0..n-1) and their ww and wr edges."""

    op: np.ndarray  # history index of each node
    process: np.ndarray  # a number per process
    itime: np.ndarray
    ctime: np.ndarray  # NEVER for one that never completed
    src: np.ndarray
    dst: np.ndarray
    kind: np.ndarray  # EdgeKind.WW or EdgeKind.WR
    key: np.ndarray  # per edge, its key's number (NO_KEY for none)
    names: dict[int, str]  # key number -> key

    @property
    def n(self) -> int:
        return len(self.op)


def _array(row: dict[str, Any], name: str, dtype: Any) -> np.ndarray:
    return np.asarray(row.get(name) or [], dtype=dtype)


def graph(got: dict[str, list[dict[str, Any]]], evidenced: Collection[int]) -> Graph:
    """The graph from `queries`' rows; `evidenced`: the info operations an ok poll proved committed."""
    nodes = got["txn_nodes"][0] if got["txn_nodes"] else {}
    op = _array(nodes, "op", np.int64)
    unproved = np.setdiff1d(_array(nodes, "info", np.int64), np.fromiter(evidenced, dtype=np.int64))
    keep = ~np.isin(op, unproved) if len(unproved) else np.ones(len(op), dtype=bool)
    order = np.argsort(op[keep], kind="stable")
    op = op[keep][order]
    process = _array(nodes, "process", np.int64)[keep][order]
    itime = _array(nodes, "itime", np.int64)[keep][order]
    ctime = _array(nodes, "ctime", np.int64)[keep][order]
    ctime[ctime < 0] = NEVER
    # In a canonical order (rows by name and key, then edges by their ends below), not the order
    # Spark happened to return them in: the search's examples follow the edges' order, and the
    # same history must give the same examples however it was read (the JSON or its columnar copy).
    rows = sorted(got["txn_edges"], key=lambda row: (row["name"], row["key"]))
    names = dict(enumerate(row["key"] for row in rows))
    empty = np.zeros(0, dtype=np.int64)
    pairs = [np.asarray(row["ops"], dtype=np.int64).reshape(-1, 2) for row in rows]
    s, d = (np.concatenate([empty, *(p[:, j] for p in pairs)]) for j in (0, 1))
    codes = [EdgeKind.of(row["name"][len(PREFIX) :]) for row in rows]
    k = np.concatenate([empty, *(np.full(len(p), c) for p, c in zip(pairs, codes, strict=True))])
    h = np.concatenate([empty, *(np.full(len(p), i) for i, p in enumerate(pairs))])
    # Node positions, by a table from history index to position; an edge whose end is no node
    # (`rules` makes none) is dropped.
    size = int(max(op.max(initial=-1), s.max(initial=-1), d.max(initial=-1))) + 1
    position = np.full(size, -1, dtype=np.int64)
    position[op] = np.arange(len(op))
    si, di = position[s], position[d]
    valid = (si >= 0) & (di >= 0)
    si, di, k, h = si[valid], di[valid], k[valid], h[valid]
    order = np.lexsort((h, k, di, si))
    return Graph(op, process, itime, ctime, si[order], di[order], k[order], h[order], names)


NO_KEY = -1  # the key number of a process or realtime edge
Edge = tuple[int, int, int, int]  # from node, to node, EdgeKind, key number


@dataclass
class Edges:
    """Edges of one graph over some node numbering."""

    src: np.ndarray
    dst: np.ndarray
    kind: np.ndarray
    key: np.ndarray

    def where(self, mask: np.ndarray) -> Edges:
        return Edges(self.src[mask], self.dst[mask], self.kind[mask], self.key[mask])

    @classmethod
    def keyless(cls, src: np.ndarray, dst: np.ndarray, kind: EdgeKind) -> Edges:
        return cls(src, dst, np.full(len(src), kind, dtype=np.int64), np.full(len(src), NO_KEY, dtype=np.int64))

    def __add__(self, other: Edges) -> Edges:
        return Edges(
            np.concatenate([self.src, other.src]),
            np.concatenate([self.dst, other.dst]),
            np.concatenate([self.kind, other.kind]),
            np.concatenate([self.key, other.key]),
        )

    def components(self, n: int) -> np.ndarray:
        return scc.components(n, self.src, self.dst)

    def internal(self, labels: np.ndarray) -> np.ndarray:
        """Which edges have both ends in one component of `labels`."""
        return (labels[self.src] >= 0) & (labels[self.src] == labels[self.dst])


@dataclass
class Instance:
    """One component found, the edge kinds its cycles need, and a cycle through it (edges over the
    graph's nodes)."""

    needs: frozenset[EdgeKind]
    cycle: list[Edge]


def _instances(
    labels: np.ndarray, comps: np.ndarray, edges: Edges, through: EdgeKind, needs: set[EdgeKind], limit: int
) -> list[Instance]:
    """An instance per component in `comps`, each needing edges of the kinds `needs`; for the first
    `limit`, a shortest cycle through the component's first internal edge of kind `through`."""
    out = []
    inside = edges.where(edges.internal(labels))
    for c in comps.tolist():
        cycle: list[Edge] = []
        if len(out) < limit:
            mine = inside.where(labels[inside.src] == c)
            first = int(np.flatnonzero(mine.kind == through)[0])
            path = scc.shortest_path(mine.src, mine.dst, int(mine.dst[first]), int(mine.src[first])) or []
            cycle = [(int(mine.src[e]), int(mine.dst[e]), int(mine.kind[e]), int(mine.key[e])) for e in [first, *path]]
        out.append(Instance(frozenset(needs), cycle))
    return out


def _count(labels: np.ndarray) -> int:
    """How many component labels `labels` uses (-1 is none)."""
    return int(labels.max(initial=-1)) + 1


def _flags(labels: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """Per component of `labels`, whether any of `nodes` (a boolean mask) is in it."""
    hit = np.zeros(_count(labels), dtype=bool)
    hit[labels[nodes & (labels >= 0)]] = True
    return hit


def _comps(labels: np.ndarray) -> np.ndarray:
    return np.arange(_count(labels))


def search(g: Graph, limit: int) -> dict[str, list[Instance]]:
    """Every instance of the cycle anomalies, by name (cycles over g's node positions)."""
    n = g.n
    edges = Edges(g.src, g.dst, g.kind, g.key)
    both = edges.components(n)  # ww + wr
    inside = edges.where(edges.internal(both))
    ww, wr = inside.where(inside.kind == EdgeKind.WW), inside.where(inside.kind == EdgeKind.WR)
    g0, reads = ww.components(n), wr.components(n)
    on_read_cycle = reads >= 0
    found = {
        "G0": _instances(g0, _comps(g0), ww, EdgeKind.WW, {EdgeKind.WW}, limit),
        "G1c": _instances(reads, _comps(reads), wr, EdgeKind.WR, {EdgeKind.WR}, limit),
    }
    with_wr = _flags(both, np.isin(np.arange(n), wr.src))
    through_ww = np.flatnonzero(with_wr & ~_flags(both, on_read_cycle))
    rest = max(0, limit - len(found["G1c"]))
    found["G1c"] += _instances(both, through_ww, inside, EdgeKind.WR, {EdgeKind.WW, EdgeKind.WR}, rest)
    found.update(_ordered(g, edges.where(edges.kind == EdgeKind.WR), on_read_cycle, limit))
    return found


def _ordered(g: Graph, wr: Edges, on_read_cycle: np.ndarray, limit: int) -> dict[str, list[Instance]]:
    """G1c-process and G1c-realtime: cycles of wr edges closed by process or realtime order."""
    out: dict[str, list[Instance]] = {"G1c-process": [], "G1c-realtime": []}
    back = g.itime[wr.dst] <= g.itime[wr.src]
    if not back.any():
        return out
    # The transactions invoked inside the span of some backward wr edge: the only ones that can be
    # on a cycle closed by process or realtime order (the module's docstring says why).
    lo, hi = g.itime[wr.dst[back]], g.itime[wr.src[back]]
    order = np.argsort(lo, kind="stable")
    lo, reach = lo[order], np.maximum.accumulate(hi[order])
    j = np.searchsorted(lo, g.itime, side="right") - 1
    cand = np.flatnonzero((j >= 0) & (reach[np.maximum(j, 0)] >= g.itime))
    m = len(cand)
    local = np.full(g.n, -1, dtype=np.int64)
    local[cand] = np.arange(m)
    wr = wr.where((local[wr.src] >= 0) & (local[wr.dst] >= 0))
    wr = Edges(local[wr.src], local[wr.dst], wr.kind, wr.key)
    # The realtime chain: aux node m + r is the r-th completion; T -> its own, each -> the next,
    # the last completion before T's invoke -> T. A transaction that never completed has no point.
    itime, ctime = g.itime[cand], g.ctime[cand]
    done = np.flatnonzero(ctime != NEVER)
    by_c = done[np.argsort(ctime[done], kind="stable")]
    c_sorted = ctime[by_c]
    points = m + np.arange(len(by_c))
    before = np.searchsorted(c_sorted, itime, side="left") - 1
    has = np.flatnonzero(before >= 0)
    aux_src = np.concatenate([by_c, points[:-1], m + before[has]])
    aux_dst = np.concatenate([points, points[1:], has])
    aux = Edges.keyless(aux_src, aux_dst, EdgeKind.REALTIME)
    realtime = wr + aux
    labels = realtime.components(m + len(by_c))
    txn = labels[:m].copy()
    on = txn >= 0
    if on.any():  # a component with one transaction (and time points) is no cycle
        txn[on] = np.where(np.bincount(txn[on])[txn[on]] >= 2, txn[on], -1)
    # Process order inside each realtime component: consecutive transactions of a process.
    proc = g.process[cand]
    by_p = np.lexsort((itime, proc))
    same = (proc[by_p][1:] == proc[by_p][:-1]) & (txn[by_p][1:] == txn[by_p][:-1]) & (txn[by_p][1:] >= 0)
    pe = Edges.keyless(by_p[:-1][same], by_p[1:][same], EdgeKind.PROCESS)
    process = wr.where(wr.internal(txn)) + pe
    plabels = process.components(m)
    p_comps = np.flatnonzero(~_flags(plabels, on_read_cycle[cand]))
    needs = {EdgeKind.WR, EdgeKind.PROCESS}
    out["G1c-process"] = _lift(_instances(plabels, p_comps, process, EdgeKind.PROCESS, needs, limit), cand)
    with_txn = _flags(txn, txn >= 0)
    r_comps = np.flatnonzero(with_txn & ~_flags(txn, plabels >= 0))
    needs = {EdgeKind.WR, EdgeKind.REALTIME}
    found = _instances(np.concatenate([txn, labels[m:]]), r_comps, realtime, EdgeKind.REALTIME, needs, limit)
    out["G1c-realtime"] = _lift([Instance(i.needs, _collapse(i.cycle, m)) for i in found], cand)
    return out


def _collapse(cycle: list[Edge], m: int) -> list[Edge]:
    """A cycle over the realtime chain as transaction edges: each run through time points becomes
    one realtime edge between the transactions on either side."""
    if not cycle:
        return []
    start = next(i for i, e in enumerate(cycle) if e[0] < m)  # begin at a transaction
    out: list[Edge] = []
    origin = None
    for a, b, kind, key in cycle[start:] + cycle[:start]:
        if kind != EdgeKind.REALTIME:
            out.append((a, b, kind, key))
        elif a < m:
            origin = a
        elif b < m:
            out.append((origin, b, EdgeKind.REALTIME, NO_KEY))
    return out


def _lift(found: list[Instance], cand: np.ndarray) -> list[Instance]:
    """Cycles over candidate positions as cycles over the graph's node positions."""
    return [Instance(i.needs, [(int(cand[a]), int(cand[b]), k, key) for a, b, k, key in i.cycle]) for i in found]


def entries(g: Graph, found: dict[str, list[Instance]]) -> dict[str, dict[str, Any]]:
    """results.json's entries (count, errors, examples) of the anomalies found, each instance judged
    by the anomaly table: each example names the transactions on its cycle (history indices) and
    per edge its kind and key."""
    out = {}
    for name in NAMES:
        instances = found.get(name, [])
        if not instances:
            continue
        errors = [is_error(Fact(name, edges=i.needs)) for i in instances]
        examples = []
        for i, error in zip(instances, errors, strict=True):
            if not i.cycle:
                continue
            keys = [g.names.get(key) for *_, key in i.cycle if key != NO_KEY]
            ex: dict[str, Any] = {
                # key, offsets and values as every example has them (a cycle's first keyed edge).
                "key": keys[0] if keys else None,
                "offsets": [],
                "values": [],
                "ops": [int(g.op[a]) for a, *_ in i.cycle],
                "edges": [
                    {"from": int(g.op[a]), "to": int(g.op[b]), "kind": EdgeKind(k).label, "key": g.names.get(key)}
                    for a, b, k, key in i.cycle
                ],
            }
            if not error:
                ex["allowed"] = True
            examples.append(ex)
        out[name] = {"count": len(instances), "errors": sum(errors), "examples": examples}
    return out
