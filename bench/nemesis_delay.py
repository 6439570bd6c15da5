"""Bench: delay between a fault's scheduled time and its effect, per fault (median and p99).

    .venv/bin/python bench/nemesis_delay.py [--kafka V] [--trials N]

A scripted schedule fires each fault at a known time on a 3-node cluster. The delay runs from
the scheduled time to the moment the effect is in place and verified: the container has
exited (kill), is frozen (pause), or every DROP rule is installed (partition, isolate shape).
It includes the scheduler's own wake-up lateness. Goal: median under 100 ms.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
from pathlib import Path

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.file import HistoryWriter, read_history
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.faults import HEALS
from kafka_chaos.nemesis.schedule import ScriptedSchedule, Step

FAULTS = ("kill", "pause", "partition")


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default=DEFAULT_VERSION)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--gap", type=float, default=3.0, help="seconds between steps")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    steps, at = [], 1.0
    for _ in range(args.trials):
        for fault in FAULTS:
            steps.append(Step(at=at, fault=fault, target="random", hold=args.gap / 2))
            at += args.gap
    delays: dict[str, list[float]] = {f: [] for f in FAULTS}
    with tempfile.TemporaryDirectory() as tmp, KafkaCluster(args.kafka).with_nodes(3) as cluster:
        path = Path(tmp) / "history.jsonl"
        with HistoryWriter(path) as history:
            schedule = ScriptedSchedule(Nemesis(cluster, history, seed=1), steps)
            schedule.start()
            # Times in the history count from the writer's start; the schedule's from its own.
            offset_ns = int((schedule.started * 1e9) - history.start_ns)
            schedule.thread.join(timeout=at + 120)
            schedule.stop_and_heal()
        oks = [e for e in read_history(path) if e["type"] == "ok" and e["f"] in FAULTS]
        for step, event in zip(steps, oks, strict=False):
            delays[step.fault].append((event["time"] - offset_ns) / 1e6 - step.at * 1000)
    print(f"\nKafka {args.kafka}, 3 nodes: scheduled time to verified effect (ms), {args.trials} trials each")
    print(f"{'fault':<10} {'median':>8} {'p99':>8} {'max':>8}")
    for fault in FAULTS:
        d = delays[fault]
        print(f"{fault:<10} {statistics.median(d):>8.1f} {p99(d):>8.1f} {max(d):>8.1f}")
    overall = statistics.median([x for d in delays.values() for x in d])
    print(f"all faults: median {overall:.1f} ms (goal < 100 ms: {'met' if overall < 100 else 'NOT met'})")
    print(f"heals used: {', '.join(f'{f} -> {HEALS[f]}' for f in FAULTS)}")


if __name__ == "__main__":
    main()
