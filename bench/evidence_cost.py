"""Bench: what the control-plane evidence, the host stall probe included, costs a 60 s run.

    .venv/bin/python bench/evidence_cost.py [--kafka V] [--runs 5] [--time-limit 60] [--rate 300]
        [--cgroup PATH] [--store DIR] [--out FILE]

Issue 60's goal: the evidence costs <= 5% of a 60 s run's CPU and wall time, the median of 5 runs
with it against 5 without. The runs alternate (with, without, without, with, ...), each `kafka-chaos run
--time-limit 60 --rate 300` in a fresh process, `--no-control-plane` for the runs without; the
evidence is everything that flag turns off: the samplers (the views' process, DescribeQuorum's
thread), the host stall probe's process, and the metadata logs' decoding at the end
(harness/control_plane.py, harness/stall_probe.py, harness/metadata_log.py).

Per run: the wall time of the process; its CPU, with every process it reaped (os.wait4: the
probe, the views' process and the clients' count, since the run waits for each); and the Docker
containers' (the nodes' and the log-dump container's), the change in the usage of the cgroup
that holds them all (`--cgroup`, found on cgroup v1 and v2 when not given). That cgroup holds every
container of the machine: run this alone. A run with the evidence also shows what its probe
measured (nodes.json's `host_stall`), so the table says that the probe ran.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.run_dir import RunDir

#: Where the Docker containers' cgroup usually is: cgroup v1 (cpuacct.usage, ns) and v2
#: (cpu.stat's usage_usec) with the cgroupfs driver, then v2 with systemd's (system.slice also
#: holds the machine's services).
CGROUPS = (
    "/sys/fs/cgroup/cpuacct/docker/cpuacct.usage",
    "/sys/fs/cgroup/cpu,cpuacct/docker/cpuacct.usage",
    "/sys/fs/cgroup/docker/cpu.stat",
    "/sys/fs/cgroup/system.slice/cpu.stat",
)


def cgroup_ns(path: Path | None) -> int | None:
    """The cgroup's CPU usage so far (ns), from cpuacct.usage or cpu.stat; None when unreadable."""
    if path is None:
        return None
    try:
        text = path.read_text()
    except OSError:
        return None
    if path.name == "cpu.stat":
        usec = dict(line.split() for line in text.splitlines() if line.strip()).get("usage_usec")
        return None if usec is None else int(usec) * 1000
    return int(text.strip())


def find_cgroup(given: str | None) -> Path | None:
    for candidate in [given] if given else CGROUPS:
        if cgroup_ns(Path(candidate)) is not None:
            return Path(candidate)
    return None


def one_run(args: argparse.Namespace, evidence: bool, n: int, store: Path, cgroup: Path | None) -> dict:
    name = f"cost-{'with' if evidence else 'without'}-{n}"
    cmd = [sys.executable, "-m", "kafka_chaos.frontends.cli", "run", "--kafka", args.kafka]
    cmd += ["--time-limit", str(args.time_limit), "--rate", str(args.rate), "--seed", str(n)]
    cmd += ["--store", str(store), "--name", name, "--quiet"]
    cmd += [] if evidence else ["--no-control-plane"]
    containers = cgroup_ns(cgroup)
    started = os.times().elapsed
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    errors = process.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(process.pid, 0)  # its CPU with every process it reaped
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = os.times().elapsed - started
    after = cgroup_ns(cgroup)
    row = {
        "evidence": evidence,
        "exit": process.returncode,
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "containers_cpu_s": None if containers is None or after is None else round((after - containers) / 1e9, 2),
        "run_dir": str(store / name / "latest"),
    }
    if process.returncode not in (0, 1):  # 1: the run's verdict, not a failure to run
        row["error"] = errors.strip().splitlines()[-1:]
    nodes = RunDir(store / name / "latest").control_plane_nodes
    if evidence:
        try:
            row["host_stall"] = json.loads(nodes.read_text()).get("host_stall")
        except (OSError, ValueError):
            row["host_stall"] = None
    return row


def _median(rows: list[dict], key: str) -> float | None:
    xs = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(xs) if xs else None


def table(rows: list[dict]) -> None:
    print("| runs | CPU, process (s) | CPU, containers (s) | CPU, all (s) | wall (s) | host stall (s) |")
    print("|---|---|---|---|---|---|")
    medians = {}
    for evidence in (True, False):
        mine = [r for r in rows if r["evidence"] == evidence and "error" not in r]
        for r in mine:
            r["all_cpu_s"] = round(r["cpu_s"] + (r["containers_cpu_s"] or 0), 2)
        medians[evidence] = {k: _median(mine, k) for k in ("cpu_s", "containers_cpu_s", "all_cpu_s", "wall_s")}
        stalls = [(r.get("host_stall") or {}).get("stall_s") for r in mine if evidence]
        m = medians[evidence]
        print(
            f"| {len(mine)} {'with' if evidence else 'without'} | {m['cpu_s']} | {m['containers_cpu_s']}"
            f" | {m['all_cpu_s']} | {m['wall_s']} | {', '.join('-' if s is None else str(s) for s in stalls) or '-'} |"
        )
    for key, what in (("all_cpu_s", "CPU"), ("wall_s", "wall time")):
        with_, without = medians[True][key], medians[False][key]
        if with_ is not None and without:
            cost = 100 * (with_ - without) / without
            print(f"evidence's cost, {what}: {cost:+.1f}% (goal <= 5%: {'met' if cost <= 5 else 'NOT met'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default=DEFAULT_VERSION)
    parser.add_argument("--runs", type=int, default=5, help="runs with and as many without")
    parser.add_argument("--time-limit", type=float, default=60)
    parser.add_argument("--rate", type=float, default=300)
    parser.add_argument("--cgroup", help="the containers' cgroup usage file (cpuacct.usage or cpu.stat)")
    parser.add_argument("--store", type=Path, help="where run directories go (default: a temporary folder)")
    parser.add_argument("--out", type=Path, help="append each run's row (JSON lines)")
    args = parser.parse_args()
    cgroup = find_cgroup(args.cgroup)
    print(f"containers' CPU from {cgroup}" if cgroup else "containers' CPU: no cgroup found (process CPU only)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or Path(tmp)
        for n in range(args.runs):
            for evidence in (True, False) if n % 2 == 0 else (False, True):
                row = one_run(args, evidence, n, store, cgroup)
                print(json.dumps(row), flush=True)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(json.dumps(row) + "\n")
                rows.append(row)
        table(rows)


if __name__ == "__main__":
    main()
