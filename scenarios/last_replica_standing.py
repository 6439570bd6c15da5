"""last-replica-standing: the ISR shrinks to the leader alone, the leader loses what it had not
flushed, and comes back as the only replica eligible to lead (KIP-966).

Story (one controller, brokers L, F1, F2; replication factor 3, min.insync.replicas 2, acks=all):
1. F1 is cut off from L: after replica.lag.time.max.ms the ISR is {L, F2}. Writes are still
   acknowledged: two replicas hold each of them.
2. F2 is cut off from L too: the ISR shrinks to {L}, below min.insync.replicas, and writes
   stop being acknowledged. Every acknowledged write is on L and on F2 (F1 for the older ones).
3. L loses power: killed, its log cut back to what it had flushed (nemesis `lose-unflushed`;
   Kafka does not fsync by default, so that is next to nothing), and started again.
4. The cuts heal. Before eligible leader replicas, L, the last member of the ISR, is elected
   again with its truncated log; F1 and F2 follow it and truncate away the writes they held.
   With ELR (KIP-966, on by default for clusters created on 4.1 or later), F2 was kept as an
   eligible leader replica when the ISR fell below min.insync.replicas, L's unclean restart
   takes it out of the ISR, and F2, which holds every acknowledged write, leads.

Expected: loss on 3.x and on 4.0 (ELR a preview there, off by default); no loss on 4.1+.
"""

from __future__ import annotations

from kafka_chaos.scenarios.base import LOSS, LOSS_WORKLOAD, SAFE, Scenario, at_least
from kafka_chaos.scenarios.script import Script


def script(s: Script) -> None:
    key = s.key(0)
    s.wait_for("the partition has a leader and a full ISR", lambda: len(s.partition(key).isr) == 3, 30)
    state = s.partition(key)
    leader_id = state.leader
    f1_id, f2_id = [r for r in state.replicas if r != leader_id][:2]
    leader, f1, f2 = s.name("L", s.alias(leader_id)), s.name("F1", s.alias(f1_id)), s.name("F2", s.alias(f2_id))
    s.sleep(3)

    # 1-2. The ISR shrinks to L alone, one follower at a time.
    s.cut((leader, f1))
    s.wait_for("the ISR is {L, F2}", lambda: sorted(s.partition(key, ask=f2).isr) == sorted([leader_id, f2_id]), 40)
    s.sleep(3)  # writes acknowledged by {L, F2}
    s.cut((leader, f1), (leader, f2))
    s.wait_for("the ISR is {L}", lambda: s.partition(key, ask=f2).isr == [leader_id], 40)
    s.sleep(2)

    # 3. L loses its unflushed writes.
    epoch = s.partition(key, ask=f2).leader_epoch
    s.fault("lose-unflushed", leader)
    s.cut((leader, f1), (leader, f2))  # again: L's container may have a new address
    s.wait_for(
        "the controller acted on L's crash (a new leader epoch)",
        lambda: s.partition(key, ask=f2).leader_epoch != epoch,
        60,
    )

    # 4. Heal; see who leads.
    s.fault("heal")
    s.wait_for("a leader serves the partition", lambda: s.partition(key, ask=f2).leader >= 0, 60)
    s.note(f"leader after the crash: {s.alias(s.partition(key, ask=f2).leader)}")
    s.sleep(10)  # new writes: reads past the lost offsets show which acknowledged values are gone


SCENARIO = Scenario(
    name="last-replica-standing",
    story=__doc__,
    script=script,
    controllers=1,
    brokers=3,
    broker_config={"replica.lag.time.max.ms": "5000", "broker.session.timeout.ms": "9000"},
    workload={**LOSS_WORKLOAD, "replication_factor": 3, "min_insync_replicas": 2},
    expect=lambda version, mv: SAFE if at_least(version, "4.1.0") else LOSS,
    references=("KIP-966: eligible leader replicas, on by default for new clusters from 4.1",),
)
