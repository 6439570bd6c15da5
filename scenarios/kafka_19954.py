"""kafka-19954: a share partition loaded again on a new leader hands out records that members
had already acknowledged.

A share group's state of a partition (its start offset, the records in flight, their delivery
counts) lives in the leader's memory and, written through the share coordinator, in
`__share_group_state`. When the partition's leader changes, the new leader loads that state
and goes on acquiring from the start offset. KAFKA-19954: when the start offset fell inside a
cached batch, the reloaded share partition built overlapping batches and could acquire offsets
below the start offset, i.e. deliver again records whose acceptance the group had committed.

The script moves the share partition's leader four times while six Java members poll and
accept (a share of their records released): a kill of the leader of
`chaos/0`, 4 s, a restart, the ISR whole again, 8 s of calm. An accepted record delivered
again shows as `share-redelivered-after-ack`.

Expected: 4.1.x (the fix, apache/kafka PR #21051 in `SharePartition.acquire`, is in 4.2.0 and
later and in no 4.1 release; 4.1's `acquire` has no start-offset adjustment at all, so whether
it can acquire below the start offset is inferred from its code, not known). Not 4.2.0 on.
Before 4.1 the run is refused (no share groups). The runs: docs/scenarios.md.
"""

from __future__ import annotations

from kafka_chaos.nemesis.faults import START
from kafka_chaos.scenarios.base import LOSS, SAFE, Scenario, at_least
from kafka_chaos.scenarios.script import Script

ROUNDS, HOLD_S, CALM_S = 4, 4, 8

#: Six Java members of one share group over one key and a few released records. The lock outlasts
#: the holds and no member stalls: a member that polls after its lock ran out is handed records
#: its client fetched before (another member may have accepted them since), which shows as the
#: same anomaly on any version (docs/scenarios.md).
WORKLOAD = {
    "client": "java",
    "consumer": "share",
    "keys": 1,
    "concurrency": 6,
    "rate": 300.0,
    "share_lock_ms": 10000,
    "share_release": 0.05,
    "share_stalls": 0.0,
    "time_limit": 80.0,
    "final_time_limit": 90.0,
}


def failovers(s: Script) -> None:
    """The share partition's leader killed and restarted ROUNDS times, after the group delivers."""
    key = s.key(0)
    s.sleep(12)  # the members joined and deliver (the first delivery takes some 8 s)
    for n in range(ROUNDS):
        done = s.fault("kill", f"leader:{key}")
        s.note(f"kill {n + 1} of the share partition's leader", nodes=done.get("nodes"))
        s.sleep(HOLD_S)
        s.fault(START.name)
        s.wait_for("every replica is back in the ISR", lambda: len(s.partition(key).isr) == 3, 60)
        s.sleep(CALM_S)


SCENARIO = Scenario(
    name="kafka-19954",
    story=__doc__,
    script=failovers,
    brokers=3,
    workload=WORKLOAD,
    expect=lambda version, mv: SAFE if at_least(version, "4.2.0") else LOSS,
    shows=("share-redelivered-after-ack",),
    references=(
        "KAFKA-19954: a re-initialized share partition acquired offsets below its start offset; apache/kafka "
        "PR #21051 (SharePartition.acquire), in 4.2.0 and later, in no 4.1 release (Maven Central's jars)",
    ),
    summary="the share partition's leader killed four times while members accept: acknowledged records "
    "acquired again after the reload",
)
