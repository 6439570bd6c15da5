"""Bench: for how much of a group run do its members hold the keys, per client and group protocol?

    .venv/bin/python bench/group_coverage.py [--kafka 4.3.1] [--cells kafka-python/classic,java/consumer,...]
        [--faults] [--runs 3] [--time-limit 60] [--interval 8] [--out FILE] [--store DIR]

Each run is `kafka-chaos run --consumer subscribe --group-churn 7 --time-limit 60` on a fresh
3-node cluster through the cell's client and group protocol (`--group-protocol`), with no faults,
or with `--faults` the safe configuration under kill, pause and partition of random nodes and of
the group's coordinator (`--nemesis kill,pause,partition,kill@group-coordinator,...
--nemesis-interval 8`), checked (`--check`). It prints medians per cell: the run's group coverage
(checkers/measures/group_coverage.py: every key held, some key held, the longest stretch with a key
unheld, member polls that returned records), ok operations/s before the first fault, the share of
the members' commits that were ok, and with faults the verdicts, the liveness ratios in and
between faults, and the share of the time in fault windows and between them in which every key
was held (the same windows as the liveness, checkers/measures/liveness.py). Every run is appended to --out
(JSON lines) as it finishes.

The goals live here, not in tests, because they depend on the machine's speed (the constants
below; the last column names the goals a cell's medians missed): no faults, every key held for
70% of the workload or more with the classic protocol and 90% with KIP-848's (issue 38), and 90%
of the members' commits ok (a rebalance refuses the commits made during it); with faults, ok
operations between faults at a quarter of their rate before the first one or more (every healed
coordinator fault makes the group rejoin).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from kafka_chaos.checkers.measures.group_coverage import count_events as coverage_of
from kafka_chaos.checkers.measures.group_coverage import every_key_share
from kafka_chaos.checkers.measures.liveness import count_events as liveness_counts
from kafka_chaos.checkers.measures.liveness import stretches
from kafka_chaos.history.file import read_history
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.run_dir import RunDir

ROOT = Path(__file__).resolve().parent.parent
CELLS = ("kafka-python/classic", "java/classic", "librdkafka/classic", "java/consumer", "librdkafka/consumer")
FAULTS = ",".join(f"{f}{t}" for t in ("", "@group-coordinator") for f in ("kill", "pause", "partition"))
#: Every key held by some member, the share of the workload, no faults, by group protocol.
HELD_GOALS = {"classic": 0.7, "consumer": 0.9}
#: The share of the members' commits in the workload phase that are ok, no faults.
COMMITS_OK_GOAL = 0.9
#: Ok operations/s between faults against before the first fault, with faults.
BETWEEN_FAULTS_GOAL = 0.25


def one_run(cell: str, seed: int, args: argparse.Namespace, store: Path) -> dict:
    client, protocol = cell.split("/")
    cmd = [str(ROOT / ".venv/bin/kafka-chaos"), "run", "--kafka", args.kafka, "--consumer", "subscribe"]
    cmd += ["--group-churn", "7", "--time-limit", str(args.time_limit), "--client", client]
    cmd += ["--group-protocol", protocol, "--seed", str(seed), "--store", str(store), "--json", "--quiet"]
    cmd += ["--name", f"{client}-{protocol}-{'faults' if args.faults else 'quiet'}"]
    if args.faults:
        cmd += ["--nemesis", FAULTS, "--nemesis-interval", str(args.interval), "--check"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1, 3):  # a check's verdict: valid, invalid, unknown
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    printed = json.loads(done.stdout)
    run_dir = Path(printed["run_dir"])
    files = RunDir(run_dir)
    events = list(read_history(files.history))
    workload = printed["workload"]
    counts = workload["counts"]
    commits = sum(n for k, n in counts.items() if k.startswith("commit:"))
    return {
        "coverage": workload["group_coverage"],
        "commits_ok": counts.get("commit:ok", 0) / commits if commits else None,
        "liveness": workload["liveness"],
        "valid": printed.get("check", {}).get("valid"),
        "held": held_in_and_between_faults(events, RunConfig.load(run_dir).keys or []),
        "run_dir": str(run_dir),
    }


def held_in_and_between_faults(events: list[dict], keys: list[str]) -> dict[str, float | None]:
    """The share of the time in fault windows, and between them, in which every key was held (the
    liveness's stretches, checkers/measures/liveness.py)."""
    coverage = coverage_of(events, keys, spans=True)
    spans = stretches(liveness_counts(events))
    if not spans["in_faults"] or coverage is None:
        return {"in_faults": None, "between_faults": None}
    return {k: every_key_share(coverage["spans"], keys, spans[k]) for k in ("in_faults", "between_faults")}


def median(values: list[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def row(cell: str, runs: list[dict], faults: bool) -> str:
    ok = [r for r in runs if "error" not in r]
    cov = lambda k: median([r["coverage"][k] for r in ok])  # noqa: E731
    live = lambda k: median([r["liveness"]["ratios"]["ops_per_s"][k] for r in ok])  # noqa: E731
    cells = [
        cell,
        f"{len(ok)}/{len(runs)}",
        pct(cov("every_key_share")),
        pct(cov("some_key_share")),
        f"{cov('longest_unheld_s'):.1f}" if ok else "-",
        f"{cov('polls_with_records'):.0f}" if ok else "-",
        f"{median([r['liveness']['ops_per_s']['before_faults'] for r in ok]) or 0:.0f}",
    ]
    commits_ok = median([r.get("commits_ok") for r in ok])
    cells.append(pct(commits_ok))
    if faults:
        valid = sum(1 for r in ok if r["valid"] is True)
        cells += [f"{valid}/{len(ok)}", pct(live("in_faults")), pct(live("between_faults"))]
        cells += [pct(median([r["held"][k] for r in ok])) for k in ("in_faults", "between_faults")]
        missed = missed_goals(cell, None, None, live("between_faults"))
    else:
        missed = missed_goals(cell, cov("every_key_share") if ok else None, commits_ok, None)
    cells.append(", ".join(missed) or ("met" if ok else "-"))
    return "| " + " | ".join(cells) + " |"


def missed_goals(cell: str, held: float | None, commits_ok: float | None, between: float | None) -> list[str]:
    """The goals a cell's medians missed (the module's constants); None: not measured."""
    protocol = cell.split("/")[1]
    missed = []
    if held is not None and held < HELD_GOALS[protocol]:
        missed.append(f"every key held < {HELD_GOALS[protocol]:.0%}")
    if commits_ok is not None and commits_ok < COMMITS_OK_GOAL:
        missed.append(f"commits ok < {COMMITS_OK_GOAL:.0%}")
    if between is not None and between < BETWEEN_FAULTS_GOAL:
        missed.append(f"ops between faults < {BETWEEN_FAULTS_GOAL:.0%}")
    return missed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default="4.3.1")
    parser.add_argument("--cells", default=",".join(CELLS))
    parser.add_argument("--faults", action="store_true")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60)
    parser.add_argument("--interval", type=float, default=8)
    parser.add_argument("--out", type=Path, default=None, help="JSON lines, one per run (appended)")
    parser.add_argument(
        "--store", type=Path, default=None, help="keep the run directories here (default: a new temporary directory)"
    )
    args = parser.parse_args()
    cells = args.cells.split(",")
    unknown = sorted(set(cells) - set(CELLS))
    if unknown:
        sys.exit(f"bench: unknown cell(s) {', '.join(unknown)}: expected some of {', '.join(CELLS)}")
    store = args.store or Path(tempfile.mkdtemp(prefix="group-coverage-"))
    results: dict[str, list[dict]] = {c: [] for c in cells}
    for i in range(args.runs):  # round-robin: each cell's runs spread over the bench's hour
        for cell in cells:
            r = one_run(cell, 1000 + i, args, store) | {"cell": cell, "faults": args.faults}
            results[cell].append(r)
            if args.out:
                with args.out.open("a") as f:
                    f.write(json.dumps(r) + "\n")
            print(f"{cell} run {i + 1}: {r.get('error') or pct(r['coverage']['every_key_share'])}", file=sys.stderr)
    head = ["client/protocol", "runs", "every key held", "some key", "longest unheld s", "polls with records"]
    head += ["ok ops/s", "commits ok"]
    if args.faults:
        head += ["valid", "ops in faults", "ops between", "every key held in faults", "between faults"]
    head += ["goals missed"]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for cell in cells:
        print(row(cell, results[cell], args.faults))


if __name__ == "__main__":
    main()
