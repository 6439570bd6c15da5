"""Bench: how often a scenario reproduces its loss, and how long a run takes, per Kafka version.

    .venv/bin/python bench/scenario_reproduce.py [--scenario kafka-14139] [--kafka 3.4.1,4.3.1] [--runs 5]

Each run is a whole scenario run (cluster start, workload with the script, teardown, metadata
and replica evidence, check), as `kafka-chaos reproduce` makes it. Per version it prints every
run's wall time and lost-write count, then the reproduction rate and the median wall time of
all runs and of the reproducing ones. Goal (issue 6): kafka-14139 reproduced on 3.4.x in at
least 80% of runs, each run under 3 minutes. Exits 1 when a row is not as the scenario expects.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from kafka_chaos.history.reporter import silent
from kafka_chaos.runs.reproduce import parse_targets, reproduce
from kafka_chaos.scenarios.registry import get

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="kafka-14139")
    parser.add_argument("--kafka", default="3.4.1")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--store", type=Path, help="keep run directories here (default: a temporary folder)")
    args = parser.parse_args()
    scenario = get(args.scenario)
    store = args.store or Path(tempfile.mkdtemp(prefix="kafka-chaos-bench-"))
    rows, out = reproduce(scenario, parse_targets(args.kafka), args.runs, store, silent)
    print(f"{scenario.name}: {args.runs} run(s) per version; runs in {store}")
    print(f"{'kafka':<18} {'run':>4} {'wall s':>8} {'lost':>7}  verdict")
    for row in rows:
        for n, r in enumerate(row.runs, 1):
            note = f" {r.error}" if r.error else ""
            print(f"{row.target.label:<18} {n:>4} {r.wall_s:>8.1f} {r.lost:>7}  {r.verdict}{note}")
    print(f"\n{'kafka':<18} {'expected':>8} {'reproduced':>11} {'median wall s':>14} {'median when reproduced':>23}")
    for row in rows:
        walls = [r.wall_s for r in row.runs]
        ttr = row.time_to_reproduce()
        print(
            f"{row.target.label:<18} {row.expected:>8} {row.reproduced:>5}/{len(row.runs):<5} "
            f"{statistics.median(walls):>14.1f} {ttr if ttr is not None else '-':>23}"
        )
    print(f"table: {out / 'reproduce.md'}")
    return 0 if all(row.as_expected for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
