"""kafka-18138: a broker killed in the same moment as the active controller is never fenced: the
new active controller keeps it registered and unfenced, and its partitions stay led by a dead
broker (KAFKA-18138, apache/kafka#18009, merged December 2024; KAFKA-19130 after it).

Story (three dedicated controllers, three brokers, the queue workload):
1. The controllers agree on a leader, C; B leads the workload's partition.
2. C and B are killed in one operation (the target `controller+leader:KEY`, a few milliseconds
   apart).
3. The other two controllers elect a leader. Where the bug is, the new active controller starts
   tracking the brokers' sessions only from their next heartbeat, and B never sends one: B stays
   unfenced in the committed metadata for as long as it is down, and keeps its leaderships.
   Where it is fixed, B is fenced `broker.session.timeout.ms` after the new controller took over.
4. Both are started again after 30 s, and B catches up.

Shown by the control-plane rule `unfenced-down-broker`: a killed broker still unfenced in the
committed metadata `broker.session.timeout.ms` + S after its kill took effect (4 s + 5 s here).

Expected: no released version has the bug, so every version is expected clean and the scenario
guards against its return. The bug was a regression of KAFKA-17793 (apache/kafka#17502, merged to
trunk in October 2024), which moved the brokers' contact times into a new tracker that the next
controller's activation did not fill; before it, activation registered every broker with a
contact time of "now" (3.9.1's `BrokerHeartbeatManager.register` calls `touch`), so the dead broker
was fenced a session after the new controller took over. Both changes first shipped in 4.0.0
(its `ClusterControlManager.activate()` sets each broker's contact time), and no 3.x jar holds the
tracker. Runs agree: 3.6.2 to 3.9.1 and 4.3.1 fenced B about 5 s after the kill (docs/scenarios.md).
"""

from __future__ import annotations

from kafka_chaos.harness.config import FAULT_DETECTION
from kafka_chaos.nemesis.faults import START
from kafka_chaos.scenarios.base import SAFE, Scenario
from kafka_chaos.scenarios.script import Script

DOWN_S = 30.0


def script(s: Script) -> None:
    key = s.key(0)
    s.wait_for("the controllers agree on a leader", s.controllers_agree, 30)
    s.wait_for("the partition has a leader and a full ISR", lambda: len(s.partition(key).isr) == 3, 30)
    s.sleep(8)  # traffic under way
    s.name("C", s.active_controller())
    b = s.name("B", s.alias(s.partition(key).leader))
    s.fault("kill", f"controller+leader:{key}")
    s.sleep(DOWN_S / 2)
    state = s.partition(key)
    s.note(f"{key} led by {s.alias(state.leader) if state.leader >= 0 else 'none'}, ISR {state.isr}")
    s.sleep(DOWN_S / 2)
    s.fault(START.name)  # both
    s.wait_for("B is back in the ISR", lambda: s.node_id(b) in s.partition(key).isr, 60)
    s.sleep(5)


SCENARIO = Scenario(
    name="kafka-18138",
    story=__doc__,
    script=script,
    controllers=3,
    brokers=3,
    broker_config=dict(FAULT_DETECTION),
    workload={
        "keys": 1,
        "replication_factor": 3,
        "concurrency": 4,
        "rate": 100.0,
        "time_limit": 150.0,
        "final_time_limit": 20.0,
    },
    expect=lambda version, mv: SAFE,
    shows=("unfenced-down-broker",),
    references=(
        "KAFKA-18138 (apache/kafka#18009, December 2024): a broker killed with the active controller is never fenced",
        "KAFKA-19130 (apache/kafka#19454, April 2025): fenced brokers are not tracked on activation",
        "KAFKA-17793 (apache/kafka#17502, October 2024) introduced it; both first released in 4.0.0: no release has it",
    ),
    summary="a broker killed with the active controller is never fenced by the next one (no release; a guard)",
)
