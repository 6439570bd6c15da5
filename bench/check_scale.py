"""Bench: wall time and peak Python memory of the PySpark history checker against history size.

    .venv/bin/python bench/check_scale.py --sizes 100000,1000000 --runs 3 [--dir D] [--keep] [--no-report]

For each size a consistent history (no anomalies: the verdict must be valid) of that many operations
is generated on disk, streamed, never held in memory: about half sends of one value, half polls by
16 processes over 16 keys (each process assigned 2 keys), 1% nemesis kill/start, and a final read
phase so that every acknowledged value is read. Then `checkers.check.check_history` runs on it
`--runs` times, each run in a fresh Python subprocess (its own JVM), and per run the script prints:
- wall: the subprocess, from start to exit (interpreter, imports, JVM start, check, shutdown);
- check: `check_history` alone, timed inside the subprocess;
- py rss: the peak RSS of the subprocess's Python process (ru_maxrss of RUSAGE_SELF; the JVM is a
  separate process and is not included).
Then the median per size. Goal (from the issue): 10M operations in under 2 minutes on 2 cores in
local mode, with the Python process's peak memory flat in history size. Exits non-zero when any run
fails or its verdict is not valid=true.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEYS_PER_PROCESS = 2
NEMESIS_RATE = 0.01
MAX_POLL = 4
FLUSH_LINES = 1 << 15
ENDGAME = 10_000  # operations before the target at which the generator starts to plan its final read phase

CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
from checkers.check import check_history
t1 = time.perf_counter()
r = check_history(sys.argv[1], sys.argv[2], report=sys.argv[3] == "1")
t2 = time.perf_counter()
v = r.stats.get("values", {})
print("BENCH " + json.dumps({
    "valid": r.valid, "errors": r.errors, "warnings": r.warnings, "import_s": t1 - t0, "check_s": t2 - t1,
    "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "acknowledged": v.get("acknowledged"), "read": v.get("read"),
}), flush=True)
"""


@dataclass
class Run:
    size: int
    n: int
    wall_s: float
    check_s: float
    import_s: float
    maxrss_mib: float
    valid: object
    note: str = ""


def generate(path: Path, operations: int, processes: int = 16, keys: int = 16, seed: int = 1) -> int:
    """Write a consistent history of exactly `operations` operations (when `operations` >= the assigns);
    returns the number of operations written. Memory is constant: the value at (key k, offset o) is
    o * keys + k + 1, so no value is stored; only per-key and per-(process, key) positions are."""
    rnd = random.Random(seed)
    rand = rnd.random
    randint = rnd.randint
    names = [f"chaos/{k}" for k in range(keys)]
    assigned = [[(p * KEYS_PER_PROCESS + j) % keys for j in range(KEYS_PER_PROCESS)] for p in range(processes)]
    acked = [0] * keys  # next offset of each key = number of acknowledged values
    pos = [[0] * KEYS_PER_PROCESS for _ in range(processes)]  # next offset each process reads, per assigned key
    index = 0
    t = 1_000
    ops = 0
    killed = False
    buf: list[str] = []
    out = buf.append

    with open(path, "w", encoding="utf-8", buffering=1 << 22) as fh:

        def flush() -> None:
            fh.write("".join(buf))
            buf.clear()

        def pair(process: str, f: str, invoke: str, done: str, latency: int) -> None:
            nonlocal index, t, ops
            head = f'"process":{process},'
            out(f'{{"index":{index},"time":{t},{head}"type":"invoke","f":"{f}","value":{invoke}}}\n')
            out(f'{{"index":{index + 1},"time":{t + latency},{head}"type":"ok","f":"{f}","value":{done}}}\n')
            index += 2
            t += latency + 1_000
            ops += 1
            if len(buf) >= FLUSH_LINES:
                flush()

        def poll(p: int, most: int | None) -> None:
            parts = []
            mine = pos[p]
            for j, k in enumerate(assigned[p]):
                start = mine[j]
                n = min(randint(0, MAX_POLL) if most is None else most, acked[k] - start)
                if n > 0:
                    pairs = ",".join(f"[{o},{o * keys + k + 1}]" for o in range(start, start + n))
                    parts.append(f'"{names[k]}":[{pairs}]')
                    mine[j] = start + n
            pair(str(p), "poll", '[["poll"]]', '[["poll",{' + ",".join(parts) + "}]]", 150_000 + randint(0, 100_000))

        def final_need() -> int:
            """Operations the final read phase takes: catch every process up, and start a killed node."""
            need = int(killed)
            for p in range(processes):
                lag = max(acked[k] - pos[p][j] for j, k in enumerate(assigned[p]))
                need += -(-lag // MAX_POLL)
            return need

        for p in range(processes):
            ks = "[" + ",".join(f'"{names[k]}"' for k in assigned[p]) + "]"
            pair(str(p), "assign", ks, ks, 50_000)

        while True:
            if ops >= operations - ENDGAME and ops + final_need() + 2 >= operations:
                break
            r = rand()
            if r < NEMESIS_RATE:
                pair(
                    '"nemesis"',
                    "start" if killed else "kill",
                    '{"nodes":["kafka-2"]}',
                    '{"nodes":["kafka-2"]}',
                    2_000_000,
                )
                killed = not killed
            elif r < (1 + NEMESIS_RATE) / 2:
                p = randint(0, processes - 1)
                k = randint(0, keys - 1)
                o = acked[k]
                v = o * keys + k + 1
                pair(
                    str(p),
                    "send",
                    f'[["send","{names[k]}",{v}]]',
                    f'[["send","{names[k]}",[{o},{v}]]]',
                    300_000 + randint(0, 200_000),
                )
                acked[k] = o + 1
            else:
                poll(randint(0, processes - 1), None)

        # Final read phase: each process polls its keys until caught up; then pad to the exact count.
        if killed:
            pair('"nemesis"', "start", '{"nodes":["kafka-2"]}', '{"nodes":["kafka-2"]}', 2_000_000)
        for p in range(processes):
            while any(acked[k] > pos[p][j] for j, k in enumerate(assigned[p])):
                poll(p, MAX_POLL)
        while ops < operations:
            poll(randint(0, processes - 1), 0)
        flush()
    return ops


def run_check(history: Path, out: Path, report: bool, timeout: float) -> tuple[float, dict | None, str]:
    """One check in a fresh Python process: its wall time, what it reported, and its stderr."""
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-c", CHILD, str(history), str(out), "1" if report else "0"]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        return time.perf_counter() - start, None, f"timed out after {timeout:g} s\n{err}"
    wall = time.perf_counter() - start
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("BENCH ")]
    if proc.returncode != 0 or not lines:
        return wall, None, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return wall, json.loads(lines[-1][len("BENCH ") :]), proc.stderr


