"""acks1-failover: acks=1 under leader kills loses acknowledged writes, as the documentation
says it may; the same schedule with acks=all (`acks-all-failover`) loses nothing.

With acks=1 the leader acknowledges a write as soon as it is in its own log. Followers copy it
a little later; here a little is up to a second (replica.fetch.min.bytes makes each follower
fetch wait replica.fetch.wait.max.ms for data to accumulate), which is how far behind a busy
follower often is anyway. The script kills the leader (SIGKILL) twice; each time the
controller fences it after broker.session.timeout.ms and elects a follower from the ISR. The
writes the old leader had acknowledged but no follower had fetched are gone; when the old
leader comes back it truncates them away.

Expected: loss on every version with acks=1 (Kafka's documented trade-off, KAFKA-20554 for
the controlled-shutdown cousin); none with acks=all and min.insync.replicas=2. It is the
proof that the harness sees loss where loss exists, and, with acks=all, that it does not
cry wolf.
"""

from __future__ import annotations

from dataclasses import replace

from kafka_chaos.scenarios.base import LOSS, SAFE, Scenario
from kafka_chaos.scenarios.script import Script

ROUNDS = 2


def script(s: Script) -> None:
    key = s.key(0)
    s.wait_for("the partition has a leader and a full ISR", lambda: len(s.partition(key).isr) == 3, 30)
    s.sleep(4)
    for round_ in range(1, ROUNDS + 1):
        old = s.partition(key).leader
        s.note(f"round {round_}: leader is {s.alias(old)}")
        s.fault("kill", f"leader:{key}")
        s.wait_for("a follower leads", lambda old=old: s.partition(key).leader not in (-1, old), 40)
        s.sleep(3)  # writes to the new leader, at the offsets the lost writes had
        s.fault("start", s.alias(old))
        s.wait_for("the old leader is back in the ISR", lambda old=old: old in s.partition(key).isr, 60)
        s.sleep(3)


_CONFIG = {
    "broker.session.timeout.ms": "6000",  # elections come sooner after a kill
    "broker.heartbeat.interval.ms": "1000",
    "replica.fetch.min.bytes": "1048576",  # followers fetch up to a second late
    "replica.fetch.wait.max.ms": "1000",
}
_WORKLOAD = {
    "keys": 1,
    "replication_factor": 3,
    "concurrency": 4,
    "rate": 300.0,
    "time_limit": 240.0,
    "final_time_limit": 20.0,
}

SCENARIO = Scenario(
    name="acks1-failover",
    story=__doc__,
    script=script,
    brokers=3,
    broker_config=_CONFIG,
    workload={**_WORKLOAD, "acks": "1", "enable_idempotence": False, "min_insync_replicas": 1},
    expect=lambda version, mv: LOSS,
    references=(
        "Kafka documentation, producer acks: acks=1 loses records the leader acknowledged before followers copied them",
    ),
)

#: The control's client processes. Each acks=all send waits for a follower's fetch, up to a
#: second here: with acks1-failover's 4 processes the control acknowledged about 2 sends a
#: second, a VALID verdict on almost nothing; 32 keep 8 times the sends in flight
#: (docs/measurements.md, 2026-11-26).
CONTROL_CONCURRENCY = 32

# The same cluster, script and kills; the producer's acks (and min.insync.replicas) differ, and
# more processes send, so that acks=all's wait for the followers leaves traffic to check.
CONTROL = replace(
    SCENARIO,
    name="acks-all-failover",
    workload={**_WORKLOAD, "acks": "all", "min_insync_replicas": 2, "concurrency": CONTROL_CONCURRENCY},
    expect=lambda version, mv: SAFE,
    references=("acks=all with min.insync.replicas=2: an acknowledged write is on two replicas of the ISR",),
    summary="the acks1-failover kills with acks=all and min.insync.replicas=2: the control, nothing is lost",
)
