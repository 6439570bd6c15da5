"""Group coverage: for how much of a group run its members held the keys at all.

A group member delivers a key only while it holds it. Between a member's leaving and the
rebalance that hands its keys on, nobody holds them, and in an eager rebalance nobody holds
anything; the final drain then delivers everything, so the verdict is right, but the run checked
delivery under faults for only the part of it in which keys were held. This module measures that
part from the history alone: each `subscribe` completion of a member says which keys it holds
from then on (../shared/history-format.md), until its next one or its last operation (a member
that left, by churn or a crash, holds nothing after it).

Over the workload phase (the first client invoke to the last one outside the final read, as
checkers/measures/liveness.py bounds it):
- `every_key_share`: the share of the time in which every key was held by some member;
- `some_key_share`: the share in which at least one was;
- `longest_unheld_s`: the longest stretch in which one key was held by nobody;
- `polls_with_records`: member polls that returned records;
- reported, never errors: `double_held_s`, per key, how long two members held it at once (a
  revocation recorded after the next member's assignment), and `stray_commits`, `ok` commits of
  a key by a member that did not hold it by its latest `subscribe`.

A run whose every-key share is under HELD_RATIO gets a warning, like the stall warning.

Measured twice from one rule: as the run writes its history (`CoverageCounter`, summary.json) and
by the checker from its cached tables (`query`, then `from_rows`: results.json, with each key's
held spans for the report's ownership strip).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafka_chaos.checkers.measures.liveness import FINAL
from kafka_chaos.history.events import CLIENT_FS, COMMIT, INFO, NEMESIS, OK, POLL, SUBSCRIBE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

HELD_RATIO = 0.5
MAX_STRAY_EXAMPLES = 5
#: Held spans kept per key for the report's strip (results.json's `spans`); the measures use all.
MAX_SPANS = 400

#: The processes' completions the measures are made of, in the order they were written.
Change = tuple[int, float, frozenset[str]]  # order, time (s), keys


@dataclass
class Members:
    """The facts coverage is measured from: each member's `subscribe` completions (the keys it held
    from then on) and `ok` commits, its last completion, the workload's bounds, and how many of its
    polls returned records after it first subscribed."""

    start: float | None = None
    end: float = 0.0
    held: dict[Any, list[Change]] = field(default_factory=lambda: defaultdict(list))
    commits: dict[Any, list[Change]] = field(default_factory=lambda: defaultdict(list))
    last: dict[Any, float] = field(default_factory=dict)
    polls_with_records: int = 0


class CoverageCounter:
    """Fed every event of a group run (as the history is written, or from the file); `measure`."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.keys = list(keys)
        self._m = Members()
        self._open: dict[Any, dict[str, Any]] = {}
        self._n = 0
        self._lock = threading.Lock()

    def add(self, e: dict[str, Any]) -> None:
        proc = e["process"]
        if proc == NEMESIS:
            return
        t = int(e["time"]) / 1e9
        m = self._m
        with self._lock:
            self._n += 1
            if e["type"] == "invoke":
                self._open[proc] = e
                if e.get("phase") != FINAL:
                    m.start = t if m.start is None else min(m.start, t)
                    if e["f"] in (*CLIENT_FS, SUBSCRIBE, COMMIT):
                        m.end = max(m.end, t)
                return
            inv = self._open.pop(proc, None) or e
            if inv.get("phase") == FINAL:
                return
            if proc in m.held:
                m.last[proc] = t
            if e["f"] == SUBSCRIBE and e["type"] in (OK, INFO) and isinstance(e.get("value"), list):
                m.held[proc].append((self._n, t, frozenset(e["value"])))
                m.last[proc] = t
            elif e["f"] == POLL and e["type"] == OK and proc in m.held and _returned_records(e.get("value")):
                m.polls_with_records += 1
            elif e["f"] == COMMIT and e["type"] == OK and isinstance(e.get("value"), dict) and proc in m.held:
                m.commits[proc].append((self._n, t, frozenset(e["value"])))

    def measure(self, spans: bool = False) -> dict[str, Any] | None:
        """None for a run without group members; `spans`: each key's held spans too."""
        with self._lock:
            return measure(self._m, self.keys, spans)


def _returned_records(value: Any) -> bool:
    for micro in value or []:
        if isinstance(micro, list) and len(micro) == 2 and micro[0] == POLL and isinstance(micro[1], dict):
            if any(micro[1].values()):
                return True
    return False