def fmt_row(cells: list[object], widths: list[int]) -> str:
    return " ".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000,10000000", help="comma-separated operation counts")
    parser.add_argument("--runs", type=int, default=3, help="checks per size, each in a fresh subprocess")
    parser.add_argument("--dir", type=Path, default=None, help="where histories go (default: a temp dir in /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the directory with histories and results")
    parser.add_argument("--no-report", action="store_true", help="skip report.html (report=False)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per check subprocess")
    args = parser.parse_args()
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    base = args.dir or Path(tempfile.mkdtemp(prefix="check-scale-", dir="/tmp"))
    base.mkdir(parents=True, exist_ok=True)
    runs: list[Run] = []
    failed = False
    widths = [10, 6, 9, 8, 8, 8, 9, 8]
    header = ["ops", "run", "wall s", "check s", "start s", "py MiB", "verdict", ""]
    try:
        for size in sizes:
            history = base / f"history-{size}.jsonl"
            g0 = time.perf_counter()
            n = generate(history, size)
            gen_s = time.perf_counter() - g0
            mib = history.stat().st_size / (1 << 20)
            print(f"\n{size:,} operations: generated {n:,} in {gen_s:.1f} s, {mib:,.1f} MiB ({history})", flush=True)
            print(fmt_row(header, widths), flush=True)
            for i in range(args.runs):
                wall, res, err = run_check(history, base / f"out-{size}-{i + 1}", not args.no_report, args.timeout)
                if res is None:
                    failed = True
                    print(fmt_row([size, i + 1, f"{wall:.1f}", "-", "-", "-", "FAILED", ""], widths), flush=True)
                    print(err.rstrip(), file=sys.stderr, flush=True)
                    continue
                run = Run(size, n, wall, res["check_s"], wall - res["check_s"], res["maxrss_kib"] / 1024, res["valid"])
                if res["valid"] is not True:
                    failed = True
                    run.note = f"errors {res['errors']} warnings {res['warnings']}"
                runs.append(run)
                cells = [size, i + 1, f"{wall:.1f}", f"{run.check_s:.1f}", f"{run.import_s:.1f}"]
                print(fmt_row([*cells, f"{run.maxrss_mib:.0f}", str(run.valid), run.note], widths), flush=True)
        print(f"\nmedians over {args.runs} run(s) per size (report={'off' if args.no_report else 'on'})")
        print(fmt_row(["ops", "runs", "wall s", "check s", "start s", "py MiB", "verdict", ""], widths))
        for size in sizes:
            mine = [r for r in runs if r.size == size]
            if not mine:
                print(fmt_row([size, 0, "-", "-", "-", "-", "FAILED", ""], widths))
                continue
            med = [statistics.median(getattr(r, a) for r in mine) for a in ("wall_s", "check_s", "import_s")]
            rss = statistics.median(r.maxrss_mib for r in mine)
            ok = "valid" if all(r.valid is True for r in mine) and len(mine) == args.runs else "NOT VALID"
            print(fmt_row([size, len(mine), *(f"{m:.1f}" for m in med), f"{rss:.0f}", ok, ""], widths))
        big = [r for r in runs if r.size >= 10_000_000]
        if big:
            w = statistics.median(r.wall_s for r in big)
            print(f"goal 10M ops < 120 s wall on 2 cores: {'met' if w < 120 else 'NOT met'} (median {w:.1f} s)")
    finally:
        if args.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
