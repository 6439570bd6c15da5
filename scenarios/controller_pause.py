"""controller-pause: the active controller frozen for longer than a broker session, while it stays
the quorum's leader; on waking it may fence live brokers whose heartbeats it did not count
(KAFKA-17793, KAFKA-15019: heartbeats time out while the controller thread is blocked).

Story (three dedicated controllers, three brokers, the queue workload):
1. The quorum's fetch timeout is long (10 s) and the brokers' session short (4 s), so that a
   leader frozen for 6 s keeps the quorum (its peers wait 10 s before an election) while every
   broker's session runs out on its clock.
2. Three times: the active controller is paused (`docker pause`: the whole JVM frozen, network
   threads included) for 6 s, resumed, and left 12 s to settle.
3. Each broker that no fault touched and that is fenced while the pause holds or within a session
   after it is a spurious fencing: results.json's `control_plane.faults[*].live_brokers_fenced_after_s`.

No anomaly of the contract shows it, so every version is expected clean (no error) and the
scenario is a measure: the spurious fencings per version (docs/scenarios.md). A freeze of the
whole process is harsher than the blocked controller thread that KAFKA-17793's fix (lockless
contact times) addresses: the heartbeats sent during the freeze wait in the socket's buffer, and
whether they are counted before the session check runs on waking is a race on any version.
"""

from __future__ import annotations

from kafka_chaos.harness.config import FAULT_DETECTION
from kafka_chaos.nemesis.faults import RESUME
from kafka_chaos.scenarios.base import SAFE, Scenario
from kafka_chaos.scenarios.script import Script

ROUNDS = 3
FROZEN_S = 6.0
SETTLE_S = 12.0


def script(s: Script) -> None:
    s.wait_for("the controllers agree on a leader", s.controllers_agree, 30)
    s.sleep(8)
    for round_ in range(1, ROUNDS + 1):
        s.name(f"controller {round_}", s.active_controller())
        s.fault("pause", "controller")
        s.sleep(FROZEN_S)
        s.fault(RESUME.name)
        s.wait_for("the controllers agree on a leader", s.controllers_agree, 30)
        s.sleep(SETTLE_S)


SCENARIO = Scenario(
    name="controller-pause",
    story=__doc__,
    script=script,
    controllers=3,
    brokers=3,
    broker_config={
        **FAULT_DETECTION,
        "controller.quorum.fetch.timeout.ms": "10000",
        "controller.quorum.election.timeout.ms": "5000",
    },
    workload={"keys": 2, "concurrency": 4, "rate": 100.0, "time_limit": 150.0, "final_time_limit": 20.0},
    expect=lambda version, mv: SAFE,
    shows=(),
    references=(
        "KAFKA-17793 (apache/kafka#17502, October 2024): a blocked controller fences live brokers; fix version not"
        " confirmed",
        "KAFKA-15019 (3.5.0/3.6.0): heartbeats handled off the controller's event queue",
    ),
    summary="the active controller frozen past a broker session: live brokers fenced on waking (a measure)",
)
