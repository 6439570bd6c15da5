"""Bench: a share group (KIP-932) under faults, per Kafka version and client: verdicts,
deliveries, redeliveries by cause, liveness, and what its check costs against a queue run's.

    .venv/bin/python bench/share_faults.py [--kafka 4.2.2,4.3.1,4.4.0] [--clients java,librdkafka]
        [--runs 3] [--time-limit 60] [--interval 8] [--nemesis-start 15] [--store DIR] [--out FILE]
    .venv/bin/python bench/share_faults.py --check-cost [--kafka 4.3.1] [--runs 3] [--time-limit 60]

Each run is `kafka-chaos run --consumer share --nemesis kill,pause,partition,kill@leader:chaos/0,
pause@share-coordinator:chaos/0 --nemesis-interval 8 --nemesis-start 15 --time-limit 60 --check` on
a fresh 3-node cluster (random kills, pauses and partitions, the share partition's leader killed
and the group's share coordinator paused), seeds 1 to N. The first fault waits until the group's
members have joined and deliver, so that the rate before it is a share group's steady rate. Per
version and client it prints the verdicts and error anomalies of each run, and medians over the
runs of: values delivered once and more than once, redeliveries by cause, the share coverage,
and ok operations/s in fault windows and between faults as ratios to the rate before the first
fault. Goals (issue 47): in faults >= 0.5, between faults >= 0.9; a cell that misses one says so.

`--check-cost`: fault-free runs of the same length, a share run and a queue run (assign) per
seed, each checked three times in the bench's one warm Spark session (`check_history` of the
kept run directory); prints the median check seconds of each and their ratio (goal: a share
run's check costs at most 1.2x a queue run's).

Every run's numbers are appended to --out (JSON lines) as it finishes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fault_runs import finished, kafka_chaos_run, liveness_missed, median  # bench/, beside this script

FAULTS = "kill,pause,partition,kill@leader:chaos/0,pause@share-coordinator:chaos/0"
CHECK_COST_GOAL = 1.2


def run(version: str, client: str, seed: int, args: argparse.Namespace, store: Path, extra: list[str]) -> dict:
    name = f"share-{version}-{client}"
    return kafka_chaos_run(version, seed, args.time_limit, store, name, ["--client", client, *extra])


def under_faults(version: str, client: str, seed: int, args: argparse.Namespace, store: Path) -> dict:
    extra = ["--consumer", "share", "--nemesis", FAULTS, "--nemesis-interval", str(args.interval), "--check"]
    extra += ["--nemesis-start", str(args.nemesis_start)]
    got = run(version, client, seed, args, store, extra)
    if "error" in got:
        return {"version": version, "client": client, "seed": seed, **got}
    results = json.loads((Path(got["run_dir"]) / "results.json").read_text())
    live = results.get("liveness") or {}
    ratios = live.get("ratios") or {}
    share = results.get("share") or {}
    per_value = share.get("deliveries_per_value", {})
    return {
        "version": version,
        "client": client,
        "seed": seed,
        "run_dir": got["run_dir"],
        "valid": results.get("valid"),
        "errors": sorted(n for n, a in results.get("anomalies", {}).items() if a.get("errors")),
        "delivered_once": per_value.get("1", 0),
        "delivered_more": sum(n for k, n in per_value.items() if k != "1"),
        "redeliveries": share.get("redeliveries", {}),
        "coverage": (results.get("group_coverage") or {}).get("every_key_share"),
        "in_faults": (ratios.get("ops_per_s") or {}).get("in_faults"),
        "between_faults": (ratios.get("ops_per_s") or {}).get("between_faults"),
    }


def table(rows: list[dict]) -> None:
    print(
        "| Kafka | client | verdicts | errors | delivered once / more (median) | redeliveries by cause (median) "
        "| every key delivered | ok ops/s in faults | between faults | goals missed |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    cells: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        cells.setdefault((r["version"], r["client"]), []).append(r)
    for (version, client), runs in cells.items():
        ok = [r for r in runs if "error" not in r]
        verdicts = ", ".join(str(r.get("valid", r.get("error"))) for r in runs)
        errors = sorted({e for r in ok for e in r["errors"]}) or ["none"]
        causes = sorted({c for r in ok for c in r["redeliveries"]})
        by_cause = ", ".join(f"{c} {median([r['redeliveries'].get(c, 0) for r in ok])}" for c in causes) or "-"
        in_f, between = median([r["in_faults"] for r in ok]), median([r["between_faults"] for r in ok])
        missed = liveness_missed(in_f, between)
        print(
            f"| {version} | {client} | {verdicts} | {', '.join(errors)} | "
            f"{median([r['delivered_once'] for r in ok])} / {median([r['delivered_more'] for r in ok])} | {by_cause} | "
            f"{median([r['coverage'] for r in ok])} | {in_f} | {between} | {', '.join(missed) or 'none'} |"
        )


def check_seconds(run_dir: str, session: Any, times: int) -> list[float]:
    """`times` checks of one run directory in this process's one Spark session."""
    from kafka_chaos.checkers.check import check_history

    out = []
    for _ in range(times):
        started = time.monotonic()
        check_history(Path(run_dir) / "history.jsonl", report=False, session=session)
        out.append(time.monotonic() - started)
    return out


def check_cost(args: argparse.Namespace, store: Path) -> None:
    from kafka_chaos.checkers.spark import session as spark_session

    version = args.kafka.split(",")[0]
    session = spark_session()
    share, queue = [], []
    for seed in range(1, args.runs + 1):
        for kind, into, extra, client in (
            ("share", share, ["--consumer", "share"], "java"),
            ("queue", queue, [], "java"),
        ):
            got = run(version, client, seed, args, store, extra)
            if "error" in got:
                print(f"{kind} seed {seed}: {got['error']}", file=sys.stderr)
                continue
            seconds = check_seconds(got["run_dir"], session, 3)
            into.append(statistics.median(seconds[1:]))  # warm checks: the first starts the JVM's caches
            print(f"{kind} seed {seed}: checks {[round(s, 2) for s in seconds]} s", file=sys.stderr)
    s, q = median(share), median(queue)
    ratio = round(s / q, 2) if s and q else None
    print(f"check, median of warm checks: share run {s} s, queue run {q} s, ratio {ratio} (goal <= {CHECK_COST_GOAL})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default="4.2.2,4.3.1,4.4.0")
    parser.add_argument("--clients", default="java,librdkafka")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60)
    parser.add_argument("--interval", type=float, default=8)
    parser.add_argument("--nemesis-start", type=float, default=15, help="seconds of faultless traffic first")
    parser.add_argument("--store", type=Path, default=None, help="keep the run directories here")
    parser.add_argument("--out", type=Path, default=None, help="JSON lines, one per run (appended)")
    parser.add_argument("--check-cost", action="store_true")
    args = parser.parse_args()
    store = args.store or Path(tempfile.mkdtemp(prefix="share-bench-"))
    if args.check_cost:
        check_cost(args, store)
        return
    rows = []
    for version in args.kafka.split(","):
        for client in args.clients.split(","):
            for seed in range(1, args.runs + 1):
                started = time.monotonic()
                row = under_faults(version, client, seed, args, store)
                rows.append(row)
                finished(f"{version} {client} seed {seed}", row, row, started, args.out)
    table(rows)


if __name__ == "__main__":
    main()