#: The checker's operations that are not the nemesis's nor the final read's, as SQL.
_LIVE = f"process != '{NEMESIS}' AND (phase IS NULL OR phase != '{FINAL}')"


def query(ops: DataFrame, micro: DataFrame) -> dict[str, DataFrame]:
    """The same facts from the checker's cached tables (checkers/tables.py), as parts of its one
    collect (checkers/parts.py): a few rows per member and change, none for a run without members."""
    from pyspark.sql import functions as F  # not at the top: the run measures without Spark

    live = ops.where(_LIVE)
    keys = micro.where(f"kind = 'assign' AND f = '{SUBSCRIBE}'").groupBy("op").agg(F.collect_list("key").alias("keys"))
    held = (
        live.where(f"f = '{SUBSCRIBE}' AND `type` IN ('{OK}', '{INFO}') AND ctime IS NOT NULL")
        .select("op", "process", "ctime")
        .join(keys, "op", "left")
        .selectExpr("process", "op", "ctime / 1e9 AS t", "coalesce(keys, array()) AS keys")
    )
    first = held.groupBy("process").agg(F.min("t").alias("first"))
    commits = (  # a member's, once it has subscribed (as the counter takes them)
        live.where(f"f = '{COMMIT}' AND `type` = '{OK}' AND ctime IS NOT NULL")
        .selectExpr("process", "op", "ctime / 1e9 AS t", "map_keys(from_json(nvalue, 'map<string,bigint>')) AS keys")
        .join(first, "process")
        .where("t >= first")
        .drop("first")
    )
    returned = micro.where(f"kind = 'read' AND f = '{POLL}' AND `type` = '{OK}'").select("op").distinct()
    polls = (
        live.where(f"f = '{POLL}' AND `type` = '{OK}'")
        .select("op", "process", "ctime")
        .join(returned, "op")
        .join(first, "process")
        .where("ctime / 1e9 >= first")
        .groupBy("process")
        .agg(F.count(F.lit(1)).alias("n"))
    )
    last = live.where("ctime IS NOT NULL").groupBy("process").agg((F.max("ctime") / 1e9).alias("t"))
    fs = ", ".join(f"'{f}'" for f in (*CLIENT_FS, SUBSCRIBE, COMMIT))
    bounds = live.selectExpr("min(itime) / 1e9 AS start", f"max(CASE WHEN f IN ({fs}) THEN itime END) / 1e9 AS `end`")
    sent = micro.where(f"kind IN ('send', 'assign') AND process != '{NEMESIS}'").select("key").distinct()
    return {
        "group.keys": sent,
        "group.held": held,
        "group.commits": commits,
        "group.polls": polls,
        "group.last": last.join(first, "process").select("process", "t"),
        "group.bounds": bounds,
    }


def from_rows(
    got: dict[str, list[dict[str, Any]]], keys: list[str] | None = None, spans: bool = True
) -> dict[str, Any] | None:
    """`measure` of `query`'s collected rows, over `keys`: the run's (config.json's workload, as the
    run measured them) or, for a history checked without its run, every key sent or held."""
    if keys is None:
        keys = sorted({r["key"] for r in got.get("group.keys", []) if r["key"] is not None})
    m = Members()
    bounds = (got.get("group.bounds") or [{}])[0]
    m.start, m.end = bounds.get("start"), bounds.get("end") or 0.0
    for name, into in (("group.held", m.held), ("group.commits", m.commits)):
        for r in got.get(name, []):
            into[_process(r["process"])].append((int(r["op"]), float(r["t"]), frozenset(r["keys"] or ())))
    for changes in (*m.held.values(), *m.commits.values()):
        changes.sort()
    m.last = {_process(r["process"]): float(r["t"]) for r in got.get("group.last", [])}
    m.polls_with_records = sum(int(r["n"]) for r in got.get("group.polls", []))
    return measure(m, keys, spans)


def _process(p: Any) -> Any:
    """A process as the history wrote it: a number, or a name (Spark reads each as text)."""
    return int(p) if isinstance(p, str) and p.isdigit() else p


