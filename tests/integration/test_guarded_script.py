"""A script that acts on what the cluster is doing (nemesis/guards.py), on a real cluster of three
combined nodes: the leader's replication cut (a binding names the leader), the ISR left with the
leader alone (a guard waits for it), then the power loss of the ISR's last member (the leader),
the cut held until then (`for: next`), and last a pause of the node the cut's heal brought back
(`$back`, the leader again). The history must show each step where the cluster put it."""

import pytest

from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.file import read_history
from kafka_chaos.history.reporter import silent
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.nemesis.plan import NemesisPlan
from kafka_chaos.nemesis.schedule import parse_script
from kafka_chaos.runs.run import run
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

SCRIPT = [
    {"at": 5, "fault": "partition", "target": "leader:chaos/0", "shape": "replication", "for": "next", "as": "L"},
    {"at": 6, "fault": "lose-unflushed", "target": "last-isr:chaos/0", "when": "isr:chaos/0 <= 1", "within": 40},
    {"at": 8, "fault": "kill", "target": "follower:chaos/0", "when": "isr:chaos/0 > 3", "within": 2, "for": 2},
    {"at": 24, "fault": "pause", "target": "$back", "for": 2},
]


def test_a_guarded_script_waits_for_an_isr_of_one_and_hits_the_bound_leader(tmp_path):
    opts = WorkloadOptions(time_limit=30, concurrency=4, rate=200, keys=1)
    spec = RunSpec(ClusterSpec(DEFAULT_VERSION), opts, NemesisPlan(script=parse_script(SCRIPT)), seed=1, store=tmp_path)
    result = run(spec, silent)
    history = [e for e in read_history(RunDir(result.run_dir).history) if e["process"] == "nemesis"]
    done = {e["f"]: e for e in history if e["type"] != "invoke"}
    cut, loss = done["partition"], done["lose-unflushed"]
    assert cut["type"] == "ok" and cut["value"]["listener"] == "PLAINTEXT", cut
    leader = cut["value"]["target"]  # bound: the leader's alias, resolved when the cut acted
    assert leader.startswith("kafka-"), cut
    assert loss["type"] == "ok" and loss["value"]["nodes"] == [leader], loss
    # it waited for the shrink (replica lag and its check: seconds after the cut), then the cut healed
    assert (loss["time"] - cut["time"]) / 1e9 > 2, (cut, loss)
    heal = next(e for e in history if e["f"] == "heal" and e["type"] == "ok" and e["time"] > loss["time"])
    assert heal["time"] < loss["time"] + 10e9, heal
    # the third step's guard (more than three replicas in sync) is never reached: recorded, nothing done
    kill = done["kill"]
    assert kill["type"] == "fail" and "not reached within 2 s" in kill["error"], kill
    pause = done["pause"]
    assert pause["type"] == "ok" and pause["value"]["nodes"] == [leader], pause
