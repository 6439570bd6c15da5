"""Bench: `kafka-chaos trend` against the number of run directories, beside a plain-Python baseline.

    .venv/bin/python bench/trend_scale.py --runs-dirs 1000,10000 --repeats 3 [--template RUN_DIR]

For each size, a store of that many run directories is written (config.json, results.json and
summary.json only, as the nightly workflow keeps between nights): 90 days x 4 Kafka versions x
6 nemeses, a run in ten invalid with lost-write and unseen errors. With --template, every file
is a copy of a real run's, with the version, nemesis, day and run id rewritten.

Per size and repeat, in fresh Python processes side by side:
- trend: `kafka-chaos trend STORE --json --quiet` (the Spark job, local[2]: interpreter, JVM start,
  the job, the files it writes);
- baseline: the same counts in one process of plain Python (json.load of each file, a dict of
  counters), the lower bound of what reading the files costs.
Then the medians and their ratio. The baseline is not a competitor: it holds everything in one
process's memory, and the Spark job is meant to run on a cluster when stores outgrow a machine.
Exits non-zero when the two disagree on the number of runs or invalid runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafka_chaos.history.run_dir import RunDir

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = ("3.5.2", "3.9.1", "4.1.1", "4.3.1")
NEMESES = ("kill", "pause", "partition", "wipe", "lose-unflushed", "kill,pause,partition")
DAY_MS = 86_400_000
START_MS = 1_787_000_000_000

BASELINE = """
import json, sys
from collections import Counter
from pathlib import Path
runs, invalid, seen = Counter(), 0, set()
for config in Path(sys.argv[1]).rglob("config.json"):
    c = json.loads(config.read_text())
    if c["run_id"] in seen:
        continue
    seen.add(c["run_id"])
    results = config.with_name("results.json")
    valid = json.loads(results.read_text())["valid"] if results.exists() else None
    runs[(c["kafka_version"], ",".join(c["nemesis"].get("faults", [])), c["history_started_unix_ms"] // 86400000)] += 1
    invalid += valid is False
print(json.dumps({"runs": sum(runs.values()), "invalid": invalid}))
"""


def write_store(store: Path, count: int, template: Path | None) -> None:
    base = RunDir(template) if template else None
    base_config = json.loads(base.config.read_text()) if base else {}
    base_results = json.loads(base.results.read_text()) if base else {"stats": {}}
    base_summary = json.loads(base.summary.read_text()) if base else {"complete": True}
    for i in range(count):
        version, nemesis, day = VERSIONS[i % 4], NEMESES[(i // 4) % 6], (i // 24) % 90
        run_dir = store / f"night-{day}" / f"{version}-{nemesis.replace(',', '-')}" / f"r{i}"
        run_dir.mkdir(parents=True)
        config = {
            **base_config,
            "kafka_version": version,
            "run_id": f"run-{i}",
            "nemesis": {"faults": nemesis.split(","), "interval": 10},
            "history_started_unix_ms": START_MS + day * DAY_MS + i,
        }
        bad = i % 10 == 0
        anomalies = (
            {
                "lost-write": {"count": 5, "errors": 5, "examples": []},
                "unseen": {"count": 2, "errors": 2, "examples": []},
            }
            if bad
            else {}
        )
        results = {**base_results, "valid": not bad, "anomalies": anomalies}
        files = RunDir(run_dir)
        files.config.write_text(json.dumps(config))
        files.results.write_text(json.dumps(results))
        files.summary.write_text(json.dumps(base_summary))


def timed(cmd: list[str]) -> tuple[float, dict]:
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return wall, json.loads(proc.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs-dirs", default="1000,10000", help="store sizes, comma-separated")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--template", type=Path, help="a real run directory to copy the files of")
    ap.add_argument("--dir", type=Path, help="where stores go (default: a temporary directory)")
    args = ap.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="trend-bench-"))
    print(f"{'run dirs':>9} {'repeat':>6} {'trend s':>8} {'baseline s':>10}  runs  invalid")
    ok = True
    for size in (int(s) for s in args.runs_dirs.split(",")):
        store = base / f"store-{size}"
        shutil.rmtree(store, ignore_errors=True)
        write_store(store, size, args.template)
        walls, baselines = [], []
        for n in range(1, args.repeats + 1):
            b_wall, b = timed([sys.executable, "-c", BASELINE, str(store)])
            t_wall, t = timed(
                [
                    sys.executable,
                    "-m",
                    "kafka_chaos.frontends.cli",
                    "trend",
                    str(store),
                    "--json",
                    "--quiet",
                    "--out",
                    str(base / f"out-{size}"),
                ]
            )
            walls.append(t_wall)
            baselines.append(b_wall)
            invalid = sum(r["invalid"] for r in t["rows"])
            agree = t["runs"] == b["runs"] == size and invalid == b["invalid"]
            ok &= agree
            print(
                f"{size:>9} {n:>6} {t_wall:>8.1f} {b_wall:>10.2f}  {t['runs']:>4}  {invalid:>7}"
                + ("" if agree else f"  DISAGREE with baseline {b}")
            )
        tm, bm = statistics.median(walls), statistics.median(baselines)
        print(f"{size:>9} median {tm:>8.1f} {bm:>10.2f}  ratio trend/baseline {tm / bm:.1f}x")
    if not args.dir:
        shutil.rmtree(base, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
