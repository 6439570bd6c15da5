"""controller-disk-loss: a controller of a static quorum loses its disk and comes back empty; it
votes as if it had never voted or logged anything, and with a voter that lacks what the old
majority committed elects a leader without those records: committed metadata is undone, and
writes acknowledged under it are lost (KAFKA-14077; KIP-853's dynamic quorum, 3.9.0 on, gives a
reformatted controller a new directory id, so it rejoins as an observer and cannot vote).

Story (three dedicated controllers L, X, Y; brokers A and B; replication factor 2,
min.insync.replicas 1, acks=all):
1. The controllers agree on L. L is cut off from X and Y (the brokers still reach it); X and Y
   elect X.
2. A (the partition's leader) and B are cut apart: A drops B from the ISR, and X commits the
   change with Y's vote. L never sees it. Writes go on, acknowledged by A alone.
3. Y's disk is lost (`wipe`): it starts again empty, the same voter of a static quorum.
4. X is cut off from everyone; L and Y can talk again. Y has no log, so it votes for L, and L
   leads with its old log: the ISR is {A, B} again, and the brokers truncate their metadata to
   L's. With a dynamic quorum, Y's vote is not a voter's and no leader can be elected.
5. A is killed. L fences it and elects B from the ISR it has: B's log lacks what A acknowledged
   alone, which is lost when A comes back and truncates to B's.

What Kafka does instead of step 5 (seen on 3.8.1 and 4.3.1): every node that had fetched the
records L lacks, brokers included, is asked by L to truncate below its high watermark, which
KRaft refuses by stopping the process ("The leader requested truncation to offset N, which is
below the current high watermark"): the brokers that copied them die, and X when it reaches L
again. The committed records are gone all the same: L's log holds, at their offsets, records of
its own old epoch. So the scenario is shown by `metadata-divergence` (the nodes that died keep
the records their leader had committed; the others hold L's), or by `lost-write` where the
brokers live on; the script's log (scenario.json) names the nodes that died, and starts them
again. Expected: on every version with a static quorum (KIP-853 is the fix, and only for a
dynamic quorum); none with a dynamic one (`controller-disk-loss-kip853`).
"""

from __future__ import annotations

from kafka_chaos.harness.config import FAULT_DETECTION
from kafka_chaos.harness.quorum_state import path_of, read_view
from kafka_chaos.history.quorum_view import claims_to_lead
from kafka_chaos.nemesis.faults import HEAL, PARTITION, START
from kafka_chaos.scenarios.base import LOSS, LOSS_WORKLOAD, SAFE, Scenario
from kafka_chaos.scenarios.script import Script, StepTimeout


def _view(s: Script, alias: str) -> dict:
    return read_view(path_of(s.cluster.node(alias)))


def _leads(s: Script, alias: str, above: int) -> bool:
    """Whether `alias` holds itself leader in an epoch above `above`."""
    view = _view(s, alias)
    return claims_to_lead({**view, "node_id": s.node_id(alias)}) and view["leader_epoch"] > above


def script(s: Script) -> None:
    key = s.key(0)
    s.wait_for("the controllers agree on a leader", s.controllers_agree, 30)
    a, b = s.pair(key, "A", "B")
    leader = s.name("L", s.active_controller())
    epoch = _view(s, leader)["leader_epoch"]
    s.sleep(3)  # writes acknowledged by {A, B}

    # 1. L cut off from its peers; they elect one of them.
    s.fault(PARTITION.name, "controller", shape="quorum-leader")
    peers = [n.alias for n in s.cluster.controllers if n.alias != leader]
    won: list[str] = []  # as the wait saw it: a second read could see another election

    def elected() -> bool:
        won[:] = [p for p in peers if _leads(s, p, epoch)]
        return bool(won)

    s.wait_for("a peer leads a later epoch", elected, 30)
    x = s.name("X", won[0])
    y = s.name("Y", next(p for p in peers if p != x))
    x_epoch = _view(s, x)["leader_epoch"]

    # 2. A drops B from the ISR; X and Y commit it.
    quorum_cut = [(leader, x), (leader, y)]
    s.cut(*quorum_cut, (a, b))
    s.wait_for("the ISR is {A}", lambda: s.partition(key, ask=a).isr == [s.node_id(a)], 30)
    s.sleep(3)  # writes acknowledged by A alone

    # 3. Y's disk lost: it starts again empty.
    s.fault("wipe", y)

    # 4. X cut off from everyone; L and Y reach each other again.
    s.cut(*[(x, n.alias) for n in s.cluster.nodes if n.alias != x], (a, b))
    try:
        # In X's epoch itself where pre-vote (4.0 on) lets L stand for exactly that epoch: two leaders
        # of one epoch (quorum-double-leader); in a later one before.
        s.wait_for("L leads again, elected with Y's vote", lambda: _leads(s, leader, x_epoch - 1), 30)
    except StepTimeout:
        s.note("no leader with the old log: the wiped controller's vote did not elect one (KIP-853)")
    s.sleep(5)
    s.note("nodes down: " + (", ".join(_down(s)) or "none"))

    # 5. A killed: the controller elects from the ISR it holds.
    s.fault("kill", a)
    try:
        s.wait_for("B leads", lambda: s.partition(key, ask=b, patience_s=1).leader == s.node_id(b), 20)
    except StepTimeout:
        s.note("B did not become leader")
    s.sleep(4)  # writes to B
    s.fault(HEAL.name)
    s.fault(START.name)
    down = _down(s)
    s.note("nodes down after the heal: " + (", ".join(down) or "none"))
    for alias in down:  # a node that died on the truncation below its high watermark, started again
        s.fault("start", alias)
    try:
        s.wait_for("the controllers agree on a leader again", s.controllers_agree, 60)
        s.wait_for("the partition has a leader", lambda: s.partition(key).leader != -1, 60)
    except StepTimeout:
        s.note("the cluster did not recover")
    s.sleep(8)  # more writes: reads past the lost offsets show which acknowledged values are gone


def _down(s: Script) -> list[str]:
    """Nodes not running: the nemesis's, and any that died (Kafka stops a node whose quorum
    leader asks it to truncate below its high watermark)."""
    return [n.alias for n in s.cluster.nodes if n.state() != "running"]


_COMMON = dict(
    story=__doc__,
    script=script,
    controllers=3,
    brokers=2,
    broker_config=dict(FAULT_DETECTION),
    workload={**LOSS_WORKLOAD, "replication_factor": 2, "min_insync_replicas": 1, "time_limit": 180.0},
)

SCENARIO = Scenario(
    name="controller-disk-loss",
    **_COMMON,
    expect=lambda version, mv: LOSS,
    shows=("metadata-divergence", "lost-write"),
    references=(
        "KAFKA-14077: a static quorum's controller with a lost disk votes again; committed metadata can be lost",
        "KIP-853 (3.9.0): a dynamic quorum's reformatted controller has a new directory id and is no voter",
    ),
    summary="a static quorum's controller back with an empty disk elects a leader that lacks committed metadata",
)

CONTROL = Scenario(
    name="controller-disk-loss-kip853",
    **_COMMON,
    quorum="dynamic",
    expect=lambda version, mv: SAFE,
    shows=("metadata-divergence", "lost-write"),
    references=("KIP-853 (3.9.0): a dynamic quorum's reformatted controller has a new directory id and is no voter",),
    summary="the same disk loss in a dynamic quorum (KIP-853): the empty controller cannot vote (the control)",
)
