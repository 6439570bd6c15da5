"""Group coverage: for how much of a group run its members held the keys at all.

A group member delivers a key only while it holds it. Between a member's leaving and the
rebalance that hands its keys on, nobody holds them, and in an eager rebalance nobody holds
anything; the final drain then delivers everything, so the verdict is right, but the run checked
delivery under faults for only the part of it in which keys were held. This module measures that
part from the history alone: each `subscribe` completion of a member says which keys it holds
from then on (../shared/history-format.md), until its next one or its last operation (a member
that left, by churn or a crash, holds nothing after it).

Over the workload phase (the first client invoke to the last one outside the final read, as
checkers/liveness.py bounds it):
- `every_key_share`: the share of the time in which every key was held by some member;
- `some_key_share`: the share in which at least one was;
- `longest_unheld_s`: the longest stretch in which one key was held by nobody;
- `polls_with_records`: member polls that returned records;
- reported, never errors: `double_held_s`, per key, how long two members held it at once (a
  revocation recorded after the next member's assignment), and `stray_commits`, `ok` commits of
  a key by a member that did not hold it by its latest `subscribe`.

A run whose every-key share is under HELD_RATIO gets a warning, like the stall warning.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from kafka_chaos.checkers.liveness import FINAL
from kafka_chaos.history.events import CLIENT_FS, COMMIT, INFO, NEMESIS, OK, POLL, SUBSCRIBE

HELD_RATIO = 0.5
MAX_STRAY_EXAMPLES = 5


class CoverageCounter:
    """Fed every event of a group run (as the history is written, or from the file); `measure`."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.keys = list(keys)
        self._open: dict[Any, dict[str, Any]] = {}
        self._held: dict[Any, list[tuple[float, frozenset[str]]]] = defaultdict(list)  # member -> changes
        self._last: dict[Any, float] = {}
        self._start: float | None = None
        self._end = 0.0
        self._polls_with_records = 0
        self._stray: list[dict[str, Any]] = []
        self._stray_count = 0
        self._lock = threading.Lock()

    def add(self, e: dict[str, Any]) -> None:
        proc = e["process"]
        if proc == NEMESIS:
            return
        t = int(e["time"]) / 1e9
        with self._lock:
            if e["type"] == "invoke":
                self._open[proc] = e
                if e.get("phase") != FINAL:
                    self._start = t if self._start is None else min(self._start, t)
                    if e["f"] in (*CLIENT_FS, SUBSCRIBE, COMMIT):
                        self._end = max(self._end, t)
                return
            inv = self._open.pop(proc, None) or e
            if inv.get("phase") == FINAL:
                return
            if proc in self._held:
                self._last[proc] = t
            if e["f"] == SUBSCRIBE and e["type"] in (OK, INFO) and isinstance(e.get("value"), list):
                self._held[proc].append((t, frozenset(e["value"])))
                self._last[proc] = t
            elif e["f"] == POLL and e["type"] == OK and proc in self._held and _returned_records(e.get("value")):
                self._polls_with_records += 1
            elif e["f"] == COMMIT and e["type"] == OK and isinstance(e.get("value"), dict) and proc in self._held:
                holds = self._held[proc][-1][1]
                for key in e["value"]:
                    if key not in holds:
                        self._stray_count += 1
                        if len(self._stray) < MAX_STRAY_EXAMPLES:
                            self._stray.append({"process": proc, "key": key, "time_s": round(t, 3)})

    def measure(self) -> dict[str, Any] | None:
        """None for a run without group members."""
        with self._lock:
            if not self._held or self._start is None:
                return None
            start, end = self._start, max(self._end, self._start)
            spans: dict[str, list[tuple[float, float]]] = defaultdict(list)  # key -> held intervals
            for proc, changes in self._held.items():
                last = min(self._last.get(proc, end), end)
                for (t, keys), nxt in zip(changes, [*changes[1:], None], strict=True):
                    until = min(nxt[0] if nxt else last, end)
                    if until > t:
                        for key in keys:
                            spans[key].append((max(t, start), until))
            return _measure(self.keys, spans, start, end) | {
                "polls_with_records": self._polls_with_records,
                "stray_commits": self._stray_count,
                "stray_commit_examples": list(self._stray),
            }


def _returned_records(value: Any) -> bool:
    for micro in value or []:
        if isinstance(micro, list) and len(micro) == 2 and micro[0] == POLL and isinstance(micro[1], dict):
            if any(micro[1].values()):
                return True
    return False


def _measure(keys: list[str], spans: dict[str, list[tuple[float, float]]], start: float, end: float) -> dict:
    """Shares and stretches from each key's held intervals (which may overlap: two holders)."""
    window = end - start
    points = sorted({start, end, *(t for s in spans.values() for span in s for t in span if start <= t <= end)})
    every = some = 0.0
    double: dict[str, float] = defaultdict(float)
    unheld_run: dict[str, float] = dict.fromkeys(keys, 0.0)
    longest = 0.0
    for a, b in zip(points, points[1:], strict=False):
        mid = (a + b) / 2
        holders = {k: sum(s <= mid < u for s, u in spans.get(k, ())) for k in keys}
        if all(holders.values()):
            every += b - a
        if any(holders.values()):
            some += b - a
        for k, n in holders.items():
            if n >= 2:
                double[k] += b - a
            unheld_run[k] = unheld_run[k] + (b - a) if n == 0 else 0.0
            longest = max(longest, unheld_run[k])
    share = (lambda x: round(x / window, 3)) if window > 0 else (lambda x: None)
    out = {
        "workload_s": round(window, 3),
        "every_key_share": share(every),
        "some_key_share": share(some),
        "every_key_s": round(every, 3),
        "longest_unheld_s": round(longest, 3),
        "double_held_s": {k: round(v, 3) for k, v in sorted(double.items())},
        "warning": None,
    }
    if window > 0 and every / window < HELD_RATIO:
        out["warning"] = (
            f"the group held every key for {every / window:.0%} of the workload ({every:.1f} of {window:.1f} s), "
            f"under {HELD_RATIO:.0%}: delivery under faults was checked for that part only"
        )
    return out


def count_events(events: Iterable[dict[str, Any]], keys: Iterable[str]) -> dict[str, Any] | None:
    counter = CoverageCounter(keys)
    for e in events:
        counter.add(e)
    return counter.measure()


def format_coverage(c: dict[str, Any]) -> str:
    """The CLI summary's line."""

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{x:.0%}"

    doubles = sum(c["double_held_s"].values())
    return (
        f"group coverage: every key held {pct(c['every_key_share'])}, some key {pct(c['some_key_share'])} "
        f"of the workload; longest with a key unheld {c['longest_unheld_s']:.1f} s; "
        f"{c['polls_with_records']} member polls returned records"
        + (f"; keys held twice for {doubles:.1f} s" if doubles else "")
        + (f"; {c['stray_commits']} commits of keys not held" if c["stray_commits"] else "")
    )
