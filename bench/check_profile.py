"""Bench: where a check's time goes, step by step, on check_scale's generated histories.

    .venv/bin/python bench/check_profile.py [--sizes 1000,1000000,10000000] [--runs 3] [--dir D] [--keep]

For each size a consistent history is generated as bench/check_scale.py does, and checked from its
JSON (a columnar copy beside it is hidden meanwhile). Then, `--runs` times, two fresh Python
subprocesses (each its own JVM):
- **steps**: the checker's pipeline taken apart, each step forced by an action of its own, in the
  order the check runs them. A step that re-reads what an earlier one computed (Spark recomputes
  an uncached table) is charged only its difference: "pair" is its action's time less "parse".
  The steps: the JVM's start (`spark.session`), the JSON parse into events, the pairing window by
  process, the flat micro-op table cached, the run's facts, the shuffle by key with Arrow to a
  Python worker and back doing nothing (`applyInPandas` of an empty answer), the same building
  each key's view (checkers/data_plane/version_order.py), and the same running every rule (the
  check's `all_instances`). Beside each step: the CPU seconds of the JVM and of the Python workers
  in it (from /proc).
- **whole**: `check_history` as `kafka-chaos check` runs it, with the time of each of its
  progress messages: the phases as the check itself names them; "the rest" is the whole less the
  steps above (the small queries, cycles, the report).
Then the medians per size as one Markdown table (docs/measurements.md takes it as it is), and,
for the largest size profiled in the driver (`--rules-max`, 1M by default), each rule module's
own pandas time over every key, run in this process on the collected micro-ops.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

from check_scale import _child, generate, json_only  # bench/, beside this script

#: Seconds a profile's child process may take (a 10M history's steps take about ten minutes).
TIMEOUT_S = 3600

STEPS_CHILD = r"""
import json, os, sys, time
from pathlib import Path

def tree_cpu(root):
    # CPU seconds (user+system, with reaped children) of root and every descendant, by /proc.
    tick = os.sysconf("SC_CLK_TCK")
    kids, stat = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            text = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        rest = text[text.rindex(")") + 2:].split()
        ppid = int(rest[1])
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        kids.setdefault(ppid, []).append(int(pid))
        stat[int(pid)] = (sum(int(x) for x in rest[11:15]) / tick, cmd)
    jvm = python = 0.0
    todo = list(kids.get(root, []))
    while todo:
        pid = todo.pop()
        cpu, cmd = stat[pid]
        exe = os.path.basename(cmd.split(" ", 1)[0])
        if exe == "java":
            jvm += cpu
        elif exe.startswith("python"):
            python += cpu
        todo.extend(kids.get(pid, []))
    return jvm, python

steps = []
last = [time.perf_counter(), *tree_cpu(os.getpid())]

def step(name, less=0.0):
    # `less`: what this step's action recomputed of an earlier step (Spark recomputes an uncached
    # table), taken off its wall time; `action` keeps the action's own time.
    now = time.perf_counter()
    jvm, py = tree_cpu(os.getpid())
    steps.append({
        "step": name, "wall": now - last[0] - less, "action": now - last[0],
        "jvm_cpu": jvm - last[1], "py_cpu": py - last[2],
    })
    last[:] = [time.perf_counter(), *tree_cpu(os.getpid())]
    return now - last[0]

path = Path(sys.argv[1])
size = path.stat().st_size
t0 = time.perf_counter()
import pandas as pd
from pyspark import StorageLevel
from kafka_chaos.checkers import check, load, parts, spark, tables
from kafka_chaos.checkers.anomalies import INSTANCES, INSTANCE_COLUMNS
from kafka_chaos.checkers.data_plane import version_order
from kafka_chaos.checkers.report import series
step("imports")
sp = spark.session(None, size)
spark.tune(sp, size)
step("JVM start")
loaded = load.load(sp, load.resolve(path))
step("precheck, schema")
t = time.perf_counter()
loaded.events.selectExpr("sum(hash(index, time, process, type, f, to_json(value), error, phase, bad))").collect()
parse = time.perf_counter() - t
step("parse JSON into events")
paired = tables.pair(loaded.events)
t = time.perf_counter()
paired.selectExpr("sum(hash(op, invoke, n_assign, mode, nvalue))").collect()
pairing = time.perf_counter() - t
step("pair by process (window)", parse)
rows = tables.flat(paired).persist(StorageLevel.MEMORY_AND_DISK)
rows.count()
step("flat micro-ops, cached", pairing)
fl = tables.split(rows)
first = parts.collect({"facts": check.facts_query(fl.ops), "evidenced": tables.evidenced_ops(fl.micro)})
evidenced = [r["op"] for r in first["evidenced"]]
end_ns = first["facts"][0]["end"] or 0
step("run facts, evidenced")
empty = pd.DataFrame(columns=list(INSTANCE_COLUMNS))

def nothing(rows):
    return empty

fl.micro.groupBy("key").applyInPandas(nothing, INSTANCES).count()
shuffled = step("shuffle by key, Arrow to Python and back")
marked = frozenset(evidenced)

def views(rows):
    version_order.build(rows.assign(evidenced=rows["op"].isin(marked)), None)
    return empty

