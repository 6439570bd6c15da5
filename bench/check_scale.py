"""Bench: wall time and peak Python memory of the PySpark history checker against history size.

    .venv/bin/python bench/check_scale.py [--sizes 1000,100000,1000000,10000000] [--runs 3] [--dir D]
        [--keep] [--no-report] [--no-oracle] [--oracle-max N] [--no-plain] [--plain-max N]
        [--history bare|columns|both]

For each size a consistent history (no anomalies: the verdict must be valid) of that many operations
is generated on disk, streamed, never held in memory: about half sends of one value, half polls by
16 processes over 16 keys (each process assigned 2 keys), 1% nemesis kill/start, and a final read
phase so that every acknowledged value is read. Its columnar copy is written as a run's history
writer leaves one (history/columns.py; timed in a fresh process). Then `checkers.check.check_history`
runs on it `--runs` times for each of `--history` (alternating): `bare`, the JSON Lines alone (the
copy hidden meanwhile), whose first check writes its copy and reads it (checkers/load.py
`copy_for`; the copy it wrote is removed after each run), and `columns`, the copy there. Each run
is a fresh Python subprocess (its own JVM), and per run the script prints:
- wall: the subprocess, from start to exit (interpreter, imports, JVM start, check, shutdown),
  less the second check below when there is one (it reads the copy the first wrote);
- check: `check_history` alone, timed inside the subprocess;
- py rss: the peak RSS of the subprocess's Python process (ru_maxrss of RUSAGE_SELF; the JVM is a
  separate process and is not included).
- second: up to 100k operations, a second check of the same file in the same process (warm JVM
  and Python workers: what pytest and `reproduce` pay per check after the first).
Beside them, once per size, each in a fresh process on the same file:
- the plain checker (bench/plain_checker.py, issue 49's baseline: one process, the data-plane
  rules, the JSON streamed once): its wall time, its peak memory, and whether its counts are the
  checker's for its rules (not above --plain-max operations);
- the oracle of the tests (tests/checkers/oracle.py), for correctness only: whether it counts what
  the checker counted (not above --oracle-max operations, 2M by default: it holds every event,
  about 3.3 GB per 1M).
Then the medians per size and what was read, and issues 49's and 60's table with the goals (1k <=
8 s, 1M <= 0.5x the plain checker, the bare JSON's first check too, 10M <= 120 s with Python's
memory flat, a second check of 1k <= 2 s). Exits non-zero when any run fails, its verdict is not
valid=true, a check did not read what it was to read, or the plain checker or the oracle disagrees.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kafka_chaos.history.columns import copy_path

#: The nemesis's kill and start as it writes them (invoke value, completion value): each says how
#: its effect and how its fault ends (nemesis/faults.py named_ends), which the report's fault bands
#: and the control plane's rules read.
KILL = (
    '{"target":"random","effect":"down","undone_by":"start"}',
    '{"target":"random","effect":"down","undone_by":"start","nodes":["kafka-2"]}',
)
START = (
    '{"target":"random","effect":"started","heals":["kill","stop"]}',
    '{"target":"random","effect":"started","heals":["kill","stop"],"nodes":["kafka-2"]}',
)

ROOT = Path(__file__).resolve().parent.parent
KEYS_PER_PROCESS = 2
NEMESIS_RATE = 0.01
MAX_POLL = 4
FLUSH_LINES = 1 << 15
#: The oracle holds every event (about 3.3 GB per 1M operations): above this it is not run.
ORACLE_MAX_OPS = 2_000_000
#: The plain checker keeps each operation's sends and reads (about 1 GB per 1M operations).
PLAIN_MAX_OPS = 4_000_000
ENDGAME = 10_000  # operations before the target at which the generator starts to plan its final read phase

CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
from kafka_chaos.checkers.check import check_history
t1 = time.perf_counter()
said = []
r = check_history(sys.argv[1], sys.argv[2], report=sys.argv[3] == "1", progress=said.append)
t2 = time.perf_counter()
copy = "wrote" if any(s.startswith("check: wrote") for s in said) else (
    "json" if any(" as JSON" in s for s in said if s.startswith("check: reading")) else "copy")
second = None
if sys.argv[4] == "1":  # a second check in the same process (the JVM and Python workers are warm)
    check_history(sys.argv[1], sys.argv[2] + "-again", report=sys.argv[3] == "1")
    second = time.perf_counter() - t2
v = r.stats.get("values", {})
print("BENCH " + json.dumps({
    "valid": r.valid, "errors": r.errors, "warnings": r.warnings, "import_s": t1 - t0, "check_s": t2 - t1,
    "second_s": second, "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "acknowledged": v.get("acknowledged"), "read": v.get("read"), "copy": copy,
    "counts": {n: [a["count"], a["errors"]] for n, a in r.anomalies.items()},
}), flush=True)
"""

