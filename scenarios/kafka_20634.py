"""kafka-20634: a group coordinator that lost its `__consumer_offsets` partition acknowledges
offset commits that its new leader never had.

A group's coordinator is the leader of the group's `__consumer_offsets` partition. It appends a
commit there and answers the member once the followers have it (the high watermark passed it).
KAFKA-20634: when the partition moved away and the old leader became a follower, it truncated
its log to the new leader's, dropping the commits that only it had, yet went on completing the
commits that waited for the high watermark from the watermark it now followed: the member was
told its commit succeeded, and the group's next owner of the key started from an older offset.

The script cuts the group's coordinator off from every other node (clients still reach it) for
12 s, three times, with 12 s of calm after each heal. Cut off, it keeps taking commits that no
follower fetches; the controller fences it and another broker leads the partition; at the heal
it learns so and becomes a follower. The commits it was still holding (the broker waits up to
`offsets.commit.timeout.ms`, raised to 20 s, and the members as long) are then answered. Java
members of one classic group commit synchronously after each poll, one leaving and one
joining every 5 s so that keys change hands. A key's next owner that starts below an
acknowledged commit is `commit-lost`.

Expected: from 4.0 (the group coordinator on the new runtime) up to 4.1.2, 4.2.0 and 4.2.1, and
4.3.0; not 4.2.2, 4.3.1 or 4.4.0, whose `ListenerAdapter` stops passing the high watermark on once
the partition is no longer led (apache/kafka PR #22444; the class is the same in the three, read
from Maven Central's jars). 3.x is not expected to lose commits this way (the Scala coordinator,
other code) and was not run. The runs: docs/scenarios.md.
"""

from __future__ import annotations

from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.nemesis.faults import HEAL
from kafka_chaos.scenarios.base import LOSS, SAFE, Scenario
from kafka_chaos.scenarios.script import Script

ROUNDS, HOLD_S, CALM_S = 3, 12, 12
#: The first release of each line with the fix (none in 4.0 or 4.1).
FIXED = {(4, 2): KafkaVersion(4, 2, 2), (4, 3): KafkaVersion(4, 3, 1)}


def expect(version: KafkaVersion, mv: str | None) -> str:
    if version < KafkaVersion(4, 0, 0) or version >= KafkaVersion(4, 4, 0):
        return SAFE
    fixed = FIXED.get((version.major, version.minor))
    return SAFE if fixed is not None and version >= fixed else LOSS


def script(s: Script) -> None:
    key = s.key(0)
    s.sleep(10)  # the group formed and commits
    for n in range(ROUNDS):
        done = s.fault("partition", "group-coordinator")
        s.note(f"the group's coordinator cut off ({n + 1} of {ROUNDS})", nodes=done.get("nodes"))
        s.sleep(HOLD_S)
        s.fault(HEAL.name)
        s.wait_for("every replica is back in the ISR", lambda: len(s.partition(key).isr) == 3, 60)
        s.sleep(CALM_S)


SCENARIO = Scenario(
    name="kafka-20634",
    story=__doc__,
    script=script,
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
