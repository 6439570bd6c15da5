"""Fault bands from the nemesis's operations: when each fault was in place, for the report's plots
(checkers/report/series.py) and the liveness measure (checkers/measures/liveness.py).

The operations and their windows are the one model on floor 0 (history/faults.py): a band is an
operation's windows on all its nodes together, from its invoke to the last completion of what
undid it there. Pure Python over a few thousand operations at most.
"""

from __future__ import annotations

from itertools import cycle
from typing import Any

from kafka_chaos.history import faults as model
from kafka_chaos.history.events import FAIL

#: The nemesis operations read for windows: the first ones (keeps the Python side flat in history size).
MAX_NEMESIS_OPS = 5000


def fault_windows(ops: list[model.Op], end_s: float, colours: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One band per fault (f, start, end in s, its nodes, colour), in invoke order: a fault that stays
    in place from its invoke until the last of its nodes' undos completed (the end, `end_s`, when
    one never was); anything else the nemesis did, a restart or an operator's action, from its
    invoke to its completion. Failed operations and undos draw nothing. `colours`: fault -> its
    shading, from the run's config.json (`colours_of`); a fault with none gets one of the
    report's own palette."""
    end_ns = int(end_s * 1e9)
    ends: dict[tuple[int, str, int], int] = {}
    for w in model.windows(ops, end_ns):
        key = (w.op, w.f, w.invoke)
        ends[key] = max(ends.get(key, w.healed), w.healed)
    bands: list[dict[str, Any]] = []
    for op in ops:
        if op.type == FAIL or op.heals is not None:
            continue
        over = ends.get((op.op, op.f, op.itime)) if op.undone_by else None
        if over is None:
            over = op.ctime if op.ctime is not None else op.itime
        bands.append({"f": op.f, "start": op.itime / 1e9, "end": over / 1e9, "nodes": list(op.nodes)})
    spare = cycle(SPARE_COLOURS)
    given = dict(colours or {})
    for b in bands:
        if b["f"] not in given:
            given[b["f"]] = next(spare)
        b["colour"] = given[b["f"]]
    return bands


#: Shading for a fault the run did not give a colour (a history without its config.json, an
#: operator's action such as a forced election), in order of first appearance.
SPARE_COLOURS = ("#7f7f7f", "#17becf", "#1f77b4", "#2ca02c", "#aec7e8", "#98df8a")


def colours_of(config: dict[str, Any]) -> dict[str, str]:
    """fault -> colour from a run's config.json (the nemesis plan writes them: nemesis/plan.py)."""
    nemesis = config.get("nemesis") if isinstance(config, dict) else None
    colours = nemesis.get("colours") if isinstance(nemesis, dict) else None
    return {str(k): str(v) for k, v in colours.items()} if isinstance(colours, dict) else {}
