"""kafka-16541: a leader-epoch checkpoint rewritten without fsync comes back empty after a power
loss; the leader then answers a stale follower's divergence check from a cache that forgot the
old epochs, the follower keeps records the leader never had, and once it leads, acknowledged
writes at those offsets are gone (KAFKA-16541, apache/kafka#15993: KAFKA-15046 dropped the fsync
of `LeaderEpochFileCache.truncateFromStart/End` in 3.7.0; fixed in 3.8.0, where the truncated
cache is written and fsynced by a background task and a stale file is cut on load).

Story (one controller, brokers Z and L, replication factor 2, min.insync.replicas 1, acks=all;
every message fsynced, `log.flush.interval.messages=1`, the configuration of a user who wants
no write lost; disks that know what was fsynced, `--disk fsync-tracked`):
1. Z leads, L follows. Z is cut off from L and from the controller: Z still takes writes, which
   wait for L and are never acknowledged (a zombie leader); the controller fences Z and makes L
   leader at epoch 1, from the offset M it had copied. L's writes are acknowledged.
2. Records below offset 1 are deleted (DeleteRecords, as retention deletes a segment): L's cache
   is truncated from its start, and on 3.7.x its checkpoint is rewritten without fsync.
3. L loses power (`lose-unflushed`): its log survives (every message was fsynced) but the
   checkpoint comes back empty. L leads again at epoch 2; its cache knows only the epochs of
   the segment it recovered, the one holding its recovery point (a segment rolls every 2 s).
4. The network heals. Z follows L and asks where its epoch 0 ends: L should say M (Z cuts its
   zombie records); with the old epochs forgotten, L says "past your end", and Z keeps them.
5. L stops; Z, in the ISR, leads: at offsets M and on it serves its zombie records instead of L's
   acknowledged ones (`lost-write`, `inconsistent-offsets`).

Expected: loss on 3.7.x; none before 3.7.0 (the fsync was there) or from 3.8.0.
"""

from __future__ import annotations

from kafka_chaos.harness.fsync_disk import FSYNC_TRACKED
from kafka_chaos.nemesis.faults import HEAL, START
from kafka_chaos.scenarios.base import LOSS, LOSS_WORKLOAD, SAFE, Scenario, at_least
from kafka_chaos.scenarios.script import Script, StepTimeout


def script(s: Script) -> None:
    key = s.key(0)
    zombie, leader = s.pair(key, "Z", "L")
    z_id, l_id = s.node_id(zombie), s.node_id(leader)
    controller = s.name("controller", s.active_controller())
    s.sleep(5)  # writes acknowledged by {Z, L}

    # 1. Z a zombie leader; L leads at epoch 1.
    s.cut((zombie, leader), (zombie, controller))
    s.wait_for("L leads", lambda: s.partition(key, ask=leader).leader == l_id, 45)
    s.sleep(6)  # writes acknowledged by L alone, well past Z's zombie records
    epochs = s.epoch_checkpoint(leader, key)  # fsynced when L's epoch began
    if not epochs:
        raise StepTimeout(f"L has no leader-epoch checkpoint for {key}")
    began = int(epochs.split()[-1])  # where L's epoch 1 begins

    def recovered_from_a_later_segment() -> bool:
        point = s.recovery_point(leader, key)
        return max(b for b in s.segments(leader, key) if b <= point) > began

    s.wait_for(
        "L's recovery point on its disk is in a later segment than its epoch's start",
        recovered_from_a_later_segment,
        60,  # Kafka first writes the recovery points 30 s after it starts (log.initial.task.delay.ms)
    )

    # 2-3. The log start moves; L loses power before its checkpoint is on the disk.
    s.delete_records(key, 1, leader)
    s.note("L's leader-epoch checkpoint before the power loss", checkpoint=s.epoch_checkpoint(leader, key))
    s.fault("lose-unflushed", leader)
    s.note("L's leader-epoch checkpoint after the power loss", checkpoint=s.epoch_checkpoint(leader, key))
    s.wait_for("L leads again", lambda: s.partition(key, ask=leader, patience_s=1).leader == l_id, 60)
    s.sleep(3)  # writes at L's new epoch

    # 4. Z follows L again and checks its log against L's epochs.
    s.fault(HEAL.name)
    s.wait_for("Z is back in the ISR", lambda: z_id in s.partition(key, ask=leader).isr, 60)

    # 5. L stops: Z leads.
    s.fault("stop", leader)
    try:
        s.wait_for("Z leads", lambda: s.partition(key, ask=zombie).leader == z_id, 15)
    except StepTimeout:
        s.note("Z did not become leader: the partition waits for L")
    s.sleep(4)  # writes to Z
    s.fault(START.name)
    s.wait_for("L is back", lambda: s.partition(key, ask=leader, patience_s=1).leader != -1, 60)
    s.sleep(8)  # more writes: reads past the rewritten offsets show which acknowledged values are gone


SCENARIO = Scenario(
    name="kafka-16541",
    story=__doc__,
    script=script,
    controllers=1,
    brokers=2,
    disk=FSYNC_TRACKED,
    broker_config={
        "log.flush.interval.messages": "1",  # every message fsynced: the log survives the power loss
        "log.flush.offset.checkpoint.interval.ms": "1000",  # the recovery point on disk within 1 s
        # A new segment every 2 s: after the power loss Kafka recovers (and takes epochs from) only
        # the segment holding the recovery point, not the older ones where L's epoch began.
        "log.roll.ms": "2000",
        "broker.session.timeout.ms": "6000",
        "broker.heartbeat.interval.ms": "500",
    },
    workload={
        **LOSS_WORKLOAD,
        "replication_factor": 2,
        "min_insync_replicas": 1,
        "time_limit": 150.0,
        # A producer per process, one record in flight: every batch holds one record, so Z's log
        # end is always a batch boundary of L's log. Where it is not, Z's fetch from L fails
        # (UnexpectedAppendOffsetException) and Z never rejoins the ISR: the same divergence,
        # without a loss to show.
        "clients_per_producer": 1,
    },
    expect=lambda version, mv: LOSS if at_least(version, "3.7.0") and not at_least(version, "3.8.0") else SAFE,
    shows=("lost-write", "inconsistent-offsets"),
    references=(
        "KAFKA-16541 (apache/kafka#15993): leader-epoch checkpoint not fsynced on truncation; 3.7.x, fixed in 3.8.0",
        "KAFKA-15046 (apache/kafka#14242, 3.7.0): took that fsync out of UnifiedLog.lock",
    ),
    summary="a leader-epoch checkpoint lost to a power loss lets a zombie's records stand (needs FUSE)",
)