fl.micro.groupBy("key").applyInPandas(views, INSTANCES).count()
step("key views (version orders)", shuffled)
found = check.all_instances(fl.micro, evidenced, series.bucket_width_ns(end_ns)).persist(StorageLevel.MEMORY_AND_DISK)
found.count()
step("every per-key rule", shuffled)
print("BENCH " + json.dumps({"steps": steps, "total": time.perf_counter() - t0}))
"""

WHOLE_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
marks = []
from kafka_chaos.checkers.check import check_history
marks.append(("imports", time.perf_counter() - t0))
def say(message):
    marks.append((message.split(" (")[0].split(" /")[0], time.perf_counter() - t0))
r = check_history(sys.argv[1], sys.argv[2], progress=say)
marks.append(("end", time.perf_counter() - t0))
print("BENCH " + json.dumps({"marks": marks, "valid": r.valid}))
"""


def child(code: str, *args: str) -> dict:
    wall, res, err = _child(code, list(args), TIMEOUT_S)
    if res is None:
        raise SystemExit(f"profile child failed after {wall:.1f} s: {err[-2000:]}")
    return res


def phases(marks: list[list]) -> dict[str, float]:
    """The whole check's phases: each progress message's time to the next."""
    out: dict[str, float] = {}
    for (name, at), (_, nxt) in zip(marks, marks[1:], strict=False):
        out[name] = out.get(name, 0.0) + nxt - at
    out["total"] = marks[-1][1]
    return out


def rule_times(path: Path) -> list[tuple[str, float]]:
    """Each per-key rule module's pandas time over every key, in this process: the micro-ops
    collected once from Spark, then each module timed alone on every key's view."""
    import time

    from kafka_chaos.checkers import check, load, parts, spark, tables
    from kafka_chaos.checkers.data_plane import per_key, tallies, version_order
    from kafka_chaos.checkers.report import series

    sp = spark.session(None, path.stat().st_size)
    spark.tune(sp, path.stat().st_size)
    rows = tables.flat(tables.pair(load.load(sp, load.resolve(path)).events))
    fl = tables.split(rows)
    first = parts.collect({"facts": check.facts_query(fl.ops), "evidenced": tables.evidenced_ops(fl.micro)})
    marked = frozenset(r["op"] for r in first["evidenced"])
    width = series.bucket_width_ns(first["facts"][0]["end"] or 0)
    micro = fl.micro.toPandas()
    keys = [g for _, g in micro.groupby("key", sort=False)]
    out = []
    t = time.perf_counter()
    built = [version_order.build(g.assign(evidenced=g["op"].isin(marked)), None) for g in keys]
    out.append(("version_order.build (the key's view)", time.perf_counter() - t))
    for rule in per_key.RULES:
        t = time.perf_counter()
        for view in built:
            rule.rules(view)
        out.append((rule.__name__.rsplit(".", 1)[-1] + ".rules", time.perf_counter() - t))
    t = time.perf_counter()
    for view in built:
        tallies.key_tallies(view, width)
    out.append(("tallies.key_tallies", time.perf_counter() - t))
    sp.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,1000000,10000000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument(
        "--rules-max", type=int, default=1_000_000, help="the largest size whose rules are timed one by one"
    )
    args = ap.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="kafka-chaos-profile-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        for n in [int(s) for s in args.sizes.split(",")]:
            path = base / f"history-{n}.jsonl"
            if not path.exists():
                generate(path, n)
            steps_runs, whole_runs = [], []
            for i in range(args.runs):
                with json_only(path):  # the pipeline from the JSON, as the steps take it
                    steps_runs.append(child(STEPS_CHILD, str(path)))
                    whole_runs.append(phases(child(WHOLE_CHILD, str(path), str(base / f"out-{n}-{i}"))["marks"]))
                took = f"steps {steps_runs[-1]['total']:.1f} s, whole {whole_runs[-1]['total']:.1f} s"
                print(f"{n:>10,} ops run {i + 1}: {took}", flush=True)
            report(n, path, steps_runs, whole_runs)
            if n <= args.rules_max:
                print(f"\nEach per-key rule's pandas time over every key, one process ({n:,} operations):\n")
                print("| rule module | s |\n|---|---:|")
                for name, s in rule_times(path):
                    print(f"| {name} | {s:.2f} |")
            print(flush=True)
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(base, ignore_errors=True)


def report(n: int, path: Path, steps_runs: list[dict], whole_runs: list[dict[str, float]]) -> None:
    med = statistics.median
    names = [s["step"] for s in steps_runs[0]["steps"]]
    total = med(w["total"] for w in whole_runs)
    print(f"\n{n:,} operations ({path.stat().st_size / 1e6:.1f} MB), medians of {len(steps_runs)} fresh processes:\n")
    print(
        "| step | wall s | its action's wall s | JVM CPU s | Python workers CPU s | share of the whole check |"
        "\n|---|---:|---:|---:|---:|---:|"
    )
    accounted = 0.0
    for name in names:
        wall = med(r["steps"][names.index(name)]["wall"] for r in steps_runs)
        jvm = med(r["steps"][names.index(name)]["jvm_cpu"] for r in steps_runs)
        py = med(r["steps"][names.index(name)]["py_cpu"] for r in steps_runs)
        action = med(r["steps"][names.index(name)]["action"] for r in steps_runs)
        accounted += wall
        print(f"| {name} | {wall:.2f} | {action:.2f} | {jvm:.2f} | {py:.2f} | {wall / total:.0%} |")
    rest = total - accounted
    print(f"| the rest (small queries, cycles, report: whole less the above) | {rest:.2f} | | | | {rest / total:.0%} |")
    print(f"| **whole check_history** | **{total:.2f}** | | | |")
    print("\nThe whole check's own phases (its progress messages), medians:\n")
    print("| phase | s |\n|---|---:|")
    for name in whole_runs[0]:
        if name != "total":
            print(f"| {name} | {med(w.get(name, 0.0) for w in whole_runs):.2f} |")


if __name__ == "__main__":
    main()