PLAIN = """
import json, resource, sys, time
t0 = time.perf_counter()
from bench import plain_checker
found = plain_checker.check_file(sys.argv[1])
print("BENCH " + json.dumps({
    "wall_s": time.perf_counter() - t0, "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "counts": found, "rules": plain_checker.RULES,
}), flush=True)
"""

ORACLE = """
import json, resource, sys, time
t0 = time.perf_counter()
from tests.checkers import oracle
found = oracle.check_file(sys.argv[1])
print("BENCH " + json.dumps({
    "wall_s": time.perf_counter() - t0, "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "counts": {n: [f.count, f.errors] for n, f in found.items()},
}), flush=True)
"""


@dataclass
class Run:
    size: int
    history: str  # what the check was given: "bare" (the JSON alone) or "columns" (its columnar copy there)
    n: int
    wall_s: float
    check_s: float
    import_s: float
    maxrss_mib: float
    valid: object
    note: str = ""
    second_s: float | None = None


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
                pair('"nemesis"', "start" if killed else "kill", *(START if killed else KILL), 2_000_000)
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
            pair('"nemesis"', "start", *START, 2_000_000)
        for p in range(processes):
            while any(acked[k] > pos[p][j] for j, k in enumerate(assigned[p])):
                poll(p, MAX_POLL)
        while ops < operations:
            poll(randint(0, processes - 1), 0)
        flush()
    return ops


