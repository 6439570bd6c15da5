"""Each node's own quorum view, sampled by a process of its own: quorum-views.jsonl (history/run_dir.py
names it; docs/checker.md says what a line holds).

Why a process: a thread of the run's process went 550 ms between two views in a loaded suite, over
the 500 ms the issue asks. A process of its own still went 505 ms while a restarted node's JVM took
the CPU: what keeps it under (279 ms at worst in three loaded runs, docs/measurements.md) is the
higher priority it takes where it may (NICE, as root); a user's run keeps the default priority, and
its views may come later on a loaded machine. It imports nothing but the file reader, and reads a
few small files a round.

ControlPlaneSampler (harness/control_plane.py) starts it with the history's clock and the nodes'
quorum-state paths, and writes to its standard input the index of each nemesis operation that
completes (a view of every node follows at once, `after` that index); when its input closes, it
takes one last view and exits: the run ending, or the run's process gone.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import sys
import time
from pathlib import Path
from typing import BinaryIO, TextIO

from kafka_chaos.harness import quorum_state
from kafka_chaos.history.evidence import view_line

#: The process's niceness where it may raise its priority: in a loaded suite a restarting node's
#: JVM held it from the CPU for 250 ms past its period.
NICE = -10


def views(nodes: list[tuple[str, int, Path]], now: int, after: int | None) -> list[str]:
    """One line per node: its view now; `after`, the nemesis completion that asked for it;
    `written`, the file's last write on the history's clock (`now` less the file's age), which
    tells a view the node's running process wrote from its dead predecessor's last one."""
    lines = []
    for alias, node_id, path in nodes:
        view = quorum_state.read_view(path)
        error, mtime_ns = view.pop("error"), view.pop("mtime_ns")
        written = None if mtime_ns is None else now - (time.time_ns() - mtime_ns)
        line = view_line(time=now, node=alias, node_id=node_id, **view, after=after, error=error, written=written)
        lines.append(line)
    return lines


def sample(nodes: list[tuple[str, int, Path]], start_ns: int, period_s: float, commands: BinaryIO, out: TextIO) -> None:
    """Every period and after each completion index read from `commands`, until it closes."""

    def now() -> int:
        return time.monotonic_ns() - start_ns  # the history's clock: CLOCK_MONOTONIC is the machine's

    period_ns, fd, pending = round(period_s * 1e9), commands.fileno(), b""
    due = now()
    while True:
        ready, _, _ = select.select([fd], [], [], max(0.0, (due - now()) / 1e9))
        closed, lines = False, []
        if ready:
            chunk = os.read(fd, 4096)
            closed = not chunk
            *complete, pending = (pending + chunk).split(b"\n")
            for index in complete:
                lines += views(nodes, now(), int(index))
        moment = now()
        if moment >= due or closed:
            lines += views(nodes, moment, None)
            due += period_ns
            if due <= moment:  # late by more than a period: the next one a period from now
                due = moment + period_ns
        if lines:
            out.write("".join(lines))
            out.flush()
        if closed:
            return


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kafka_chaos.harness.view_sampler")
    parser.add_argument("--start-ns", type=int, required=True, help="the history's time 0 on time.monotonic_ns()")
    parser.add_argument("--period-s", type=float, required=True)
    parser.add_argument("--nodes", required=True, help='JSON: [["kafka-1", 1, "/path/to/quorum-state"], ...]')
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:  # ahead of the cluster's JVMs for the CPU, where allowed (root): its rounds are short
        os.nice(NICE)
    except OSError:
        pass
    nodes = [(alias, int(node_id), Path(path)) for alias, node_id, path in json.loads(args.nodes)]
    with open(args.out, "a", encoding="utf-8") as out:
        sample(nodes, args.start_ns, args.period_s, sys.stdin.buffer, out)


if __name__ == "__main__":
    main()
