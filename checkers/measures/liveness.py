"""Liveness: did the workload keep its rate while faults came and went?

A chaos run is only as strong as the traffic it keeps up while things break: a run whose
clients stopped after the first fault is VALID because nothing was written, not because Kafka
kept what it acknowledged. This module measures, from the history alone, ok operations per
second (and acknowledged writes per second) in three stretches of the workload phase:

- **before faults**: the second half of the stretch from the first ok send, poll or
  transaction to the first fault (or to the end of a run without faults). Client start-up
  (16 transactional producers initializing) and the first half are warm-up: on 2 cores the
  brokers' JIT takes the first seconds of a fresh cluster from about a third of the steady
  rate to all of it, and a baseline that includes that makes every later ratio look better;
- **in faults**: inside fault windows (a fault's invoke to the completion of what undoes it;
  the same bands the report shades, checkers/measures/faults.py, from the one model of the
  nemesis's operations, history/faults.py);
- **between faults**: the fault-free stretches after the first fault.

The workload phase ends with the last invoke of a client operation outside the final read
(whose events carry `"phase": "final"`): the stragglers that complete after it, while the
workload winds down and the nemesis heals, are not traffic the workload tried to keep up.

A run whose between-faults rate (of operations or of writes) is under STALL_RATIO of its
before-faults rate gets a warning naming the first fault-free stretch that
fell under it. The verdict is unchanged: the warning says how much a VALID verdict is worth.

Counts come in fine time buckets (BUCKET_S), from Spark in the checker or from a plain read of
the file when a run writes its summary; `measure` is the one computation both feed.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kafka_chaos.checkers.measures.faults import MAX_NEMESIS_OPS, fault_windows
from kafka_chaos.checkers.sql import in_list
from kafka_chaos.history import faults as model
from kafka_chaos.history.events import CLIENT_FS, NEMESIS, WRITES

BUCKET_S = 0.1
MAX_BUCKETS = 200_000  # coarser buckets beyond this (a run of over 5.5 hours)
STALL_RATIO = 0.5
#: The workload's own operations: the first ok one starts the "before faults" stretch.
WORK = CLIENT_FS
FINAL = "final"
STRETCHES = ("before_faults", "in_faults", "between_faults")


FINE_NS = int(BUCKET_S * 1e9)


def bucket_width_ns(span_ns: int) -> int:
    """Bucket width for a workload phase of this length: BUCKET_S, or a whole multiple of it for
    runs of over MAX_BUCKETS buckets (so fine counts merge into coarse ones exactly). An ok
    completion counts when its BUCKET_S bucket starts before the end of the workload phase."""
    return FINE_NS * max(1, -(-max(span_ns, 1) // (FINE_NS * MAX_BUCKETS)))


@dataclass
class Counts:
    """What `measure` needs: ok completions per bucket, the nemesis's operations, the bounds."""

    width_ns: int
    ops: dict[int, int]  # bucket -> ok client operations completed in it
    writes: dict[int, int]  # bucket -> ok sends and transactions completed in it
    nemesis: list[model.Op]  # the nemesis's operations (history/faults.py), in invoke order
    start_s: float  # the first ok send, poll or txn
    end_s: float  # the end of the workload phase


def _per_span(buckets: dict[int, int], width_s: float, spans: list[tuple[float, float]]) -> list[int]:
    """Completions in each of `spans` (sorted, not overlapping); a bucket counts by its middle.
    One pass over the buckets with a binary search each: a long run has thousands of windows."""
    starts = [a for a, _ in spans]
    counts = [0] * len(spans)
    for k, n in buckets.items():
        t = (k + 0.5) * width_s
        i = bisect_right(starts, t) - 1
        if i >= 0 and t < spans[i][1]:
            counts[i] += n
    return counts


def _rate(buckets: dict[int, int], width_s: float, spans: list[tuple[float, float]]) -> tuple[float, float | None]:
    """Seconds covered by the spans, and completions per second in them."""
    seconds = sum(b - a for a, b in spans)
    if seconds <= 0:
        return 0.0, None
    return seconds, sum(_per_span(buckets, width_s, spans)) / seconds