def _child(code: str, args: list[str], timeout: float) -> tuple[float, dict | None, str]:
    """Run `code` in a fresh Python process; its wall time, its BENCH line, and its stderr."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        return time.perf_counter() - start, None, f"timed out after {timeout:g} s\n{err}"
    wall = time.perf_counter() - start
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("BENCH ")]
    if proc.returncode != 0 or not lines:
        return wall, None, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return wall, json.loads(lines[-1][len("BENCH ") :]), proc.stderr


#: What a check must say it read, by what it was given (the CHILD's "copy").
READS = {"bare": "wrote", "columns": "copy"}


def run_check(
    history: Path, out: Path, report: bool, second: bool, timeout: float, read: str = "bare"
) -> tuple[float, dict | None, str]:
    """One check in a fresh Python process (and a second one in it when asked). `read`: "bare"
    gives the check the JSON alone (its first check writes the copy), "columns" the copy there."""
    out.mkdir(parents=True, exist_ok=True)
    with bare(history) if read == "bare" else contextlib.nullcontext():
        return _child(CHILD, [str(history), str(out), "1" if report else "0", "1" if second else "0"], timeout)


@contextlib.contextmanager
def bare(history: Path) -> Iterator[None]:
    """The history without its columnar copy meanwhile (hidden; what the check writes is removed)."""
    copy = copy_path(history)
    hidden = copy.with_name(copy.name + ".hidden")
    if copy.exists():
        copy.rename(hidden)
    try:
        yield
    finally:
        copy.unlink(missing_ok=True)
        if hidden.exists():
            hidden.rename(copy)


#: bench/check_profile.py's name for it: its steps read the JSON; its whole check, given the bare
#: file, writes the copy and reads it.
json_only = bare


COPY = """
import json, sys, time
t0 = time.perf_counter()
from kafka_chaos.history.file import write_columnar_copy
made = write_columnar_copy(sys.argv[1])
print("BENCH " + json.dumps({"wall_s": time.perf_counter() - t0, "made": made is not None}), flush=True)
"""


def _memory_gib() -> float:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)


def fmt_row(cells: list[object], widths: list[int]) -> str:
    return " ".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True))


#: The goals (issues 49 and 60): size -> (label, time before issue 49, the goal: seconds, BY_PLAIN
#: (a ratio to the plain checker on the same file, PLAIN_RATIO_GOAL), or None).
BY_PLAIN = "plain"
GOALS: dict[int, tuple[str, str, float | str | None]] = {
    1_000: ("1k operations, fresh process (JVM start included)", "18.1 s", 8),
    100_000: ("100k operations (about a 60 s run at 2,000 ops/s)", "-", None),
    1_000_000: ("1M operations", "55.7 s (1.47x the issue's baseline)", BY_PLAIN),
    10_000_000: ("10M operations", "333 s", 120),
}
PLAIN_RATIO_GOAL = 0.5
SECOND_GOAL_S = 2
SECOND_MAX_OPS = 100_000  # a second check in the same process is timed up to this size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000,1000000,10000000", help="comma-separated operation counts")
    parser.add_argument("--runs", type=int, default=3, help="checks per size, each in a fresh subprocess")
    parser.add_argument("--dir", type=Path, default=None, help="where histories go (default: a temp dir in /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the directory with histories and results")
    parser.add_argument("--no-report", action="store_true", help="skip report.html (report=False)")
    parser.add_argument("--no-oracle", action="store_true", help="skip the plain-Python oracle runs")
    parser.add_argument(
        "--oracle-max",
        type=int,
        default=ORACLE_MAX_OPS,
        help=f"no oracle run above this many operations (default {ORACLE_MAX_OPS:,}: it holds the whole history)",
    )
    parser.add_argument("--no-plain", action="store_true", help="skip the plain checker (bench/plain_checker.py)")
    parser.add_argument(
        "--plain-max",
        type=int,
        default=PLAIN_MAX_OPS,
        help=f"no plain checker run above this many operations (default {PLAIN_MAX_OPS:,})",
    )
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per check subprocess")
    parser.add_argument(
        "--history",
        choices=("bare", "columns", "both"),
        default="both",
        help="what each check is given: the JSON alone (its first check writes the columnar copy and "
        "reads it), the copy a run's writer leaves beside it (history/columns.py; written once per "
        "size, timed), or both, alternating (default)",
    )
    args = parser.parse_args()
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    base = args.dir or Path(tempfile.mkdtemp(prefix="check-scale-", dir="/tmp"))
    base.mkdir(parents=True, exist_ok=True)
    runs: list[Run] = []
    oracles: dict[int, dict] = {}
    plains: dict[int, dict] = {}
    failed = False
    widths = [10, 6, 9, 8, 8, 8, 9, 8, 8]
    header = ["ops", "run", "wall s", "check s", "start s", "py MiB", "second s", "verdict", ""]
    try:
        for size in sizes:
            history = base / f"history-{size}.jsonl"
            g0 = time.perf_counter()
            n = generate(history, size)
            gen_s = time.perf_counter() - g0
            mib = history.stat().st_size / (1 << 20)
            print(f"\n{size:,} operations: generated {n:,} in {gen_s:.1f} s, {mib:,.1f} MiB ({history})", flush=True)
            reads = ["bare", "columns"] if args.history == "both" else [args.history]
            if "columns" in reads:
                wall, res, err = _child(COPY, [str(history)], args.timeout)
                if res is None or not res["made"]:
                    print(f"columnar copy: FAILED after {wall:.1f} s\n{err}", file=sys.stderr, flush=True)
                    sys.exit(1)
                copy_mib = copy_path(history).stat().st_size / (1 << 20)
                print(f"columnar copy (as a run's writer leaves it): {res['wall_s']:.1f} s, {copy_mib:,.1f} MiB")
            print(fmt_row(header, widths), flush=True)
            counts = None
            for i, read in [(i, read) for i in range(args.runs) for read in reads]:
                second = size <= SECOND_MAX_OPS
                out = base / f"out-{size}-{read}-{i + 1}"
                wall, res, err = run_check(history, out, not args.no_report, second, args.timeout, read)
                if res is None:
                    failed = True
                    print(fmt_row([size, i + 1, f"{wall:.1f}", "-", "-", "-", "-", "FAILED", read], widths), flush=True)
                    print(err.rstrip(), file=sys.stderr, flush=True)
                    continue
                wall -= res["second_s"] or 0  # the fresh process's own check, not the second one after it
                py_mib = res["maxrss_kib"] / 1024
                run = Run(size, read, n, wall, res["check_s"], wall - res["check_s"], py_mib, res["valid"])
                run.second_s = res["second_s"]
                counts = res["counts"]
                if res["valid"] is not True:
                    failed = True
                    run.note = f"errors {res['errors']} warnings {res['warnings']}"
                if res["copy"] != READS[read]:
                    failed = True
                    run.note += f" READ {res['copy']}, NOT {READS[read]}"
                runs.append(run)
                cells = [size, i + 1, f"{wall:.1f}", f"{run.check_s:.1f}", f"{run.import_s:.1f}"]
                again = "-" if run.second_s is None else f"{run.second_s:.1f}"
                note = f"{read} {run.note}".strip()
                print(fmt_row([*cells, f"{run.maxrss_mib:.0f}", again, str(run.valid), note], widths), flush=True)
            if not args.no_plain and size > args.plain_max:
                print(f"plain checker: not run above {args.plain_max:,} operations", flush=True)
            elif not args.no_plain:
                wall, res, err = _child(PLAIN, [str(history)], args.timeout)
                if res is None:
                    failed = True
                    print(f"plain checker: FAILED after {wall:.1f} s", flush=True)
                    print(err.rstrip(), file=sys.stderr, flush=True)
                else:
                    res["wall_s"] = wall
                    mine = None if counts is None else {n: c for n, c in counts.items() if n in res["rules"]}
                    res["agrees"] = res["counts"] == mine
                    failed |= not res["agrees"]
                    plains[size] = res
                    print(
                        f"plain checker (bench/plain_checker.py): {wall:.1f} s, {res['maxrss_kib'] / 1024:.0f} MiB, "
                        + ("same counts as the checker" if res["agrees"] else f"DISAGREES: {res['counts']} vs {mine}"),
                        flush=True,
                    )
            if not args.no_oracle and size > args.oracle_max:
                print(
                    f"oracle: not run above {args.oracle_max:,} operations (it holds every event in memory, "
                    f"about 3.3 GB per 1M operations; this machine has {_memory_gib():.0f} GiB)",
                    flush=True,
                )
            elif not args.no_oracle:
                wall, res, err = _child(ORACLE, [str(history)], args.timeout)
                if res is None:
                    failed = True
                    print(f"oracle: FAILED after {wall:.1f} s", flush=True)
                    print(err.rstrip(), file=sys.stderr, flush=True)
                else:
                    res["wall_s"] = wall
                    res["agrees"] = counts is not None and res["counts"] == counts
                    failed |= not res["agrees"]
                    oracles[size] = res
                    print(
                        f"oracle (tests/checkers/oracle.py, for correctness): {wall:.1f} s, "
                        f"{res['maxrss_kib'] / 1024:.0f} MiB, "
                        + (
                            "same counts as the checker" if res["agrees"] else f"DISAGREES: {res['counts']} vs {counts}"
                        ),
                        flush=True,
                    )
        print(f"\nmedians over {args.runs} run(s) per size (report={'off' if args.no_report else 'on'})")
        print(fmt_row(["ops", "runs", "wall s", "check s", "start s", "py MiB", "second s", "verdict", ""], widths))
        groups = [(size, read) for size in sizes for read in reads]
        for size, read in groups:
            mine = [r for r in runs if r.size == size and r.history == read]
            if not mine:
                print(fmt_row([size, 0, "-", "-", "-", "-", "-", "FAILED", read], widths))
                continue
            med = [statistics.median(getattr(r, a) for r in mine) for a in ("wall_s", "check_s", "import_s")]
            rss = statistics.median(r.maxrss_mib for r in mine)
            seconds = [r.second_s for r in mine if r.second_s is not None]
            again = f"{statistics.median(seconds):.1f}" if seconds else "-"
            ok = "valid" if all(r.valid is True for r in mine) and len(mine) == args.runs else "NOT VALID"
            print(fmt_row([size, len(mine), *(f"{m:.1f}" for m in med), f"{rss:.0f}", again, ok, read], widths))
        print(f"\n{datetime.date.today()}, {os.cpu_count()} cores, medians of {args.runs} fresh processes:")
        cols = ["history", "check given", "before", "goal", "now (median wall)", "Python RSS", "plain checker", "ratio"]
        print("| " + " | ".join(cols) + " |")
        print("|---|---|---|---|---|---|---|---|")
        for size, read in groups:
            mine = [r for r in runs if r.size == size and r.history == read]
            label, before, goal = GOALS.get(size, (f"{size:,} operations", "-", None))
            wall = statistics.median(r.wall_s for r in mine) if mine else None
            rss = statistics.median(r.maxrss_mib for r in mine) if mine else None
            o = plains.get(size)
            if goal == BY_PLAIN:
                goal = PLAIN_RATIO_GOAL * o["wall_s"] if o is not None else None
            met = "" if goal is None or wall is None else (" (met)" if wall <= goal else " (NOT met)")
            plain_cell = f"{o['wall_s']:.1f} s, {o['maxrss_kib'] / 1024:,.0f} MiB" if o else "-"
            ratio = f"{wall / o['wall_s']:.2f}x" if o and wall else "-"
            print(
                f"| {label} | {read} | {before} | {'-' if goal is None else f'<= {goal:.0f} s'} "
                f"| {'-' if wall is None else f'{wall:.1f} s'}{met} | {'-' if rss is None else f'{rss:.0f} MiB'} "
                f"| {plain_cell} | {ratio} |"
            )
            seconds = [r.second_s for r in mine if r.second_s is not None]
            if size == 1_000 and seconds:
                second = statistics.median(seconds)
                print(
                    f"| a second check in the same process, 1k operations | {read} | - | <= {SECOND_GOAL_S} s "
                    f"| {second:.1f} s{' (met)' if second <= SECOND_GOAL_S else ' (NOT met)'} | - | - | - |"
                )
    finally:
        if args.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
