"""kafka-20634: a group coordinator that lost its `__consumer_offsets` partition acknowledges
offset commits that its new leader never had.

A group's coordinator is the leader of the group's `__consumer_offsets` partition. It appends a
commit there and answers the member once the followers have it (the high watermark passed it).
KAFKA-20634: when the partition moved away and the old leader became a follower, it truncated
its log to the new leader's, dropping the commits that only it had, yet went on completing the
commits that waited for the high watermark from the watermark it now followed: the member was
told its commit succeeded, and the group's next owner of the key started from an older offset.

Three dedicated controllers and three brokers: the coordinator is a broker only, so cutting it
off leaves the quorum whole. Java members of one classic group commit synchronously after each
poll, one leaving and one joining every 5 s so that keys change hands. The script cuts the
group's coordinator off from every other node (clients still reach it), three times. Cut off, it
keeps taking commits that no follower fetches, and the members wait for them. The controller
fences it and another broker leads the partition; the script then commits offsets of a neighbour
group (one whose offsets live in the same partition) through the other brokers, twenty times, so
that the new leader's high watermark passes every offset the old leader holds, and heals: the
old leader learns it follows, truncates, and takes the new leader's high watermark. All before
the members' session timeout, after which they would leave for the new coordinator (their
heartbeats wait behind the held commits). 12 s of calm follow each heal. A key's next owner that
starts below an acknowledged commit is `commit-lost`.

An earlier script held the cut for 12 s with nothing else writing: the members' sessions ran out
first, their commits went to the new coordinator, and the new leader took no write before the
heal, so the path was never reached (docs/scenarios.md).

Expected: from 4.0 (the group coordinator on the new runtime) up to 4.1.2, 4.2.0 and 4.2.1, and
4.3.0; not 4.2.2, 4.3.1 or 4.4.0, whose `ListenerAdapter` stops passing the high watermark on once
the partition is no longer led (apache/kafka PR #22444; the class is the same in the three, read
from Maven Central's jars). 3.x is not expected to lose commits this way (the Scala coordinator,
other code) and was not run. The runs: docs/scenarios.md.
"""

from __future__ import annotations

import itertools

from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from kafka_chaos.harness.names import OFFSETS_PARTITIONS, coordinator_partition, group_id
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.nemesis.faults import HEAL
from kafka_chaos.scenarios.base import LOSS, SAFE, Scenario
from kafka_chaos.scenarios.script import Script

#: Cut-offs, calm after each, and the most the script waits for the partition to move. The heal
#: must come before the members' session timeout (the workload's 10 s): their heartbeats wait
#: behind the commits the cut-off coordinator holds, and a member whose session ran out leaves
#: for the new coordinator, its commit with it.
ROUNDS, CALM_S, MOVE_S = 3, 12, 9
#: Commits of the neighbour group through the new leader: its high watermark must pass the
#: offsets of every commit the old leader holds (one per member at most).
NEIGHBOUR_COMMITS = 20
#: The first release of each line with the fix (none in 4.0 or 4.1).
FIXED = {(4, 2): KafkaVersion(4, 2, 2), (4, 3): KafkaVersion(4, 3, 1)}


def expect(version: KafkaVersion, mv: str | None) -> str:
    if version < KafkaVersion(4, 0, 0) or version >= KafkaVersion(4, 4, 0):
        return SAFE
    fixed = FIXED.get((version.major, version.minor))
    return SAFE if fixed is not None and version >= fixed else LOSS


def neighbour(group: str, partitions: int) -> str:
    """A group id whose offsets live in the same `__consumer_offsets` partition as `group`'s."""
    home = coordinator_partition(group, partitions)
    names = (f"{group}-n{i}" for i in itertools.count())
    return next(n for n in names if coordinator_partition(n, partitions) == home)


def commit_beside(s: Script, group: str, away_from: str, count: int) -> int:
    """`count` offset commits of `group` through the brokers other than `away_from` (which the
    client is never told of): writes only the partition's new leader can take. How many were
    acknowledged."""
    servers = [n.bootstrap_server for n in s.cluster.brokers if n.alias != away_from and n.bootstrap_server]
    consumer = KafkaConsumer(
        bootstrap_servers=servers, group_id=group, enable_auto_commit=False, request_timeout_ms=3000
    )
    tp = TopicPartition(s.topic, 0)
    acknowledged = 0
    try:
        consumer.assign([tp])
        for offset in range(1, count + 1):
            try:
                consumer.commit({tp: OffsetAndMetadata(offset, "", -1)}, timeout_ms=3000)
                acknowledged += 1
            except Exception:
                continue
    finally:
        consumer.close(autocommit=False)
    return acknowledged


def script(s: Script) -> None:
    key = s.key(0)
    group = group_id(s.cluster.run_id)
    partitions = int(s.cluster.config.get(*OFFSETS_PARTITIONS))
    offsets = f"__consumer_offsets/{coordinator_partition(group, partitions)}"
    other = neighbour(group, partitions)
    s.sleep(10)  # the group formed and commits
    for n in range(ROUNDS):
        done = s.fault("partition", "group-coordinator")
        cut = done["nodes"][0]
        s.note(f"the group's coordinator cut off ({n + 1} of {ROUNDS})", nodes=done.get("nodes"))
        ask = next(b.alias for b in s.cluster.brokers if b.alias != cut)
        s.wait_for(
            f"{offsets} led by another broker than {cut}",
            lambda ask=ask, cut=cut: s.partition(offsets, ask=ask).leader not in (-1, s.node_id(cut)),
            MOVE_S,
        )
        acknowledged = commit_beside(s, other, cut, NEIGHBOUR_COMMITS)
        s.note(f"{acknowledged} of {NEIGHBOUR_COMMITS} commits of {other} through the new leader")
        s.fault(HEAL.name)
        s.wait_for("every replica is back in the ISR", lambda: len(s.partition(key).isr) == 3, 60)
        s.sleep(CALM_S)


SCENARIO = Scenario(
    name="kafka-20634",
    story=__doc__,
    script=script,
    controllers=3,
    brokers=3,
    broker_config={
        "offsets.commit.timeout.ms": "20000",
        "broker.session.timeout.ms": "6000",
        "broker.heartbeat.interval.ms": "1000",
    },
    workload={
        "client": "java",
        "consumer": "subscribe",
        "commit": "sync",
        "group_churn": 5.0,
        "keys": 4,
        "concurrency": 6,
        "rate": 300.0,
        "request_timeout_ms": 20000,
        "delivery_timeout_ms": 40000,
        # Room for the three rounds (some 80 s) and their waits for the ISR (measurements.md,
        # 2026-11-29).
        "time_limit": 120.0,
        "final_time_limit": 60.0,
    },
    expect=expect,
    shows=("commit-lost",),
    references=(
        "KAFKA-20634: a group coordinator that became a follower completed pending offset commits from the "
        "new leader's high watermark; apache/kafka PR #22444 (ListenerAdapter), in 4.2.2, 4.3.1 and 4.4.0",
    ),
    summary="the group's coordinator cut off while members commit: at the heal it answers commits its "
    "truncated log no longer holds",
)
