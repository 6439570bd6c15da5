"""Fault windows from the nemesis's operations: when each fault was in place.

Pure Python over a few thousand operations at most, shared by the report's plots
(checkers/report/series.py) and the liveness measure (checkers/measures/liveness.py).
"""

from __future__ import annotations

from itertools import cycle
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


def fault_windows(
    nemesis_ops: list[dict[str, Any]], end_s: float, colours: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Each fault from its invoke to the completion of the first later operation that heals it.

    `nemesis_ops`: f, type, start, end (s), and how each ends (`ends_of`): `lasts` and `heals`;
    `colours`: fault -> its shading, from the run's config.json (`colours_of`); a fault with none
    gets one of the report's own palette."""
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
    spare = cycle(SPARE_COLOURS)
    given = dict(colours or {})
    for w in windows:
        if w["end"] is None:
            w["end"] = end_s
        if w["f"] not in given:
            given[w["f"]] = next(spare)
        w["colour"] = given[w["f"]]
    return windows


#: Shading for a fault the run did not give a colour (a history without its config.json, an
#: operator's action such as a forced election), in order of first appearance.
SPARE_COLOURS = ("#7f7f7f", "#17becf", "#1f77b4", "#2ca02c", "#aec7e8", "#98df8a")


def colours_of(config: dict[str, Any]) -> dict[str, str]:
    """fault -> colour from a run's config.json (the nemesis plan writes them: nemesis/plan.py)."""
    nemesis = config.get("nemesis") if isinstance(config, dict) else None
    colours = nemesis.get("colours") if isinstance(nemesis, dict) else None
    return {str(k): str(v) for k, v in colours.items()} if isinstance(colours, dict) else {}
