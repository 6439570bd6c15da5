"""The host stall probe: a small process of its own that sleeps history/stall.py's PERIOD_NS at a
time and writes, on the history's clock, when it woke (control-plane/host-stall.jsonl; the
contract's "Control plane", amended 2026-12-06). An interval between two wakes much longer than
the sleep is time the machine did not give back: the checker lengthens a timing bound by it.

Why a process: a thread of the run's process would also count the waits on Python's lock that the
workload's threads hold, which Kafka's JVMs never feel. Why the default priority, unlike the view
sampler (harness/view_sampler.py): it must feel the stall the nodes' JVMs feel, and they run at the
default priority; so it sets niceness 0 where it may (a harness run under `nice` by a user that is
not root keeps its own). It imports nothing but history/stall.py, and a wake costs a `select`, a
clock read and a short line kept in memory: the lines go to the file about once a second.

ControlPlaneSampler (harness/control_plane.py) starts it with the history's clock origin and its
standard input a pipe it never writes to; when that input closes (the run ending, or the run's
process gone), the probe writes what it holds and exits.
"""

from __future__ import annotations

import argparse
import os
import select
import sys
import time
from pathlib import Path
from typing import BinaryIO, TextIO

from kafka_chaos.history.stall import PERIOD_NS, wake_line

#: How long wakes are held in memory before they are written: a write a second keeps the probe's
#: cost to its sleeps, and a probe that is killed loses at most that much.
FLUSH_NS = 1_000_000_000


def probe(start_ns: int, commands: BinaryIO, out: TextIO, flush_ns: int = FLUSH_NS) -> None:
    """Sleep PERIOD_NS at a time (a `select` on `commands`, so that its closing wakes it) and
    write each wake's time, from its start until `commands` closes."""

    def now() -> int:
        return time.monotonic_ns() - start_ns  # the history's clock: CLOCK_MONOTONIC is the machine's

    fd, period_s = commands.fileno(), PERIOD_NS / 1e9
    written = now()
    held = [wake_line(written)]  # its start: the first interval counts from here
    while True:
        ready, _, _ = select.select([fd], [], [], period_s)
        woke = now()
        held.append(wake_line(woke))
        closed = bool(ready) and not os.read(fd, 4096)  # nothing is written to it: only its end is news
        if closed or woke - written >= flush_ns:
            out.write("".join(held))
            out.flush()
            held.clear()
            written = woke
        if closed:
            return


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kafka_chaos.harness.stall_probe")
    parser.add_argument("--start-ns", type=int, required=True, help="the history's time 0 on time.monotonic_ns()")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:  # the nodes' priority; raising it back from a user's `nice` needs root
        os.setpriority(os.PRIO_PROCESS, 0, 0)
    except OSError:
        pass
    with open(args.out, "a", encoding="utf-8") as out:
        probe(args.start_ns, sys.stdin.buffer, out)


if __name__ == "__main__":
    main()
