"""What the benches of runs under faults share (share_faults.py, tiered_faults.py): the medians,
the liveness goals, and the line and JSON row each run leaves as it finishes."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Issue 47's and 48's liveness goals: ok operations/s in fault windows and between faults, as
#: ratios to the rate before the first fault.
IN_FAULTS_GOAL, BETWEEN_FAULTS_GOAL = 0.5, 0.9


def kafka_chaos_run(version: str, seed: int, time_limit: float, store: Path, name: str, extra: list[str]) -> dict:
    """`kafka-chaos run --json --quiet` in a process of its own: its run directory and exit code,
    or `error`, the last line it printed when it wrote no JSON."""
    cmd = [str(ROOT / ".venv/bin/kafka-chaos"), "run", "--kafka", version, "--time-limit", str(time_limit)]
    cmd += ["--seed", str(seed), "--store", str(store), "--name", name, "--json", "--quiet", *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    try:
        out = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    return {"run_dir": out.get("run_dir"), "exit": done.returncode}


def median(values: list) -> float | None:
    kept = [v for v in values if v is not None]
    return round(statistics.median(kept), 3) if kept else None


def liveness_missed(in_faults: float | None, between: float | None) -> list[str]:
    """The liveness goals a cell's medians miss, as the tables say them."""
    missed = []
    if in_faults is not None and in_faults < IN_FAULTS_GOAL:
        missed.append(f"in faults < {IN_FAULTS_GOAL}")
    if between is not None and between < BETWEEN_FAULTS_GOAL:
        missed.append(f"between < {BETWEEN_FAULTS_GOAL}")
    return missed


def finished(label: str, run: dict, row: dict, started: float, out: Path | None) -> None:
    """One run's verdict on stderr as it ends, and its row appended to `out` (JSON lines)."""
    print(
        f"{label}: {run.get('valid', run.get('error'))} {run.get('errors', '')} ({time.monotonic() - started:.0f} s)",
        file=sys.stderr,
        flush=True,
    )
    if out:
        with out.open("a") as f:
            f.write(json.dumps(row) + "\n")
