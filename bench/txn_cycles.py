"""Bench: what the transaction cycle search (checkers/txn/cycles.py) adds to `check` of a txn history.

    .venv/bin/python bench/txn_cycles.py [--sizes 1000000] [--runs 3] [--processes 16] [--keys 16]
        [--dir D] [--keep]

For each size a consistent transactional history of that many operations is generated on disk
(tests/checkers/concurrent_txns.py: overlapping transactions that interleave their writes as
they do in Kafka, so `G0` and an allowed `G1c` are normal in it). Then `check_history` runs
`--runs` times with the cycle search and `--runs` times without it (`cycles=False`), alternating,
each in a fresh Python subprocess, report off; per run it prints the check's time, and at the end
the medians and their ratio. The issue's goal (issue 18): at most 20% more at 1M operations.
Exits non-zero when a run fails or a verdict is not valid=true.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]
from check_scale import _child, fmt_row  # noqa: E402 (the bench beside this one)

from tests.checkers.concurrent_txns import generate  # noqa: E402 (the tests' generator)

CHILD = """
import json, sys, time
from kafka_chaos.checkers.check import check_history
t0 = time.perf_counter()
r = check_history(sys.argv[1], sys.argv[2], report=False, cycles=sys.argv[3] == "1")
print("BENCH " + json.dumps({
    "check_s": time.perf_counter() - t0, "valid": r.valid, "errors": r.errors,
    "counts": {n: [a["count"], a["errors"]] for n, a in r.anomalies.items()},
}), flush=True)
"""
GOAL = 0.20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000", help="comma-separated operation counts")
    parser.add_argument("--runs", type=int, default=3, help="checks per size and mode, each in a fresh subprocess")
    parser.add_argument("--processes", type=int, default=16)
    parser.add_argument("--keys", type=int, default=16)
    parser.add_argument("--dir", type=Path, default=None, help="where histories go (default: a temp dir in /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the directory with histories and results")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per check subprocess")
    args = parser.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="txn-cycles-", dir="/tmp"))
    base.mkdir(parents=True, exist_ok=True)
    failed = False
    widths = [10, 4, 8, 9, 40]
    try:
        for size in [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]:
            history = base / f"txn-{size}.jsonl"
            g0 = time.perf_counter()
            n = generate(history, size, args.processes, args.keys)
            mib = history.stat().st_size / (1 << 20)
            print(f"\n{size:,} operations: generated {n:,} in {time.perf_counter() - g0:.1f} s, {mib:,.1f} MiB")
            print(fmt_row(["ops", "run", "cycles", "check s", "anomalies (count, errors)"], widths), flush=True)
            times: dict[bool, list[float]] = {True: [], False: []}
            for i in range(args.runs):
                for cycles in (True, False):
                    out = base / f"out-{size}-{i}-{int(cycles)}"
                    out.mkdir(parents=True, exist_ok=True)
                    _, res, err = _child(CHILD, [str(history), str(out), "1" if cycles else "0"], args.timeout)
                    if res is None or res["valid"] is not True:
                        failed = True
                        print(f"FAILED: {res}\n{err}", file=sys.stderr, flush=True)
                        continue
                    times[cycles].append(res["check_s"])
                    shown = json.dumps(res["counts"])
                    print(fmt_row([size, i + 1, "on" if cycles else "off", f"{res['check_s']:.1f}", shown], widths))
            if times[True] and times[False]:
                on, off = statistics.median(times[True]), statistics.median(times[False])
                verdict = "meets" if on <= off * (1 + GOAL) else "MISSES"
                print(
                    f"median of {len(times[True])}: {on:.1f} s with the cycle search, {off:.1f} s without: "
                    f"+{(on / off - 1) * 100:.0f}% ({verdict} the goal of +{GOAL:.0%})",
                    flush=True,
                )
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            print(f"kept {base}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
