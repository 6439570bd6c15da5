"""The host stall probe's evidence and what a timing window makes of it (../shared/anomalies.md,
"Control plane", amended 2026-12-06).

A two-core machine under load delays Kafka's timers as it delays ours, so a timing bound is
lengthened by the stall the run measured inside its window. The probe is a small process of its own
(harness/stall_probe.py) that sleeps PERIOD_NS at a time and writes, on the history's clock, when it
woke: one line `{"time": ns}` per wake in control-plane/host-stall.jsonl (RunDir.host_stall). The
harness writes the lines, the checker reads them, both through this module.

The stall of a window is the sum, over the probe's intervals (between two consecutive wakes) that
lasted over OVER_NS and overlap the window, of each interval's part inside the window less PERIOD_NS
(never below 0). One pass: the window is the bound's own, not the lengthened one.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence

from kafka_chaos.history.run_dir import RunDir

#: How long the probe sleeps at a time, and how long an interval must last to count as a stall.
PERIOD_NS = 100_000_000
OVER_NS = 150_000_000


def wake_line(time_ns: int) -> str:
    """One line of host-stall.jsonl: the probe woke at `time_ns` on the history's clock."""
    return json.dumps({"time": int(time_ns)}, separators=(",", ":")) + "\n"


def read_wakes(run: RunDir) -> list[int] | None:
    """The probe's wake times in order; None when the run has no probe file (judged with S alone).
    A truncated or malformed line is skipped, as a history's last line may be."""
    try:
        text = run.host_stall.read_text(encoding="utf-8", errors="replace")
    except OSError:  # none, or one that cannot be read: no stall known, the bounds keep S alone
        return None
    wakes = []
    for line in text.splitlines():
        try:
            t = json.loads(line)["time"]
        except (ValueError, KeyError, TypeError):
            continue
        if isinstance(t, int):
            wakes.append(t)
    return sorted(wakes)


def stall_within(wakes: Sequence[int] | None, start: int, end: int) -> int:
    """The host stall measured inside [start, end] (ns): 0 without a probe or for an empty window."""
    if not wakes or end <= start:
        return 0
    total = 0
    # the first interval that can overlap: the one ending at the first wake after `start`
    i = max(1, bisect.bisect_right(wakes, start))
    while i < len(wakes) and wakes[i - 1] < end:
        a, b = wakes[i - 1], wakes[i]
        if b - a > OVER_NS:
            inside = min(b, end) - max(a, start)
            total += max(0, inside - PERIOD_NS)
        i += 1
    return total


def covered_until(wakes: Sequence[int] | None) -> int | None:
    """The probe's last wake: past it, the stall is not known (a window beyond it is judged with
    what was measured)."""
    return wakes[-1] if wakes else None
