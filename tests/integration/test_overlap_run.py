"""An overlapping mix on a real 4.3.1 cluster (nemesis/overlap.py): the drawn timeline plays with
two faults in place at once, and every role resolves to the node that held that role when the
fault happened, as the run's own evidence says: the partition's leader and ISR from the active
controller's decoded metadata log, the active controller from its LeaderChange records, both on
the history's clock (control-plane/metadata/)."""

import json
from pathlib import Path

import pytest

from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.history.file import read_history
from kafka_chaos.history.metadata_replay import Replay
from kafka_chaos.history.reporter import silent
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.nemesis.plan import nemesis_plan
from kafka_chaos.runs.run import run
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

KEY = "chaos/0"
#: A seed whose draw aims at the leader, a follower and the active controller, and holds faults at
#: once: a quorum-leader cut while the leader is killed and the controller loses its unflushed
#: writes, the controller killed during a bridge (checked below). No pause: a paused broker makes
#: the admin client that resolves a target wait out its bootstrap (30 s) in this short run.
SEED = 9
#: How long before a fault's invoke its node may have held the role: the target is resolved from a
#: broker's metadata (or the controllers' quorum-state files), which follow the controller's log
#: a moment behind, longer for a broker that was cut off until just before.
SLACK_NS = 3_000_000_000


#: role -> the timeline that says who held it, and whether a state names these node ids in it.
ROLE_TESTS = {
    f"leader:{KEY}": ("partition", lambda s, ids: s[1] == ids[0]),
    f"follower:{KEY}": ("partition", lambda s, ids: ids[0] in s[2] and s[1] != ids[0]),
    "controller": ("controller", lambda s, ids: s[1] == ids[0]),
    "quorum-minority": ("controller", lambda s, ids: s[1] not in ids),
}


def states(run_dir: Path) -> tuple[list[tuple[int, int, tuple[int, ...]]], list[tuple[int, int]]]:
    """(time, leader, isr) of KEY after each of its changes, from the longest decoded metadata log
    (a node that was never wiped), and (time, active controller) after each LeaderChange of any
    node's log: a leader elected a moment before it was cut off or killed wrote its LeaderChange
    into its own log only, and the longest log may be one whose tail was never committed."""
    logs = sorted(RunDir(run_dir).control_plane.glob("metadata/*.jsonl"), key=lambda p: p.stat().st_size)
    assert logs, "no decoded metadata log: the control-plane evidence was not collected"
    replay, partition, controller = Replay(bump_on_shrink=False), [], set()
    for log in logs:
        for line in log.read_text().splitlines():
            record = json.loads(line)
            if record["type"] == "LeaderChange":
                controller.add((record["time"], record["data"]["leaderId"]))
            elif log == logs[-1]:
                step = replay.step(record["offset"], record["type"], record.get("data") or {})
                if step.partition == KEY and step.after is not None:
                    partition.append((record["time"], step.after.leader, step.after.isr))
    return partition, sorted(controller)


def held(timeline: list, since: int, until: int, test) -> bool:
    """Whether `test(state)` was true at some moment of [since, until] of a (time, *state) timeline."""
    at_start = [s for s in timeline if s[0] <= since][-1:]
    during = [s for s in timeline if since < s[0] <= until]
    return any(test(s) for s in at_start + during)


def operations(events: list[dict]) -> list[dict]:
    """The nemesis's operations, each its invoke's value and time with its completion's: the nemesis
    has at most one outstanding, so each completion follows its invoke."""
    ops, invoke = [], None
    for e in events:
        if e["process"] != "nemesis":
            continue
        if e["type"] == "invoke":
            invoke = e
        else:
            ops.append({"f": e["f"], "type": e["type"], "start": invoke["time"], "end": e["time"], **e["value"]})
    return ops


def windows(ops: list[dict]) -> list[tuple[int, int, dict]]:
    """When each fault was in place: a held one from its completion to the invoke of the heal
    that undid it (its `undone_by`, on one of its nodes: `heal` undoes every network fault), an
    instant one (a power loss) while it ran."""
    out = []
    for i, op in enumerate(ops):
        if op["type"] != "ok" or op.get("heals"):
            continue
        undo = op.get("undone_by")
        if undo is None:
            out.append((op["start"], op["end"], op))
            continue
        heal = next(
            (
                h
                for h in ops[i + 1 :]
                if h["f"] == undo and h["type"] == "ok" and (undo == "heal" or set(h["nodes"]) & set(op["nodes"]))
            ),
            None,
        )
        out.append((op["end"], heal["start"] if heal else ops[-1]["end"], op))
    return out


def test_an_overlapping_mix_holds_faults_at_once_on_the_nodes_in_their_roles(tmp_path, assert_nothing_left):
    opts = WorkloadOptions(time_limit=45, concurrency=8, rate=300)
    plan = nemesis_plan("kill,partition,lose-unflushed", 7, None, start=6, mix="overlap")
    spec = RunSpec(ClusterSpec("4.3.1"), opts, plan, seed=SEED, store=tmp_path / "store")
    drawn = spec.with_seed().nemesis.timeline
    targets = {s.target for s in drawn}
    assert {"controller", f"leader:{KEY}", f"follower:{KEY}"} <= targets, drawn
    assert any(a.at < b.at < a.at + a.hold for a in drawn for b in drawn if a.hold and a is not b), drawn
    assert any(s.fault == "lose-unflushed" for s in drawn), drawn

    result = run(spec, silent)
    config = json.loads(RunDir(result.run_dir).config.read_text())
    assert config["nemesis"]["mix"] == "overlap" and len(config["nemesis"]["steps"]) == len(drawn)
    assert_nothing_left(config["run_id"])

    ops = operations(read_history(RunDir(result.run_dir).history))
    faults = [op for op in ops if not op.get("heals")]
    # every step played (the last may meet the end of the workload phase, late behind slow applies)
    assert len(drawn) - 1 <= len(faults) <= len(drawn), [(o["f"], o["target"], o["type"]) for o in ops]
    assert [(o["f"], o["target"]) for o in faults] == [(s.fault, s.target) for s in drawn][: len(faults)]
    placed = windows(ops)
    together = [
        (a[2]["f"], a[2]["target"], b[2]["f"], b[2]["target"])
        for i, a in enumerate(placed)
        for b in placed[i + 1 :]
        if a[0] < b[1] and b[0] < a[1]
    ]
    assert together, f"no two faults were in place at once: {placed}"

    partition, controller = states(result.run_dir)
    checked = []
    for op in faults:
        if op["type"] != "ok":
            continue
        since, until, target = op["start"] - SLACK_NS, op["end"], op["target"]
        if op.get("shape") == "quorum-leader":
            (node,) = [a for a, enemies in op["grudge"].items() if len(enemies) > 1]
            role, nodes = "controller", [node]
        elif op.get("shape") in (None, "isolate"):
            role, nodes = target, op["nodes"]
        else:
            continue  # a shape that draws its own sides, or a cut: its sides are its grudge's
        if role not in ROLE_TESTS:
            continue  # any broker, any controller: every node is both here
        timeline, test = ROLE_TESTS[role]
        ids = [int(n.rpartition("-")[2]) for n in nodes]
        evidence = {"partition": partition, "controller": controller}[timeline]
        assert held(evidence, since, until, lambda s, ids=ids, test=test: test(s, ids)), (
            f"{op['f']} {role} hit {nodes} at {op['start'] / 1e9:.1f} s; {timeline} states: {evidence}"
        )
        checked.append(role)
    assert {"controller", f"leader:{KEY}"} <= set(checked), (checked, [(o["f"], o["target"], o["type"]) for o in ops])
