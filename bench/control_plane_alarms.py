"""Bench: does the control-plane checker stay quiet on Kafka versions where its rules hold, and
does an undirected mix find what the scripts find where they do not?

    .venv/bin/python bench/control_plane_alarms.py [--kafka 3.9.1,4.3.1] [--shapes dedicated,combined]
        [--runs 5] [--time-limit 60] [--interval 6] [--nemesis LIST] [--targets any|brokers|controllers]
        [--out FILE] [--store DIR]

Each run is `kafka-chaos run --nemesis kill,pause,partition,kill@controller,pause@controller
--nemesis-interval 6 --time-limit 60 --check` on the safe defaults: faults on random nodes
(controllers among them) and on the active controller, on a fresh cluster of three dedicated
controllers and three brokers (`dedicated`) or of three combined nodes (`combined`). Issue 36
asks for zero control-plane errors in 10 runs of 60 s per version on those. It prints, per
version and shape: the runs, their verdicts, the control-plane errors by name, the rules not
checked, the median times from a fault to its broker's fencing and from a fault on the active
controller to the next quorum leader, the largest metadata lag, and the liveness ratios (how much
traffic each verdict stood on), and for each control-plane error the seconds into the run at
which it could first be told (the first example's start plus its rule's bound). Every run's row
is appended to --out (JSON lines) as it finishes.

Issue 37's undirected chaos: `--kafka 3.6.2,4.3.1 --shapes dedicated --runs 3 --time-limit 180
--interval 10 --nemesis kill,pause,partition --targets controllers`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

from kafka_chaos.checkers.anomalies import CONTROL_NAMES
from kafka_chaos.history.run_dir import RunDir

ROOT = Path(__file__).resolve().parent.parent
NEMESIS = "kill,pause,partition,kill@controller,pause@controller"
SHAPES = {"dedicated": ["--controllers", "3", "--brokers", "3"], "combined": ["--nodes", "3"]}


def one_run(version: str, shape: str, seed: int, args: argparse.Namespace, store: Path) -> dict:
    name = f"cp-{version}-{shape}-{seed}"
    cmd = [
        str(ROOT / ".venv/bin/kafka-chaos"),
        "run",
        "--kafka",
        version,
        *SHAPES[shape],
        "--nemesis",
        args.nemesis,
        "--nemesis-targets",
        args.targets,
        "--nemesis-interval",
        str(args.interval),
        "--time-limit",
        str(args.time_limit),
        "--seed",
        str(seed),
        "--store",
        str(store),
        "--name",
        name,
        "--check",
        "--quiet",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    run_dir = store / name / "latest"
    row: dict = {"version": version, "shape": shape, "seed": seed, "exit": done.returncode, "run_dir": str(run_dir)}
    results = RunDir(run_dir).results
    if not results.is_file():
        return {**row, "error": (done.stderr or done.stdout).strip().splitlines()[-1:]}
    r = json.loads(results.read_text())
    cp = r.get("control_plane") or {}
    anomalies = r.get("anomalies") or {}
    faults = cp.get("faults") or []
    return {
        **row,
        "valid": r["valid"],
        "data_errors": {n: a["errors"] for n, a in anomalies.items() if a["errors"] and n not in CONTROL_NAMES},
        "cp_errors": {n: a["errors"] for n, a in anomalies.items() if a["errors"] and n in CONTROL_NAMES},
        "cp_examples": {n: a["examples"][:2] for n, a in anomalies.items() if n in CONTROL_NAMES},
        "first_detected_s": {
            n: min(
                (ex["from_s"] + (cp.get("bounds_s") or {}).get(n, 0) for ex in a["examples"] if "from_s" in ex),
                default=None,
            )
            for n, a in anomalies.items()
            if a["errors"] and n in CONTROL_NAMES
        },
        "not_checked": cp.get("not_checked", {"all": cp.get("why")}),
        "fenced_after_s": [t for f in faults for t in (f.get("fenced_after_s") or {}).values() if t is not None],
        "next_leader_after_s": [
            f["next_quorum_leader_after_s"] for f in faults if f.get("next_quorum_leader_after_s") is not None
        ],
        "controller_faults": sum(1 for f in faults if "active_controller" in f),
        "max_lag": max((v["records"] for v in (cp.get("metadata_lag") or {}).values()), default=None),
        "liveness": r.get("liveness") or {},
    }


def _median(xs: list[float], digits: int = 1) -> str:
    return f"{statistics.median(xs):.{digits}f}" if xs else "-"


def table(rows: list[dict]) -> None:
    print(
        "| Kafka | shape | runs | verdicts | control-plane errors | not checked | fenced after (s, median)"
        " | next quorum leader (s, median; faults) | max metadata lag | in faults / between (median) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for version, shape in sorted({(r["version"], r["shape"]) for r in rows}):
        mine = [r for r in rows if (r["version"], r["shape"]) == (version, shape)]
        verdicts: dict[str, int] = {}
        errors: dict[str, int] = {}
        skipped: set[str] = set()
        for r in mine:
            v = {True: "valid", False: "invalid"}.get(r.get("valid"), str(r.get("valid", "no result")))
            verdicts[v] = verdicts.get(v, 0) + 1
            for n, c in (r.get("cp_errors") or {}).items():
                errors[n] = errors.get(n, 0) + c
            skipped |= set(r.get("not_checked") or {})
        ratios = [(r.get("liveness") or {}).get("ratios", {}).get("ops_per_s", {}) for r in mine]
        inside = [x["in_faults"] for x in ratios if x.get("in_faults") is not None]
        between = [x["between_faults"] for x in ratios if x.get("between_faults") is not None]
        print(
            f"| {version} | {shape} | {len(mine)} | {', '.join(f'{c} {v}' for v, c in sorted(verdicts.items()))}"
            f" | {', '.join(f'{n} {c}' for n, c in sorted(errors.items())) or '0'}"
            f" | {', '.join(sorted(skipped)) or '-'}"
            f" | {_median([t for r in mine for t in r.get('fenced_after_s', [])])}"
            f" | {_median([t for r in mine for t in r.get('next_leader_after_s', [])])};"
            f" {sum(r.get('controller_faults', 0) for r in mine)}"
            f" | {max((r['max_lag'] for r in mine if r.get('max_lag') is not None), default='-')}"
            f" | {_median(inside, 2)} / {_median(between, 2)} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default="3.9.1,4.3.1")
    parser.add_argument("--shapes", default="dedicated,combined")
    parser.add_argument("--runs", type=int, default=5, help="runs per version and shape")
    parser.add_argument("--time-limit", type=float, default=60)
    parser.add_argument("--interval", type=float, default=6)
    parser.add_argument("--nemesis", default=NEMESIS, help=f"the random fault list (default {NEMESIS})")
    parser.add_argument("--targets", default="any", help="--nemesis-targets: any, brokers or controllers")
    parser.add_argument("--out", type=Path, default=None, help="JSON lines, one per run (appended)")
    parser.add_argument("--store", type=Path, default=None, help="keep the run directories here (default: removed)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or Path(tmp)
        for seed in range(1, args.runs + 1):
            for version in args.kafka.split(","):
                for shape in args.shapes.split(","):
                    row = one_run(version, shape, seed, args, store)
                    rows.append(row)
                    keys = ("version", "shape", "seed", "valid", "cp_errors", "first_detected_s")
                    print(json.dumps({k: row.get(k) for k in keys}))
                    if args.out:
                        with args.out.open("a") as f:
                            f.write(json.dumps(row) + "\n")
    table(rows)


if __name__ == "__main__":
    main()