def measure(m: Members, keys: list[str], spans: bool = False) -> dict[str, Any] | None:
    """The measures of the module's docstring; None for a run without group members."""
    if not m.held or m.start is None:
        return None
    start, end = m.start, max(m.end, m.start)
    held: dict[str, list[tuple[float, float, Any]]] = defaultdict(list)  # key -> held spans
    for proc, changes in m.held.items():
        last = min(m.last.get(proc, end), end)
        for (_, t, ks), nxt in zip(changes, [*changes[1:], None], strict=True):
            until = min(nxt[1] if nxt else last, end)
            if until > t:
                for key in ks:
                    held[key].append((max(t, start), until, proc))
    strays = [
        {"process": proc, "key": key, "time_s": round(t, 3)}
        for proc, commits in m.commits.items()
        for n, t, committed in commits
        for key in sorted(committed - _holding(m.held.get(proc, []), n))
    ]
    strays.sort(key=lambda s: s["time_s"])
    out = sweep(keys, held, start, end) | {
        "polls_with_records": m.polls_with_records,
        "stray_commits": len(strays),
        "stray_commit_examples": strays[:MAX_STRAY_EXAMPLES],
    }
    if spans:
        out["spans"] = span_rows(held, keys)
    return out


def span_rows(held: dict[str, list[tuple[float, float, Any]]], keys: list[str]) -> dict[str, list[list[Any]]]:
    """results.json's `spans`: per key, its first MAX_SPANS spans as [member, from s, until s]."""
    return {
        k: [[p, round(a, 3), round(b, 3)] for a, b, p in sorted(held[k], key=lambda s: s[:2])[:MAX_SPANS]]
        for k in keys
        if held.get(k)
    }


def every_key_share(
    spans: dict[str, list[list[Any]]], keys: list[str], intervals: list[tuple[float, float]]
) -> float | None:
    """The share of `intervals` in which every key was held, from `measure`'s `spans`
    ([member, from s, until s] per key): the same sweep as the measures, over each interval."""
    total = sum(b - a for a, b in intervals)
    if not total:
        return None
    held = {k: [(a, b, p) for p, a, b in spans.get(k, [])] for k in keys}
    return sum(sweep(keys, held, a, b)["every_key_s"] for a, b in intervals) / total


def _holding(changes: list[Change], n: int) -> frozenset[str]:
    """The keys a member held by its latest `subscribe` before its `n`th event."""
    keys: frozenset[str] = frozenset()
    for order, _, ks in changes:
        if order > n:
            break
        keys = ks
    return keys


def sweep(
    keys: list[str], spans: dict[str, list[tuple[float, float, Any]]], start: float, end: float, what: str = "held by"
) -> dict:
    """Shares and stretches from each key's spans (which may overlap: two holders); `what` the
    spans are, in the warning ("held by": a group's; "delivered to": a share group's)."""
    window = end - start
    points = sorted({start, end, *(t for s in spans.values() for span in s for t in span[:2] if start <= t <= end)})
    every = some = 0.0
    double: dict[str, float] = defaultdict(float)
    unheld_run: dict[str, float] = dict.fromkeys(keys, 0.0)
    longest = 0.0
    for a, b in zip(points, points[1:], strict=False):
        mid = (a + b) / 2
        holders = {k: sum(s <= mid < u for s, u, _ in spans.get(k, ())) for k in keys}
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
            f"every key was {what} a member for {every / window:.0%} of the workload ({every:.1f} of "
            f"{window:.1f} s), under {HELD_RATIO:.0%}: delivery under faults was checked for that part only"
        )
    return out


def count_events(events: Iterable[dict[str, Any]], keys: Iterable[str], spans: bool = False) -> dict[str, Any] | None:
    counter = CoverageCounter(keys)
    for e in events:
        counter.add(e)
    return counter.measure(spans)


def format_coverage(c: dict[str, Any]) -> str:
    """The CLI summary's line."""

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{x:.0%}"

    if c.get("mode") == "share":
        return (
            f"share coverage: every key delivered {pct(c['every_key_share'])}, some key {pct(c['some_key_share'])} "
            f"of the workload; longest with a key undelivered {c['longest_unheld_s']:.1f} s; "
            f"{c['polls_with_records']} member polls returned records"
        )
    doubles = sum(c["double_held_s"].values())
    return (
        f"group coverage: every key held {pct(c['every_key_share'])}, some key {pct(c['some_key_share'])} "
        f"of the workload; longest with a key unheld {c['longest_unheld_s']:.1f} s; "
        f"{c['polls_with_records']} member polls returned records"
        + (f"; keys held twice for {doubles:.1f} s" if doubles else "")
        + (f"; {c['stray_commits']} commits of keys not held" if c["stray_commits"] else "")
    )
