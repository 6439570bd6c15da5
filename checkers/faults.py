"""Fault windows from the nemesis's operations: when each fault was in place.

Pure Python over a few thousand operations at most, shared by the report's plots
(checkers/series.py) and the liveness measure (checkers/liveness.py).
"""

from __future__ import annotations

from typing import Any

#: The nemesis operations read for windows: the first ones (keeps the Python side flat in history size).
MAX_NEMESIS_OPS = 5000


def ends_of(value: Any) -> dict[str, Any]:
    """How a nemesis operation's fault ends, from its event's value (nemesis/faults.py writes
    them): `undone_by` (a fault that stays in place until that operation), `heals` (the faults an
    undoing operation ends). A history from before these were written has neither: its faults are
    drawn as instants."""
    if not isinstance(value, dict):
        return {"lasts": False, "heals": None}
    heals = value.get("heals")
    return {"lasts": bool(value.get("undone_by")), "heals": list(heals) if isinstance(heals, list) else None}


def fault_windows(nemesis_ops: list[dict[str, Any]], end_s: float) -> list[dict[str, Any]]:
    """Each fault from its invoke to the completion of the first later operation that heals it.

    `nemesis_ops`: f, type, start, end (s), and how each ends (`ends_of`): `lasts` and `heals`."""
    windows: list[dict[str, Any]] = []
    open_: dict[str, list[dict[str, Any]]] = {}
    for op in sorted(nemesis_ops, key=lambda o: o["start"]):
        f, heals = op["f"], op.get("heals")
        for fault in heals or ():
            if open_.get(fault):
                open_[fault].pop(0)["end"] = op["end"] if op["end"] is not None else op["start"]
        if op["type"] == "fail" or heals is not None:
            continue
        if op.get("lasts"):
            w = {"f": f, "start": op["start"], "end": None, "nodes": op.get("nodes", "")}
            windows.append(w)
            open_.setdefault(f, []).append(w)
        else:
            windows.append(
                {"f": f, "start": op["start"], "end": op["end"] or op["start"], "nodes": op.get("nodes", "")}
            )
    for w in windows:
        if w["end"] is None:
            w["end"] = end_s
    return windows
