"""unclean-election: the only ISR member dies, and a replica that was out of the ISR is made
leader anyway: the acknowledged writes it never copied are lost.

Story (one controller, brokers L, F1, F2; replication factor 3, min.insync.replicas 1,
acks=all):
1. L is cut off from both followers: the ISR shrinks to {L}, and writes go on, acknowledged by
   L alone (min.insync.replicas 1 allows it).
2. L is killed. The partition has no eligible leader: its ISR is {L}, fenced.
3. `unclean-election`: an operator forces an unclean election (the ElectLeaders API with
   UNCLEAN), and F1 or F2 leads with a log that lacks everything L acknowledged alone.
   `unclean-election-config`: nobody forces it, but unclean.leader.election.enable=true; a
   KRaft controller acts on that setting only from 3.9.0 on, so earlier versions keep the
   partition offline until L returns, and lose nothing.
4. The cuts heal and L starts again; it truncates to the new leader's log.

Expected: `unclean-election` loses writes on every version (that is what the API is for);
`unclean-election-config` loses them on 3.9.0 and later, not before.
"""

from __future__ import annotations

from dataclasses import replace

from kafka_chaos.scenarios.base import LOSS, LOSS_WORKLOAD, SAFE, Scenario, at_least
from kafka_chaos.scenarios.script import Script, StepTimeout


def _script(force: bool):
    def script(s: Script) -> None:
        key = s.key(0)
        s.wait_for("the partition has a leader and a full ISR", lambda: len(s.partition(key).isr) == 3, 30)
        state = s.partition(key)
        leader_id = state.leader
        others = [r for r in state.replicas if r != leader_id]
        leader = s.name("L", s.alias(leader_id))
        followers = [s.name(f"F{i}", s.alias(r)) for i, r in enumerate(others, 1)]
        s.sleep(3)

        s.cut(*((leader, f) for f in followers))
        s.wait_for("the ISR is {L}", lambda: s.partition(key, ask=followers[0]).isr == [leader_id], 40)
        s.sleep(4)  # writes acknowledged by L alone

        s.fault("kill", leader)
        # Fenced, L leaves the partition offline; or a controller that elects uncleanly on its
        # own does so at once, faster than a look can catch the partition offline.
        s.wait_for("L is fenced", lambda: s.partition(key, ask=followers[0]).leader != leader_id, 40)
        if force and s.partition(key, ask=followers[0]).leader == -1:
            s.elect_unclean(key)
        try:
            s.wait_for(
                "a replica outside the ISR leads", lambda: s.partition(key, ask=followers[0]).leader in others, 20
            )
        except StepTimeout:
            s.note("no unclean election: the partition waits for L")
        s.sleep(5)  # writes to the new leader
        s.fault("heal")
        s.fault("start", leader)
        s.wait_for("a leader serves the partition", lambda: s.partition(key, ask=followers[0]).leader >= 0, 60)
        s.sleep(8)

    return script


_WORKLOAD = {**LOSS_WORKLOAD, "replication_factor": 3, "min_insync_replicas": 1}
_CONFIG = {
    "replica.lag.time.max.ms": "5000",
    "broker.session.timeout.ms": "6000",
    "broker.heartbeat.interval.ms": "1000",
}

SCENARIO = Scenario(
    name="unclean-election",
    story=__doc__,
    script=_script(force=True),
    controllers=1,
    brokers=3,
    broker_config=_CONFIG,
    workload=_WORKLOAD,
    expect=lambda version, mv: LOSS,
    references=("ElectLeaders with UNCLEAN elects a replica outside the ISR: documented data loss",),
)

# The same cluster and faults; nobody forces the election, the setting is to make it.
CONFIG = replace(
    SCENARIO,
    name="unclean-election-config",
    script=_script(force=False),
    broker_config={**_CONFIG, "unclean.leader.election.enable": "true"},
    expect=lambda version, mv: LOSS if at_least(version, "3.9.0") else SAFE,
    summary="the same, left to unclean.leader.election.enable=true, which KRaft honours from 3.9.0",
    references=("KRaft controllers honour unclean.leader.election.enable from 3.9.0",),
)
