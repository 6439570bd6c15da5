"""The control-plane oracle (cp_oracle.py) on the hand-made cases, and the Spark checker against it
on generated runs (the differential test): random faults (restarts, a pause ended by a kill and a
start, a partition replaced by the next), fencing and ISR records, claims of leadership, a topic
deleted, DescribeQuorum failing, idle spells and stuck brokers over cp_builder's healthy run."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kafka_chaos.checkers.check import check_history
from tests.checkers import cp_cases, cp_oracle
from tests.checkers.cp_builder import NODES, Run, change, fence, rec

CASES = [(name, build) for name, builds in cp_cases.CASES.items() for build in builds]


@pytest.mark.parametrize(("name", "build"), CASES, ids=[f"{n}-{b.__name__}" for n, b in CASES])
def test_the_oracle_finds_each_case_and_not_its_near_miss(tmp_path, name, build):
    bad = build(True).write(tmp_path / "bad").parent
    good = build(False).write(tmp_path / "good").parent
    assert set(cp_oracle.check(bad)) == {name}
    assert cp_oracle.check(good) == {}


def generated(seed: int) -> Run:
    """A run with a few random faults and what the controller might (or might not) have written.
    Times sit on a quarter-second grid, so that no bound ends on a sample."""
    rng = random.Random(seed)
    r = Run()
    nodes = list(NODES)
    offset = 8
    used: set[str] = set()
    for _ in range(rng.randint(1, 3)):
        node = rng.choice([n for n in nodes if n not in used] or nodes)
        used.add(node)
        at = rng.randrange(12, 100) / 4
        length = rng.choice([6, 18, 33, 52])
        end = min(at + length, 57.5)
        f = rng.choice(["kill", "pause", "partition", "cut", "wipe", "stop-wipe", "pause-kill", "replaced"])
        if f == "wipe":
            r.fault("wipe", [node], at, took=1.5)
        elif f == "stop-wipe":
            r.fault("stop", [node], at).fault("wipe", [node], end, took=1.5)
        elif f == "pause-kill":
            r.fault("pause", [node], at).fault("kill", [node], at + 2).fault("start", [node], end)
        elif f == "replaced":
            other = rng.choice([n for n in nodes if n != node])
            r.fault("partition", [node], at, grudge={node: [other], other: [node]}, shape="cut")
            r.fault("partition", [other], at + 3, grudge={other: [node], node: [other]}, shape="cut")
            r.fault("heal", nodes, end)
        elif f == "cut":
            other = rng.choice([n for n in nodes if n != node])
            r.fault("partition", [node], at, grudge={node: [other], other: [node]}, shape="cut")
            r.fault("heal", nodes, end)
        elif f == "partition":
            grudge = {node: [n for n in nodes if n != node], **{n: [node] for n in nodes if n != node}}
            r.fault("partition", [node], at, grudge=grudge, shape="isolate")
            r.fault("heal", nodes, end)
        else:
            r.fault(f, [node], at).fault("start" if f == "kill" else "resume", [node], end)
        broker = NODES[node]
        when = at + rng.choice([3, 8, 16, 30])
        if rng.random() < 0.7:
            r.add(change(offset, when, isr=rng.choice([[2], [2, 3], [3], [1, 2]])), fence(offset + 1, when, broker))
            offset += 2
        if rng.random() < 0.4:
            r.add(change(offset, when + 1, leader=rng.choice([1, 2, 3, -1])))
            offset += 1
        if rng.random() < 0.3:
            claim = (NODES[node], rng.choice([1, 2, 3]))
            r.views(node, at + 0.5, at + rng.choice([3, 12, 20]), claim)
    if rng.random() < 0.3:
        r.add(rec(offset, 50, "NO_OP_RECORD", batch_epoch=rng.choice([1, 2])), nodes=(rng.choice(nodes),))
        offset += 1
    if rng.random() < 0.2:
        r.add(rec(offset, rng.randrange(8, 200) / 4, "REMOVE_TOPIC_RECORD", topicId="T0"))
        offset += 1
    if rng.random() < 0.2:
        gap = rng.randrange(20, 200) / 4
        r.sample_errors = [(gap, gap + rng.choice([3, 10, 20]))]
    if rng.random() < 0.3:
        idle = rng.randrange(8, 200) / 4
        r.writes = [w for w in r.writes if not idle <= w < idle + rng.choice([10, 30])]
    if rng.random() < 0.3:
        r.hw_per_s = 1
        r.behind(rng.choice(nodes), 5, rng.choice([30, 50]), 7)
    return r


@pytest.mark.spark
@pytest.mark.parametrize("seed", range(10))
def test_spark_agrees_with_the_oracle_on_generated_runs(spark_session, tmp_path: Path, seed):
    history = generated(seed).write(tmp_path / f"run-{seed}")
    result = check_history(history, report=False, session=spark_session)
    control = {n: a["count"] for n, a in result.anomalies.items() if n in cp_oracle_names()}
    assert control == cp_oracle.check(history.parent)


def cp_oracle_names() -> set[str]:
    return set(cp_cases.CASES)
