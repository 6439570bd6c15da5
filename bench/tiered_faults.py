"""Bench: tiered storage (KIP-405) under faults: verdicts, where the final read came from, the
log starts, and liveness against the same run without `--tiered`.

    .venv/bin/python bench/tiered_faults.py [--kafka 4.3.1,4.4.0] [--runs 3] [--time-limit 60]
        [--nemesis kill,pause,partition,remote-unavailable,remote-slow] [--interval 8]
        [--nemesis-start 15] [--store DIR] [--out FILE]

Per version and seed (1 to N), two runs on fresh 3-node clusters, one after the other:
`kafka-chaos run --tiered --nemesis NEMESIS --nemesis-interval 8 --nemesis-start 15 --time-limit 60
--check`, and the same without `--tiered` (nor NEMESIS's remote-storage faults). It prints, per
version, each tiered run's verdict and error anomalies, and medians over the runs of: records the
final read got from remote storage and from local logs, ok operations/s in fault windows and
between faults as ratios to the rate before the first fault, and the tiered run's rate before the
first fault as a ratio to the plain run's.
Goals (issue 48): in faults >= 0.5, between faults >= 0.9, tiered before faults >= 0.8x plain; a
version that misses one says so.

Every run's numbers are appended to --out (JSON lines) as it finishes.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from fault_runs import finished, kafka_chaos_run, liveness_missed, median  # bench/, beside this script

TIERED_RATE_GOAL = 0.8


def run(version: str, seed: int, args: argparse.Namespace, store: Path, tiered: bool) -> dict:
    name = f"tiered-{version}" if tiered else f"plain-{version}"
    # A cluster without tiered storage has no remote storage to fault: the plain run leaves those out.
    nemesis = args.nemesis if tiered else ",".join(f for f in args.nemesis.split(",") if not f.startswith("remote-"))
    faults = ["--nemesis", nemesis, "--nemesis-interval", str(args.interval)]
    faults += ["--nemesis-start", str(args.nemesis_start), "--check", *(["--tiered"] if tiered else [])]
    out = kafka_chaos_run(version, seed, args.time_limit, store, name, faults)
    if "error" in out:
        return out
    run_dir = Path(out["run_dir"])
    if not (run_dir / "results.json").exists():
        return {"error": f"exit {out['exit']}, no results.json in {run_dir}"}
    results = json.loads((run_dir / "results.json").read_text())
    summary = json.loads((run_dir / "summary.json").read_text())
    live = results.get("liveness") or {}
    reads = summary.get("tiered_reads") or {}
    return {
        "run_dir": str(run_dir),
        "valid": results.get("valid"),
        "errors": sorted(n for n, a in results.get("anomalies", {}).items() if a.get("errors")),
        "log_starts": (results.get("tiered") or {}).get("checked"),
        "from_remote": reads.get("from_remote"),
        "from_local": reads.get("from_local"),
        "before": (live.get("ops_per_s") or {}).get("before_faults"),
        "in_faults": ((live.get("ratios") or {}).get("ops_per_s") or {}).get("in_faults"),
        "between_faults": ((live.get("ratios") or {}).get("ops_per_s") or {}).get("between_faults"),
    }


def table(rows: list[dict]) -> None:
    print(
        "| Kafka | tiered verdicts | errors | from remote / local (median) | in faults | between faults "
        "| tiered / plain before faults | goals missed |"
    )
    print("|---|---|---|---|---|---|---|---|")
    by_version: dict[str, list[dict]] = {}
    for r in rows:
        by_version.setdefault(r["version"], []).append(r)
    for version, runs in by_version.items():
        tiered = [r["tiered"] for r in runs if "error" not in r["tiered"]]
        pairs = [r for r in runs if "error" not in r["tiered"] and "error" not in r["plain"]]
        verdicts = ", ".join(str(r["tiered"].get("valid", r["tiered"].get("error"))) for r in runs)
        errors = sorted({e for t in tiered for e in t["errors"]}) or ["none"]
        in_f, between = median([t["in_faults"] for t in tiered]), median([t["between_faults"] for t in tiered])
        befores = [(r["tiered"]["before"], r["plain"]["before"]) for r in pairs]
        rate = median([t / p for t, p in befores if t and p])
        missed = liveness_missed(in_f, between)
        if rate is not None and rate < TIERED_RATE_GOAL:
            missed.append(f"tiered/plain < {TIERED_RATE_GOAL}")
        print(
            f"| {version} | {verdicts} | {', '.join(errors)} | {median([t['from_remote'] for t in tiered])} / "
            f"{median([t['from_local'] for t in tiered])} | {in_f} | {between} | {rate} | "
            f"{', '.join(missed) or 'none'} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default="4.3.1")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60)
    parser.add_argument("--nemesis", default="kill,pause,partition,remote-unavailable,remote-slow")
    parser.add_argument("--interval", type=float, default=8)
    parser.add_argument("--nemesis-start", type=float, default=15, help="seconds of faultless traffic first")
    parser.add_argument("--store", type=Path, default=None, help="keep the run directories here")
    parser.add_argument("--out", type=Path, default=None, help="JSON lines, one per seed (appended)")
    args = parser.parse_args()
    store = args.store or Path(tempfile.mkdtemp(prefix="tiered-bench-"))
    rows = []
    for version in args.kafka.split(","):
        for seed in range(1, args.runs + 1):
            started = time.monotonic()
            row = {
                "version": version,
                "seed": seed,
                "tiered": run(version, seed, args, store, True),
                "plain": run(version, seed, args, store, False),
            }
            rows.append(row)
            finished(f"{version} seed {seed}", row["tiered"], row, started, args.out)
    table(rows)


if __name__ == "__main__":
    main()
