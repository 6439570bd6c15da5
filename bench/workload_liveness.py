"""Bench: does the workload keep its rate under faults? Liveness per version, workload and variant.

    .venv/bin/python bench/workload_liveness.py [--kafka 3.4.1,3.9.1,4.1.1,4.3.1] [--workloads queue,txn]
        [--variants safe,acks1,no-idempotence] [--runs 3] [--time-limit 60] [--interval 8] [--out FILE]
        [--config KEY=VALUE ...]

Each run is the README's chaos run, `kafka-chaos run --nemesis kill,pause,partition
--nemesis-interval 8 --time-limit 60` on the safe defaults (a fresh 3-node cluster), with the
variant's options on top (`--acks 1 --idempotence false`, `--idempotence false`; `librdkafka` and
`java` are the safe defaults through that client, `safe` is kafka-python's; `group`,
`group-librdkafka`, `group-java` read as one consumer group with churn; `fsync-tracked` runs
the safe defaults on fsync-tracked disks, the FUSE layer's cost; the txn workload runs
no acks1 or no-idempotence variant, since transactions need acks=all and idempotence). It reads the liveness that
the run measured from its history (summary.json, checkers/measures/liveness.py) and prints medians:
ok operations/s before the first fault, and the ratios in fault windows and in the fault-free
stretches after the first fault. Goals (issue 13): between faults >= 0.8, in faults >= 0.25.
Every run's liveness is appended to --out (JSON lines) as it finishes, so a long bench that is
stopped keeps what it measured; --store keeps the run directories (histories, to check and
plot later). `--from-store DIR` runs nothing: it measures again, with this checkout's
checkers/measures/liveness.py, every run directory a bench kept under DIR, and prints the same table,
then every fault window's rate split by whether its target was the active KRaft controller
(read from the nodes' server.log: the last "Completed transition to Leader" before the fault).
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from kafka_chaos.history.run_dir import CONFIG, RunDir

ROOT = Path(__file__).resolve().parent.parent

VARIANTS = {
    "safe": [],
    "acks1": ["--acks", "1", "--idempotence", "false"],
    "no-idempotence": ["--idempotence", "false"],
    # The safe defaults through the other clients (docs/clients.md); "safe" is kafka-python's.
    "librdkafka": ["--client", "librdkafka"],
    "java": ["--client", "java"],
    # Every consumer in one group, a member leaving and one joining every 7 s (docs/history.md).
    "group": ["--consumer", "subscribe", "--group-churn", "7"],
    "group-librdkafka": ["--consumer", "subscribe", "--group-churn", "7", "--client", "librdkafka"],
    "group-java": ["--consumer", "subscribe", "--group-churn", "7", "--client", "java"],
    # The safe defaults on fsync-tracked disks (harness/fsync_disk.py): the FUSE layer's cost.
    "fsync-tracked": ["--disk", "fsync-tracked"],
}


def one_run(version: str, workload: str, variant: str, seed: int, args: argparse.Namespace, store: Path) -> dict:
    cmd = [
        str(ROOT / ".venv/bin/kafka-chaos"),
        "run",
        "--kafka",
        version,
        "--workload",
        workload,
        "--nemesis",
        "kill,pause,partition",
        "--nemesis-interval",
        str(args.interval),
        "--time-limit",
        str(args.time_limit),
        "--seed",
        str(seed),
        "--store",
        str(store),
        "--name",
        f"{workload}-{variant}-{version}",
        "--json",
        "--quiet",
        *VARIANTS[variant],
        *[a for kv in args.config for a in ("--config", kv)],
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    workload_summary = json.loads(done.stdout)["workload"]
    return {"liveness": workload_summary["liveness"], "replaced_producers": workload_summary["replaced_producers"]}


def variant_of(workload: dict) -> str:
    client = workload.get("client", "kafka-python")
    if workload.get("consumer", "assign") != "assign":
        return "group" if client == "kafka-python" else f"group-{client}"
    if client != "kafka-python":
        return client if workload.get("acks") == "all" and workload.get("enable_idempotence", True) else f"{client}-?"
    if workload.get("acks") != "all":
        return "acks1" if workload.get("acks") == "1" else f"acks{workload.get('acks')}"
    return "safe" if workload.get("enable_idempotence", True) else "no-idempotence"


LEADER = re.compile(r"^\[([\d-]+ [\d:]+,\d+)\] INFO \[RaftManager (?:id|nodeId)=(\d+)\] Completed transition to Leader")


def controller_windows(run_dir: Path, events: list[dict], live: dict) -> list[tuple[str, float]]:
    """("controller" or "broker", ok ops/s in the window / before faults) for each held fault."""
    t0 = json.loads(RunDir(run_dir).config.read_text())["history_started_unix_ms"]
    leaders = []
    for log in run_dir.glob("cluster/*/logs/server.log"):
        for line in log.read_text(errors="replace").splitlines():
            m = LEADER.match(line)
            if m:
                at = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
                leaders.append((at.replace(tzinfo=datetime.timezone.utc).timestamp() - t0 / 1000, m.group(2)))
    leaders.sort()
    ok = [e["time"] / 1e9 for e in events if e["process"] != "nemesis" and e["type"] == "ok" and not e.get("phase")]
    faults = [e for e in events if e["process"] == "nemesis" and e["type"] == "ok"]
    out = []
    for i, e in enumerate(faults):
        # The first later operation that names this fault among those it heals (nemesis/faults.py).
        end = next((x["time"] / 1e9 for x in faults[i + 1 :] if e["f"] in x["value"].get("heals", [])), None)
        start = e["time"] / 1e9
        if end is None or end > live["workload_end_s"] or not live["ops_per_s"]["before_faults"]:
            continue
        active = [node for t, node in leaders if t <= start]
        target = (e["value"].get("nodes") or [""])[0]
        kind = "controller" if active and target.endswith(f"-{active[-1]}") else "broker"
        rate = sum(1 for t in ok if start <= t < end) / (end - start)
        out.append((kind, rate / live["ops_per_s"]["before_faults"]))
    return out


def measured_again(store: Path) -> list[dict]:
    """The liveness of every run directory under `store`, measured now from its history."""
    from kafka_chaos.checkers.measures.liveness import count_events, measure
    from kafka_chaos.history.file import read_history

    runs = []
    for config_path in sorted(store.glob(f"*/2*/{CONFIG}")):
        files = RunDir(config_path.parent)
        config = json.loads(files.config.read_text())
        summary = json.loads(files.summary.read_text()) if files.summary.exists() else {}
        if not summary.get("complete"):
            continue  # a run that crashed or was stopped: its history ends early
        events = list(read_history(files.history))
        live = measure(count_events(events))
        runs.append(
            {
                "windows": controller_windows(config_path.parent, events, live),
                "version": config["kafka_version"],
                "workload": config["workload"]["workload"],
                "variant": variant_of(config["workload"]),
                "seed": config.get("seed"),
                "liveness": live,
                "replaced_producers": summary.get("replaced_producers", {}),
            }
        )
    return runs


def median(values: list[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def show(value: float | None, pct: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.0%}" if pct else f"{value:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default="3.4.1,3.9.1,4.1.1,4.3.1")
    parser.add_argument("--workloads", default="queue,txn")
    parser.add_argument("--variants", default="safe,acks1,no-idempotence")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60)
    parser.add_argument("--interval", type=float, default=8)
    parser.add_argument(
        "--config", action="append", default=[], metavar="KEY=VALUE", help="broker setting for every run (repeatable)"
    )
    parser.add_argument("--out", type=Path, default=None, help="JSON lines, one per run (appended)")
    parser.add_argument("--store", type=Path, default=None, help="keep the run directories here (default: removed)")
    parser.add_argument("--from-store", type=Path, default=None, help="measure a kept store again; run nothing")
    args = parser.parse_args()
    unknown = sorted(set(args.variants.split(",")) - set(VARIANTS))
    if unknown:
        sys.exit(f"bench: unknown variant(s) {', '.join(unknown)}: expected some of {', '.join(VARIANTS)}")
    cells = [
        (v, w, var)
        for w in args.workloads.split(",")
        for var in args.variants.split(",")
        if w == "queue" or var not in ("acks1", "no-idempotence")
        for v in args.kafka.split(",")
    ]
    if args.from_store:
        done = measured_again(args.from_store)
        cells = sorted({(r["version"], r["workload"], r["variant"]) for r in done}, key=lambda c: (c[1], c[2], c[0]))
        table(
            [summarize(c, [r for r in done if (r["version"], r["workload"], r["variant"]) == c]) for c in cells], args
        )
        print("\nfault windows by target: the active KRaft controller, or a broker that is not it")
        print(
            "| workload | variant | on the controller: windows, median ok ops/s vs before "
            "| on another broker: windows, median |"
        )
        print("|---|---|---|---|")
        for w, var in sorted({(c[1], c[2]) for c in cells}):
            split: dict[str, list[float]] = {"controller": [], "broker": []}
            for r in done:
                if (r["workload"], r["variant"]) == (w, var):
                    for kind, ratio in r["windows"]:
                        split[kind].append(ratio)
            c, b = split["controller"], split["broker"]
            print(f"| {w} | {var} | {len(c)}, {show(median(c), True)} | {len(b)}, {show(median(b), True)} |")
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="liveness-bench-") as tmp:
        store = args.store or Path(tmp)
        for version, workload, variant in cells:
            runs = []
            for i in range(args.runs):
                r = one_run(version, workload, variant, i + 1, args, store)
                r.update(version=version, workload=workload, variant=variant, seed=i + 1)
                runs.append(r)
                if args.out:
                    with args.out.open("a") as f:
                        f.write(json.dumps(r) + "\n")
                live = r.get("liveness")
                ratios = live["ratios"]["ops_per_s"] if live else {}
                print(
                    f"  {version} {workload} {variant} run {i + 1}: "
                    + (
                        f"{show(live['ops_per_s']['before_faults'])} ok ops/s before, "
                        f"in {show(ratios['in_faults'], True)}, between {show(ratios['between_faults'], True)}"
                        if live
                        else r["error"]
                    ),
                    file=sys.stderr,
                    flush=True,
                )
            rows.append(summarize((version, workload, variant), runs))
    table(rows, args)


def summarize(cell: tuple[str, str, str], runs: list[dict]) -> tuple:
    ok = [r["liveness"] for r in runs if "liveness" in r]
    return (
        *cell,
        len(ok),
        len(runs),
        median([x["ops_per_s"]["before_faults"] for x in ok]),
        median([x["ops_per_s"]["in_faults"] for x in ok]),
        median([x["ops_per_s"]["between_faults"] for x in ok]),
        median([x["ratios"]["ops_per_s"]["in_faults"] for x in ok]),
        median([x["ratios"]["ops_per_s"]["between_faults"] for x in ok]),
        median([x["ratios"]["writes_per_s"]["in_faults"] for x in ok]),
        median([x["ratios"]["writes_per_s"]["between_faults"] for x in ok]),
        sum(1 for x in ok if x["warning"]),
        sum(sum(r.get("replaced_producers", {}).values()) for r in runs),
    )


def table(rows: list[tuple], args: argparse.Namespace) -> None:
    print(
        f"\nkill,pause,partition every {args.interval:g} s, {args.time_limit:g} s runs, medians of {args.runs}; "
        "ratios against the rate before the first fault"
    )
    print(
        "| Kafka | workload | variant | runs | ok ops/s before / in / between faults | ops in faults "
        "| ops between faults | writes in faults | writes between faults | stalled "
        "| producers replaced |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for v, w, var, ok, n, before, in_abs, between_abs, in_f, between, w_in, w_between, stalled, replaced in rows:
        print(
            f"| {v} | {w} | {var} | {ok}/{n} | {show(before)} / {show(in_abs)} / {show(between_abs)} "
            f"| {show(in_f, True)} | {show(between, True)} | {show(w_in, True)} | {show(w_between, True)} "
            f"| {stalled} | {replaced} |"
        )


if __name__ == "__main__":
    main()
