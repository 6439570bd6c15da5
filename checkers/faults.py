"""Fault windows from the nemesis's operations: when each fault was in place.

Pure Python over a few thousand operations at most, shared by the report's plots
(checkers/series.py) and the liveness measure (checkers/liveness.py).
"""

from __future__ import annotations

from typing import Any

#: The nemesis operations read for windows: the first ones (keeps the Python side flat in history size).
MAX_NEMESIS_OPS = 5000
#: A fault that stays in place until another nemesis operation undoes it: a copy of
#: nemesis/faults.py HEALS (the checker imports nothing above it; tests/unit/test_fault_records.py compares).
ENDS = {"kill": "start", "stop": "start", "pause": "resume", "partition": "heal"}


def fault_windows(nemesis_ops: list[dict[str, Any]], end_s: float) -> list[dict[str, Any]]:
    """Each fault from its invoke to the completion of the first later operation that undoes it."""
    windows: list[dict[str, Any]] = []
    open_: dict[str, list[dict[str, Any]]] = {}
    for op in sorted(nemesis_ops, key=lambda o: o["start"]):
        f = op["f"]
        closes = [k for k, v in ENDS.items() if v == f]
        for fault in closes:
            if open_.get(fault):
                open_[fault].pop(0)["end"] = op["end"] if op["end"] is not None else op["start"]
        if op["type"] == "fail":
            continue
        if f in ENDS:
            w = {"f": f, "start": op["start"], "end": None, "nodes": op.get("nodes", "")}
            windows.append(w)
            open_.setdefault(f, []).append(w)
        elif f not in ENDS.values():
            windows.append(
                {"f": f, "start": op["start"], "end": op["end"] or op["start"], "nodes": op.get("nodes", "")}
            )
    for w in windows:
        if w["end"] is None:
            w["end"] = end_s
    return windows
