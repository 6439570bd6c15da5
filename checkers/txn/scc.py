"""Strongly connected components and one short cycle of a directed graph, on numpy arrays.

The transaction cycle search (checkers/txn/cycles.py) asks which transactions lie on a cycle: exactly
the members of a strongly connected component of two or more nodes. Nodes are 0..n-1 and edges are
two parallel arrays. Tarjan's algorithm, iterative (a history's graph is far deeper than Python's
recursion limit), is linear in nodes and edges; before it, nodes with no edge in or no edge out
are trimmed in a few vectorized rounds, since they cannot be on a cycle.
"""

from __future__ import annotations

from collections import deque

import numpy as np

TRIM_ROUNDS = 8


def _trim(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Which nodes may be on a cycle: repeatedly drop nodes with no edge in or none out."""
    alive = np.ones(n, dtype=bool)
    for _ in range(TRIM_ROUNDS):
        keep = alive[src] & alive[dst]
        s, d = src[keep], dst[keep]
        now = alive & (np.bincount(s, minlength=n) > 0) & (np.bincount(d, minlength=n) > 0)
        if now.sum() == alive.sum():
            break
        alive = now
    return alive


def components(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Each node's component label; -1 for a node on no cycle (a component of one: the graphs here
    have no self-loops). Labels of nodes on cycles are 0, 1, 2, ... per component."""
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    labels = np.full(n, -1, dtype=np.int64)
    if n == 0 or len(src) == 0:
        return labels
    alive = _trim(n, src, dst)
    nodes = np.flatnonzero(alive)
    if len(nodes) == 0:
        return labels
    local = np.full(n, -1, dtype=np.int64)
    local[nodes] = np.arange(len(nodes))
    keep = alive[src] & alive[dst]
    comp = _tarjan(len(nodes), local[src[keep]], local[dst[keep]])
    sizes = np.bincount(comp)
    big = sizes[comp] > 1
    # Renumber the components of two or more nodes densely.
    _, dense = np.unique(comp[big], return_inverse=True)
    labels[nodes[big]] = dense
    return labels


def _tarjan(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    order = np.argsort(src, kind="stable")
    targets = dst[order].tolist()
    starts = np.searchsorted(src[order], np.arange(n + 1)).tolist()
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    comp = [-1] * n
    stack: list[int] = []
    counter = labels = 0
    for root in range(n):
        if index[root] != -1:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, starts[root])]
        while work:
            v, i = work[-1]
            end = starts[v + 1]
            descended = False
            while i < end:
                w = targets[i]
                i += 1
                if index[w] == -1:
                    work[-1] = (v, i)
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, starts[w]))
                    descended = True
                    break
                if on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
            if descended:
                continue
            work.pop()
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp[w] = labels
                    if w == v:
                        break
                labels += 1
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
    return np.asarray(comp, dtype=np.int64)


def shortest_path(src: np.ndarray, dst: np.ndarray, start: int, goal: int) -> list[int] | None:
    """Edge positions of a shortest path from `start` to `goal` (breadth first), or None. The
    arrays are a small subgraph (one component), so plain Python serves."""
    out: dict[int, list[int]] = {}
    for e, s in enumerate(src.tolist()):
        out.setdefault(s, []).append(e)
    targets = dst.tolist()
    via: dict[int, int] = {start: -1}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        if v == goal and v != start:
            break
        for e in out.get(v, ()):
            w = targets[e]
            if w not in via:
                via[w] = e
                queue.append(w)
    if goal not in via or goal == start:
        return None
    path, v = [], goal
    while v != start:
        e = via[v]
        path.append(e)
        v = int(src[e])
    return path[::-1]