def _merge(windows: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for a, b in sorted(windows):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _gaps(spans: list[tuple[float, float]], start: float, end: float) -> list[tuple[float, float]]:
    gaps, at = [], start
    for a, b in spans:
        if a > at:
            gaps.append((at, a))
        at = max(at, b)
    if end > at:
        gaps.append((at, end))
    return gaps


def stretches(c: Counts) -> dict[str, list[tuple[float, float]]]:
    """The workload's stretches (STRETCHES, the module's docstring) as (start, end) spans in s."""
    end = c.end_s
    windows = [(w["start"], min(w["end"], end)) for w in fault_windows(c.nemesis, end) if w["start"] < end]
    faulted = _merge([(a, b) for a, b in windows if b > a])
    first = faulted[0][0] if faulted else None
    quiet_end = first if first is not None else end
    return {
        "before_faults": [((c.start_s + quiet_end) / 2, quiet_end)],
        "in_faults": faulted,
        "between_faults": _gaps(faulted, first, end) if first is not None else [],
    }


def measure(c: Counts) -> dict[str, Any]:
    """The liveness section of summary.json and results.json."""
    width_s = c.width_ns / 1e9
    end = c.end_s
    spans = stretches(c)
    first = spans["in_faults"][0][0] if spans["in_faults"] else None
    out: dict[str, Any] = {
        "bucket_s": round(width_s, 3),
        "first_fault_s": None if first is None else round(first, 3),
        "workload_end_s": round(end, 3),
        "seconds": {},
        "ops_per_s": {},
        "writes_per_s": {},
    }
    for name in STRETCHES:
        seconds, ops = _rate(c.ops, width_s, spans[name])
        _, writes = _rate(c.writes, width_s, spans[name])
        out["seconds"][name] = round(seconds, 3)
        out["ops_per_s"][name] = None if ops is None else round(ops, 1)
        out["writes_per_s"][name] = None if writes is None else round(writes, 1)
    out["ratios"] = {
        kind: {name: _ratio(out[kind][name], out[kind]["before_faults"]) for name in ("in_faults", "between_faults")}
        for kind in ("ops_per_s", "writes_per_s")
    }
    out["stalled_since_s"], out["warning"] = _stall(c, width_s, spans["between_faults"], out)
    return out


def _ratio(value: float | None, base: float | None) -> float | None:
    return None if value is None or not base else round(value / base, 3)


def _stall(
    c: Counts, width_s: float, stretches: list[tuple[float, float]], out: dict[str, Any]
) -> tuple[float | None, str | None]:
    """When the between-faults rate of operations or writes is under STALL_RATIO of the rate
    before faults: the start of the first fault-free stretch under it, and the warning."""
    stalled = [
        kind
        for kind in ("ops_per_s", "writes_per_s")
        if out["ratios"][kind]["between_faults"] is not None and out["ratios"][kind]["between_faults"] < STALL_RATIO
    ]
    if not stalled:
        return None, None
    kind = stalled[0]
    buckets = c.ops if kind == "ops_per_s" else c.writes
    floor = STALL_RATIO * out[kind]["before_faults"]
    counts = _per_span(buckets, width_s, stretches)
    since = next(
        (a for (a, b), n in zip(stretches, counts, strict=True) if b > a and n / (b - a) < floor), stretches[0][0]
    )
    what = "ok operations" if kind == "ops_per_s" else "acknowledged writes"
    warning = (
        f"the workload stalled: {out[kind]['between_faults']:.0f} {what}/s between faults after the first one, "
        f"under {STALL_RATIO:.0%} of the {out[kind]['before_faults']:.0f}/s before it (first from {since:.1f} s); "
        "a VALID verdict says little about what followed"
    )
    return round(since, 3), warning


class EventCounter:
    """Counts events one at a time, in file order per process: what a run's summary needs, fed by
    the history writer as events happen (HistoryWriter's `tap`) or by a plain read. Memory is the
    open operations, the nemesis's events (paired once counted: history/faults.py `pair`) and one
    counter per BUCKET_S, not the history.
    Thread-safe: a run's client threads write at once."""

    def __init__(self) -> None:
        self._open: dict[Any, dict[str, Any]] = {}
        self._fine_ops: Counter[int] = Counter()
        self._fine_writes: Counter[int] = Counter()
        self._nemesis: list[dict[str, Any]] = []  # its events, in file order
        self._start_ns: int | None = None
        self._end_ns = 0
        self._lock = threading.Lock()

    def add(self, e: dict[str, Any]) -> None:
        with self._lock:
            t, proc = int(e["time"]), e["process"]
            if proc == NEMESIS:
                self._nemesis.append(e)
                return
            if e["type"] == "invoke":
                self._open[proc] = e
                if e.get("phase") != FINAL:
                    self._end_ns = max(self._end_ns, t)
                return
            inv = self._open.pop(proc, None) or e
            if e["type"] == "ok" and inv.get("phase") != FINAL:
                if e["f"] in WORK and (self._start_ns is None or t < self._start_ns):
                    self._start_ns = t
                self._fine_ops[t // FINE_NS] += 1
                if e["f"] in WRITES:
                    self._fine_writes[t // FINE_NS] += 1

    def counts(self) -> Counts:
        with self._lock:
            nemesis = model.pair(self._nemesis)[:MAX_NEMESIS_OPS]  # the ones the checker reads
            start, end_ns = self._start_ns or 0, self._end_ns
            width = bucket_width_ns(end_ns - start)

            def coarse(fine: Counter[int]) -> dict[int, int]:
                """Fine buckets that start before the end, merged into buckets of `width`."""
                out: Counter[int] = Counter()
                for b, n in fine.items():
                    if b * FINE_NS < end_ns:
                        out[b * FINE_NS // width] += n
                return dict(out)

            return Counts(width, coarse(self._fine_ops), coarse(self._fine_writes), nemesis, start / 1e9, end_ns / 1e9)


def count_events(events: Iterable[dict[str, Any]]) -> Counts:
    """Counts from events in file order (a plain read: tests, a history on disk)."""
    counter = EventCounter()
    for e in events:
        counter.add(e)
    return counter.counts()


#: A client operation of the workload phase (not the nemesis, not the final read), in SQL over
#: the checker's operations table (checkers/tables.py). SQL text, not PySpark columns: a run's
#: summary and the pytest plugin use this module without Spark (pyspark's import costs them a
#: second), and the checker builds each expression in one round trip to the JVM.
WORKLOAD = f"(process != '{NEMESIS}' AND (phase IS NULL OR phase != '{FINAL}'))"


def span_columns() -> dict[str, str]:
    """The workload's start and end, as SQL aggregates over the checker's operations table:
    asked for with the check's first facts (checkers/check.py)."""
    return {
        "live_start": f"min(CASE WHEN {WORKLOAD} AND f IN {in_list(WORK)} AND `type` = 'ok' THEN ctime END)",
        "live_end": f"max(CASE WHEN {WORKLOAD} THEN itime END)",
    }


def bucket_query(ops: Any, start_ns: int | None, end_ns: int | None) -> Any:
    """Ok operations and writes per bucket of the workload (before the final read), from the
    checker's operations table: a few hundred rows, collected with the check's other parts."""
    start, end = start_ns or 0, end_ns or 0
    width = bucket_width_ns(end - start)
    fine_start = f"(floor(ctime / {FINE_NS}) * {FINE_NS})"
    done = ops.where(f"{WORKLOAD} AND `type` = 'ok' AND ctime IS NOT NULL AND {fine_start} < {end}")
    from pyspark.sql import functions as F  # not at the top: see WORKLOAD

    buckets = done.selectExpr(f"floor({fine_start} / {width}) AS b", f"CAST(f IN {in_list(WRITES)} AS BIGINT) AS w")
    return buckets.groupBy("b").agg(F.expr("count(1)").alias("ops"), F.expr("sum(w)").alias("writes"))


def counts_from(
    buckets: list[dict[str, Any]], start_ns: int | None, end_ns: int | None, nemesis: list[model.Op]
) -> Counts:
    """Counts from `bucket_query`'s rows and the nemesis's first operations (history/faults.py)."""
    start, end = start_ns or 0, end_ns or 0
    ops_b: dict[int, int] = {}
    writes_b: dict[int, int] = {}
    for r in buckets:
        ops_b[int(r["b"])] = int(r["ops"])
        if r["writes"]:
            writes_b[int(r["b"])] = int(r["writes"])
    return Counts(bucket_width_ns(end - start), ops_b, writes_b, nemesis, start / 1e9, end / 1e9)


def format_liveness(live: dict[str, Any], warning: bool = True) -> str:
    """One line for the command line's summary (and the stall warning on a second, unless the
    caller shows warnings on its own)."""
    ops, writes = live["ops_per_s"], live["writes_per_s"]

    def show(d: dict[str, Any], name: str) -> str:
        return "-" if d[name] is None else f"{d[name]:.0f}"

    if live["first_fault_s"] is None:
        return f"liveness: {show(ops, 'before_faults')} ok ops/s, {show(writes, 'before_faults')} writes/s (no fault)"
    ratio = live["ratios"]["ops_per_s"]
    pct = {k: "-" if v is None else f"{v:.0%}" for k, v in ratio.items()}
    line = (
        f"liveness: ok ops/s {show(ops, 'before_faults')} before faults, {show(ops, 'in_faults')} in faults "
        f"({pct['in_faults']}), {show(ops, 'between_faults')} between faults ({pct['between_faults']}); "
        f"writes/s {show(writes, 'before_faults')} / {show(writes, 'in_faults')} / {show(writes, 'between_faults')}"
    )
    return line + (f"\nwarning: {live['warning']}" if warning and live["warning"] else "")
