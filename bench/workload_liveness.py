"""Bench: does the workload keep its rate under faults? Liveness per version, workload and variant.

    .venv/bin/python bench/workload_liveness.py [--kafka 3.4.1,3.9.1,4.1.1,4.3.1] [--workloads queue,txn]
        [--variants safe,acks1,no-idempotence] [--runs 3] [--time-limit 60] [--interval 8] [--out FILE]

Each run is the README's chaos run, `kafka-chaos run --nemesis kill,pause,partition
--nemesis-interval 8 --time-limit 60` on the safe defaults (a fresh 3-node cluster), with the
variant's options on top (`--acks 1`, `--idempotence false`; the txn workload runs only the
safe variant, since transactions need acks=all and idempotence). It reads the liveness that
the run measured from its history (summary.json, checkers/liveness.py) and prints medians:
ok operations/s before the first fault, and the ratios in fault windows and in the fault-free
stretches after the first fault. Goals (issue 13): between faults >= 0.8, in faults >= 0.25.
Every run's liveness is appended to --out (JSON lines) as it finishes, so a long bench that is
stopped keeps what it measured; --store keeps the run directories (histories, to check and
plot later).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = {"safe": [], "acks1": ["--acks", "1"], "no-idempotence": ["--idempotence", "false"]}


def one_run(version: str, workload: str, variant: str, seed: int, args: argparse.Namespace, store: Path) -> dict:
    cmd = [
        str(ROOT / ".venv/bin/kafka-chaos"), "run", "--kafka", version, "--workload", workload,
        "--nemesis", "kill,pause,partition", "--nemesis-interval", str(args.interval),
        "--time-limit", str(args.time_limit), "--seed", str(seed), "--store", str(store),
        "--name", f"{workload}-{variant}-{version}", "--json", "--quiet", *VARIANTS[variant],
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    workload_summary = json.loads(done.stdout)["workload"]
    return {"liveness": workload_summary["liveness"], "replaced_producers": workload_summary["replaced_producers"]}


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
    parser.add_argument("--out", type=Path, default=None, help="JSON lines, one per run (appended)")
    parser.add_argument("--store", type=Path, default=None, help="keep the run directories here (default: removed)")
    args = parser.parse_args()
    unknown = sorted(set(args.variants.split(",")) - set(VARIANTS))
    if unknown:
        sys.exit(f"bench: unknown variant(s) {', '.join(unknown)}: expected some of {', '.join(VARIANTS)}")
    cells = [
        (v, w, var)
        for w in args.workloads.split(",")
        for var in args.variants.split(",")
        if w == "queue" or var == "safe"
        for v in args.kafka.split(",")
    ]
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
            ok = [r["liveness"] for r in runs if "liveness" in r]
            rows.append(
                (
                    version,
                    workload,
                    variant,
                    len(ok),
                    len(runs),
                    median([x["ops_per_s"]["before_faults"] for x in ok]),
                    median([x["ratios"]["ops_per_s"]["in_faults"] for x in ok]),
                    median([x["ratios"]["ops_per_s"]["between_faults"] for x in ok]),
                    median([x["ratios"]["writes_per_s"]["in_faults"] for x in ok]),
                    median([x["ratios"]["writes_per_s"]["between_faults"] for x in ok]),
                    sum(1 for x in ok if x["warning"]),
                    sum(sum(r.get("replaced_producers", {}).values()) for r in runs),
                )  # fmt: skip
            )
    print(
        f"\nkill,pause,partition every {args.interval:g} s, {args.time_limit:g} s runs, medians of {args.runs}; "
        "ratios against the rate before the first fault"
    )
    print("| Kafka | workload | variant | runs | ok ops/s before | ops in faults | ops between faults "
          "| writes in faults | writes between faults | stalled | producers replaced |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for v, w, var, ok, n, before, in_f, between, w_in, w_between, stalled, replaced in rows:
        print(
            f"| {v} | {w} | {var} | {ok}/{n} | {show(before)} | {show(in_f, True)} | {show(between, True)} "
            f"| {show(w_in, True)} | {show(w_between, True)} | {stalled} | {replaced} |"
        )


if __name__ == "__main__":
    main()
