"""Bench: does `explore` find what the scenario scripts find, undirected, sooner than today's mix?

    .venv/bin/python bench/explore_campaigns.py --kafka 3.6.2 --expect quorum-split-brain
        [--campaigns 3] [--budget 20m] [--seed 1] [--shrink] [--store DIR] [--out FILE]
        [-- EXPLORE OPTIONS...]

Each campaign is `kafka-chaos explore --baseline --budget B --seed S --json --quiet` with the
options after `--` (the shape, the faults, `--config`): its explore runs and the same number of
runs of today's one-at-a-time mix alternate, so each mix gets about half of the budget (issue
61: 30 minutes each, `--budget 60m`). Issue 61's targets, three campaigns each, on the safe
configuration:

    --kafka 3.6.2 --expect quorum-split-brain --budget 60m -- --controllers 3 --brokers 3  # KAFKA-15489
    --kafka 3.9.1 --expect lost-write,unseen,inconsistent-offsets --budget 60m             # KIP-966
    --kafka 3.8.1 --expect lost-write,unseen,inconsistent-offsets,metadata-divergence --budget 60m \
        -- --controllers 3 --brokers 3                                                   # KAFKA-14077
    --kafka 3.7.2 --expect quorum-split-brain --budget 40m -- --controllers 3 --brokers 3  # expected: none
    --kafka 4.4.0 --expect lost-write,unseen,inconsistent-offsets,quorum-split-brain,metadata-divergence \
        --budget 40m -- --quorum dynamic                                                  # expected: none

Issue 46's, before it:

    --kafka 3.9.1 --expect lost-write --budget 60m                          # last-replica-standing
    --kafka 3.8.1 --expect lost-write --budget 60m -- --controllers 3 --brokers 3 \
        --nemesis kill,partition,wipe                                         # controller-disk-loss
    --kafka 3.6.2 --expect quorum-split-brain --budget 20m -- --controllers 3 --brokers 3 \
        --nemesis kill,pause,partition                                        # KAFKA-15489
    --kafka 4.3.1 --expect lost-write,quorum-split-brain --budget 60m -- \
        --quorum dynamic                                                      # expected: none
    (a static quorum, the default, shows KAFKA-14077 on every version when a combined node is
    wiped, which only a dynamic quorum fixes: add `--quorum dynamic` to tell KIP-966's loss apart)

For each campaign and mix it prints the runs, the distinct states, the minutes of the mix's own
runs until its first run with an expected anomaly (its own time: the baseline's runs are not
counted against explore, nor explore's against the baseline), every error anomaly found, and the
deepest rung each mix's runs reached on each progress ladder (checkers/measures/ladders.py), and the
checking share (the check's seconds over the runs' wall seconds) with the median check. A row per
campaign is appended to --out (JSON lines) as it finishes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from kafka_chaos.checkers.measures.ladders import LADDERS

ROOT = Path(__file__).resolve().parent.parent

MIXES = ("explore", "baseline")


def campaign(i: int, args: argparse.Namespace, extra: list[str], store: Path) -> dict:
    cmd = [
        str(ROOT / ".venv/bin/kafka-chaos"),
        "explore",
        "--kafka",
        args.kafka,
        "--budget",
        args.budget,
        "--baseline",
        "--seed",
        str(args.seed + i),
        "--store",
        str(store),
        "--name",
        f"bench-{args.kafka}-{args.seed + i}",
        "--json",
        "--quiet",
        *([] if args.shrink else ["--no-shrink"]),
        *extra,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if not done.stdout.strip():
        return {"campaign": i, "error": done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]}
    doc = json.loads(done.stdout)
    table = json.loads((Path(doc["campaign"]) / "explore.json").read_text())
    row = {"campaign": i, "seed": args.seed + i, "dir": doc["campaign"], "exit_code": done.returncode}
    for mix in MIXES:
        trials = [t for t in table["trials"] if t["mix"] == mix]
        row[mix] = {**per_mix(trials, set(args.expect.split(","))), "depth": table["depth"].get(mix, {})}
    row["findings"] = doc["findings"]
    return row


def per_mix(trials: list[dict], expect: set[str]) -> dict:
    """A mix's runs, in its own time: minutes to its first expected anomaly, all it found, checking."""
    own = 0.0
    first = None
    found: dict[str, int] = {}
    for t in trials:
        own += t["wall_s"]
        for name in t["anomalies"]:
            found[name] = found.get(name, 0) + 1
        if first is None and expect & set(t["anomalies"]):
            first = round(own / 60, 1)
    checks = [t["check_s"] for t in trials if t["check_s"]]
    walls = sum(t["wall_s"] for t in trials)
    return {
        "runs": len(trials),
        "states": max((t["seen"] for t in trials), default=0),
        "minutes": round(own / 60, 1),
        "first_expected_min": first,
        "found": found,
        "errors": sum(1 for t in trials if t["error"]),
        "check_median_s": round(statistics.median(checks), 1) if checks else None,
        "check_share": round(sum(checks) / walls, 3) if walls else None,
    }


def main() -> int:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kafka", required=True)
    p.add_argument("--expect", required=True, help="anomalies that count as the finding, comma-separated")
    p.add_argument("--campaigns", type=int, default=3)
    p.add_argument("--budget", default="20m", help="each campaign's, both mixes together")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--shrink", action="store_true", help="shrink findings (the campaign runs longer)")
    p.add_argument("--store", type=Path, default=None)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    store = args.store or Path(tempfile.mkdtemp(prefix="explore-bench-"))
    print(f"store: {store}", file=sys.stderr)
    print(
        "| campaign | mix | runs | states | minutes | first expected (min) | found | deepest rungs "
        "(data/quorum/voter) | check median | check share |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for i in range(args.campaigns):
        row = campaign(i, args, extra, store)
        if args.out:
            with args.out.open("a") as f:
                f.write(json.dumps({"kafka": args.kafka, "expect": args.expect, "extra": extra, **row}) + "\n")
        if "error" in row:
            print(f"| {i} | - | error: {row['error']} | | | | | | | |")
            continue
        for mix in MIXES:
            m = row[mix]
            found = ", ".join(f"{k} {v}" for k, v in sorted(m["found"].items())) or "none"
            first = "-" if m["first_expected_min"] is None else m["first_expected_min"]
            rungs = "/".join(f"{m['depth'].get(ladder, 0)}of{len(rungs)}" for ladder, rungs in LADDERS.items())
            print(
                f"| {i} | {mix} | {m['runs']} | {m['states']} | {m['minutes']} | {first} | {found} "
                f"| {rungs} | {m['check_median_s']} s | {m['check_share']} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
