"""stuck-broker-metadata: a broker cut off from the quorum's leader, then healed, stays on stale
metadata: as a KRaft observer it keeps fetching from a node that cannot answer and never catches
up again (KAFKA-19354, fixed in 2025; KAFKA-20514, still open in 2026).

Both bugs are on the observers' path through `controller.quorum.bootstrap.servers`, the
setting a KIP-853 (dynamic quorum) cluster gives its brokers; here every node has it beside the
static `controller.quorum.voters`, which makes the brokers look for the leader through the
bootstrap servers (KafkaRaftClient uses them whenever they are set).

Story (three dedicated controllers, three brokers, the queue workload; an attempt):
1. The controllers agree on a leader, C; B is a broker.
2. B is cut off from C alone for 20 s (it still reaches the other two voters, which answer that C
   leads), then healed; 25 s to catch up.
3. B is cut off from every controller for 20 s, then healed; 25 s.
4. B is cut off from C, and C is killed: the other voters elect a leader while B cannot reach C,
   and C comes back (its container may have a new address) before the cut heals; 45 s.

Shown by the control-plane rule `stuck-broker-metadata`: after the last fault was undone, a broker
that is up stays behind the quorum's high watermark, fetching nothing new, for longer than 30 s + S.
Expected on every version that has the setting (3.8.0 on; older versions ignore it and find the
leader through the voters) while KAFKA-20514 is open; not reproduced so far (docs/scenarios.md says what was tried).
"""

from __future__ import annotations

from kafka_chaos.harness.config import CONTROLLER_PORT, FAULT_DETECTION
from kafka_chaos.nemesis.faults import HEAL, START
from kafka_chaos.scenarios.base import LOSS, SAFE, Scenario, at_least
from kafka_chaos.scenarios.script import Script

CONTROLLERS, BROKERS = 3, 3
CUT_S, SETTLE_S, LAST_SETTLE_S = 20.0, 25.0, 45.0


def script(s: Script) -> None:
    s.wait_for("the controllers agree on a leader", s.controllers_agree, 30)
    s.sleep(8)  # traffic under way
    b = s.name("B", s.cluster.brokers[0].alias)
    c = s.name("C", s.active_controller())
    s.cut((b, c))
    s.sleep(CUT_S)
    s.fault(HEAL.name)
    s.sleep(SETTLE_S)

    s.cut(*[(b, node.alias) for node in s.cluster.controllers])
    s.sleep(CUT_S)
    s.fault(HEAL.name)
    s.sleep(SETTLE_S)

    c = s.name("C2", s.active_controller())
    s.cut((b, c))
    s.fault("kill", c)
    s.wait_for("the other voters elect a leader", lambda: s.active_controller() != c, 30)
    s.sleep(CUT_S / 2)
    s.fault(START.name)
    s.cut((b, c))  # again: C's container may have a new address
    s.sleep(CUT_S / 2)
    s.fault(HEAL.name)
    s.sleep(LAST_SETTLE_S)


SCENARIO = Scenario(
    name="stuck-broker-metadata",
    story=__doc__,
    script=script,
    controllers=CONTROLLERS,
    brokers=BROKERS,
    broker_config={
        **FAULT_DETECTION,
        "controller.quorum.bootstrap.servers": ",".join(
            f"controller-{n}:{CONTROLLER_PORT}" for n in range(1, CONTROLLERS + 1)
        ),
    },
    workload={"keys": 3, "concurrency": 4, "rate": 100.0, "time_limit": 240.0, "final_time_limit": 20.0},
    expect=lambda version, mv: LOSS if at_least(version, "3.8.0") else SAFE,
    shows=("stuck-broker-metadata",),
    references=(
        "KAFKA-19354 (apache/kafka#19854, May 2025): observers stuck on the bootstrap servers after finding the leader",
        "KAFKA-20514 (apache/kafka#22111, open in 2026): an observer stuck on an unroutable leader after a partition",
    ),
    summary="a broker cut off from the quorum's leader stays on stale metadata after the heal (an attempt)",
)
