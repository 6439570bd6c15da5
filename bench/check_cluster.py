"""Bench: one large check on a Spark standalone cluster on this machine, beside local mode.

    .venv/bin/python bench/check_cluster.py [--ops 10000000] [--dir D] [--keep] [--runs 1]
        [--workers 2] [--worker-memory 4g] [--executor-memory 3g]

Issue 49's last Must: the 10M check once on the suite's standalone master with two workers
(tests/checkers/standalone.py: a master and workers started from pyspark's own classes, one core
each), against the default `local[2]`, side by side. bench/check_scale.py's generator writes a
consistent history of `--ops` operations (reused when `--dir` already holds it); then, alternating,
`check_history` reads it in a fresh Python process, locally (a path) and on the cluster (a file://
URI, which its executors read themselves; the JSON both times: a URI has no columnar copy). Per run:
the wall time of the process, the check's own time, the driver's Python peak RSS; then whether the
two said the same (valid, anomaly counts, values acknowledged and read). Exits non-zero when a check
fails, is not valid, or the two disagree.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]

from check_scale import _child, generate  # noqa: E402 (a sibling bench)

from tests.checkers.standalone import cluster  # noqa: E402 (the suite's cluster)

CHILD = """
import json, resource, sys, time
from kafka_chaos.checkers.check import check_history
t = time.perf_counter()
r = check_history(sys.argv[1], sys.argv[2], master=sys.argv[3] or None, report=False)
v = r.stats.get("values", {})
print("BENCH " + json.dumps({
    "valid": r.valid, "check_s": time.perf_counter() - t,
    "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "acknowledged": v.get("acknowledged"), "read": v.get("read"),
    "counts": {n: [a["count"], a["errors"]] for n, a in r.anomalies.items()},
}), flush=True)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10_000_000, help="operations in the history")
    parser.add_argument("--runs", type=int, default=1, help="checks of each kind, alternating")
    parser.add_argument("--dir", type=Path, default=None, help="where the history goes (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the directory")
    parser.add_argument("--workers", type=int, default=2, help="workers of one core each")
    parser.add_argument("--worker-memory", default="4g", help="each worker's memory")
    parser.add_argument("--executor-memory", default="3g", help="spark.executor.memory")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per check")
    args = parser.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="check-cluster-", dir="/tmp"))
    base.mkdir(parents=True, exist_ok=True)
    history = base / f"history-{args.ops}.jsonl"
    if not history.exists():
        generate(history, args.ops)
    print(f"history: {history} ({history.stat().st_size / 1e6:,.0f} MB, {args.ops:,} operations)", flush=True)
    conf = base / "spark-conf"
    conf.mkdir(exist_ok=True)
    (conf / "spark-defaults.conf").write_text(f"spark.executor.memory {args.executor_memory}\n")
    got: dict[str, list[dict]] = {"local[2]": [], "standalone": []}
    failed = False
    os.environ["SPARK_CONF_DIR"] = str(conf)
    work = base / "cluster"
    work.mkdir(exist_ok=True)
    with cluster(work, workers=args.workers, memory=args.worker_memory) as master:
        print(f"cluster: {master}, {args.workers} workers of 1 core and {args.worker_memory}", flush=True)
        for i in range(args.runs):
            for kind, path, m in (("local[2]", str(history), ""), ("standalone", history.as_uri(), master)):
                out = base / f"out-{kind}-{i}"
                shutil.rmtree(out, ignore_errors=True)
                wall, bench, err = _child(CHILD, [path, str(out), m], args.timeout)
                if bench is None or not bench["valid"]:
                    failed = True
                    print(f"{kind} run {i}: FAILED after {wall:.1f} s\n{err[-3000:]}", flush=True)
                    continue
                bench["wall_s"] = wall
                got[kind].append(bench)
                print(
                    f"{kind:>10} run {i}: wall {wall:7.1f} s  check {bench['check_s']:7.1f} s"
                    f"  py rss {bench['maxrss_kib'] / 1024:6.0f} MiB",
                    flush=True,
                )
    said = {
        k: {json.dumps({x: b[x] for x in ("valid", "acknowledged", "read", "counts")}) for b in v}
        for k, v in got.items()
    }
    same = len(said["local[2]"] | said["standalone"]) == 1
    print("\n| where | runs | wall (median) | check (median) | Python peak RSS |\n|---|---|---|---|---|")
    for kind, runs in got.items():
        if runs:
            print(
                f"| {kind} | {len(runs)} | {statistics.median(r['wall_s'] for r in runs):.1f} s"
                f" | {statistics.median(r['check_s'] for r in runs):.1f} s"
                f" | {max(r['maxrss_kib'] for r in runs) / 1024:.0f} MiB |"
            )
    print(f"\nthe two said the same: {'yes' if same else 'NO'}")
    if not args.keep and args.dir is None:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if failed or not same else 0


if __name__ == "__main__":
    sys.exit(main())
