"""kafka-20732: a freshly started leader of a tiered partition counts its local log twice and
deletes data inside retention from remote storage and, through the log start offset, from every
replica.

Story (one controller, brokers A, B, C; replication factor 3, min.insync.replicas 2, acks=all;
a tiered topic of several partitions that keeps its local copies, `retention.bytes` R above
anything the run writes to a partition, so retention may delete nothing):
1. The workload writes until every partition holds more than half of R (on disk; it is also
   in remote storage, but for the segment being written).
2. A, B and C are stopped cleanly, one after another: C, the last, leads every partition when
   it stops. C is started first and is elected leader again; then B and A.
3. A broker keeps the highest offset in remote storage of a partition's log in memory
   (`UnifiedLog.highestOffsetInRemoteStorage`), -1 when the log is loaded. It is set by the
   copy task (leader) and the follower task, never by the expiration task, which applies
   retention; all three start with no delay on separate thread pools, and wait for the remote
   log metadata to be ready. The copier pool here has one thread, so C's copy tasks run one
   after another, behind the copies of segments rolled before the stop; the expiration pool has
   a thread per partition. An expiration task that runs before its partition's copy task sees
   -1: `onlyLocalLogSegmentsSize()` is then the whole local log, which `remoteLogSizeBytes`
   counts too, so the partition seems twice its size, more than R; the task deletes the oldest
   remote segments for the difference and moves the log start offset past them. Every replica
   deletes its local segments below it: acknowledged writes inside retention are gone (the
   lagging consumers never read them: `lost-write`), and no partition begins at 0 any more
   (`log-start-moved`).
4. The writes go on until some partition nears R; the final read starts from the log start.

Why a restart of every broker: the offset is -1 only in a log just loaded (a broker started, a
replica created); a follower's task sets it a second after the metadata is ready, so a failover
to a running follower does not open the race. The brokers are stopped with SIGTERM (`stop`),
so nothing acknowledged is lost by the stops themselves: on 4.3.1 the last two did not exit
within 30 s and were killed, but their logs had been closed (no recovery at the restart).

Expected: loss on 3.9.0 to 4.3.1 (KAFKA-16853 split the remote log manager's one task, which
copied, setting the offset, before it cleaned up, into the copy, expiration and follower tasks
in 3.9.0); fixed in 4.3.2 and 4.4.0 (apache/kafka PR #22661: the expiration task seeds the offset
from the remote metadata first). The backports to 3.9, 4.0, 4.1 and 4.2 (PRs #22735-#22738) were
open in 2026-07: no release of those lines has the fix. Not before 3.9.0 (not run).
"""

from __future__ import annotations

from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.scenarios.base import LOSS, LOSS_WORKLOAD, SAFE, Scenario
from kafka_chaos.scenarios.script import Script

#: Partitions: each one's copy task waits behind the others' on the one copier thread.
KEYS = 6
#: The topic's retention.bytes. The run writes less than this to any partition (the script ends
#: before one holds END of it), so retention may delete nothing.
RETENTION_BYTES = 128 * 1024
#: Every partition holds this much of RETENTION_BYTES when the brokers stop: counted twice, more
#: than RETENTION_BYTES.
TRIGGER = 0.65
END = 0.85


def expect(version: KafkaVersion, mv: str | None) -> str:
    if version < KafkaVersion(3, 9, 0) or version >= KafkaVersion(4, 4, 0):
        return SAFE
    if (version.major, version.minor) == (4, 3) and version >= KafkaVersion(4, 3, 2):
        return SAFE
    return LOSS


def sizes(s: Script) -> dict[str, int]:
    """Per partition, the bytes of its largest replica's local log (all of it: local copies are kept)."""
    return {s.key(p): max(s.log_bytes(b.alias, s.key(p)) for b in s.cluster.brokers) for p in range(KEYS)}


def script(s: Script) -> None:
    keys = [s.key(p) for p in range(KEYS)]
    s.wait_for("every partition has a full ISR", lambda: all(len(s.partition(k).isr) == 3 for k in keys), 60)

    # 1. Enough data that counting it twice breaches retention.bytes.
    s.wait_for(
        f"every partition holds {TRIGGER:.0%} of retention.bytes",
        lambda: min(sizes(s).values()) >= TRIGGER * RETENTION_BYTES,
        180,
        every_s=1.0,
    )
    s.note("partition sizes before the stops", sizes=sizes(s))

    # 2. Stop every broker cleanly; the last one leads everything, and is started first.
    order = [b.alias for b in s.cluster.brokers]
    for alias in order:
        s.fault("stop", alias)
    last = s.name("C", order[-1])
    s.fault("start", last)
    s.wait_for(
        "C leads every partition again",
        lambda: all(s.partition(k, ask=last).leader == s.node_id(last) for k in keys),
        60,
    )
    for alias in reversed(order[:-1]):
        s.fault("start", alias)
    s.wait_for("every partition has a full ISR again", lambda: all(len(s.partition(k).isr) == 3 for k in keys), 90)
    s.note(
        "lowest local segment per partition on C",
        bases={k: (s.segments(last, k) or [None])[0] for k in keys},
    )

    # 4. More writes past the lost offsets, short of retention.bytes.
    deadline = s.elapsed() + 20
    while s.elapsed() < deadline and max(sizes(s).values()) < END * RETENTION_BYTES:
        s.sleep(1)
    s.note("partition sizes at the end", sizes=sizes(s))


SCENARIO = Scenario(
    name="kafka-20732",
    story=__doc__,
    script=script,
    controllers=1,
    brokers=3,
    tiered=True,
    broker_config={
        # One copier thread: a new leader's copy tasks, which seed the highest remote offset,
        # queue behind each other; the expiration tasks each have a thread.
        "remote.log.manager.copier.thread.pool.size": "1",
        "remote.log.manager.expiration.thread.pool.size": str(KEYS),
    },
    workload={
        **LOSS_WORKLOAD,
        "keys": KEYS,
        "replication_factor": 3,
        "min_insync_replicas": 2,
        # The final read polls two records at a time through every partition from its start.
        "final_time_limit": 60.0,
        "topic_config": {
            # Local copies kept (-2: as long as retention.ms, retention.bytes): the double count is the whole log.
            "local.retention.ms": "-2",
            "local.retention.bytes": "-2",
            "retention.bytes": str(RETENTION_BYTES),
        },
    },
    expect=expect,
    # The deleted writes no poll read, and the log start offsets past 0 at the end.
    shows=("lost-write", "log-start-moved"),
    references=(
        "KAFKA-20732: size retention on a new leader while highestOffsetInRemoteStorage is -1; apache/kafka "
        "PR #22661, in 4.3.2 and 4.4.0; backports #22735 (3.9), #22738 (4.0), #22737 (4.1), #22736 (4.2) open "
        "in 2026-07",
        "KAFKA-16853 (PR #16502, 3.9.0): the remote log manager's task split into copy, expiration and "
        "follower tasks on separate pools",
    ),
    summary="every broker restarted cleanly: the new leader's size retention counts its local log twice "
    "and deletes in-retention data",
)
