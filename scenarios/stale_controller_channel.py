"""stale-controller-channel: a partition leader's AlterPartition channel keeps the controller it last
used after the quorum elected another, and its ISR shrink waits for that channel to time out.

Story (three dedicated controllers, three brokers, fast failure detection: replica lag 3 s):
1. The controllers agree on a leader, C, and chaos/0's ISR holds its three replicas: a leader L,
   followers F and G.
2. F is cut off from L until the ISR drops it, then healed until it is back: L's broker sent both
   changes to C over its AlterPartition channel, which stays connected to C.
3. C is cut off from every other node; the other two voters elect a new leader, C2, which every
   broker's heartbeats reach.
4. F is cut off from L again, C still cut off. L must shrink the ISR once F lags 3 s. A KRaft
   broker's controller channel asks for the controller's address only when it has none: a
   response clears it (a disconnection, NOT_CONTROLLER), nothing else does
   (NodeToControllerChannelManager, 3.9.1; NodeToControllerRequestThread, 4.x). So L's
   AlterPartition goes to C, which does not answer: the shrink waits for the request to time out
   (`controller.socket.timeout.ms`, 30 s), or, with no connection open, for the connection setup
   timeout (`socket.connection.setup.timeout.ms`, 10 s), before L asks C2.

Shown by the control-plane rule `stale-isr-member`: C2 was active and L could reach it, so the
time counts, and F stays in the ISR past 1.5 x `replica.lag.time.max.ms` + S. The workload writes
with acks=1: the count starts at the first write to the partition acknowledged after the cut
(../shared/anomalies.md, amended 2026-12-06), and with acks=all none is until the ISR drops F, so
the rule cannot see the wait there (on 3.9.1 the writes stalled 34 s instead). Found by `explore`
on 3.9.1 (a 13.3 s shrink: docs/measurements.md); no upstream fix was found in 3.9 to 4.4's code
(../shared/research/kafka-4x-bugs-2026.md, section 1), so every version is expected to show it.
It delays an ISR shrink, and acks=all writes wait for F meanwhile; nothing acknowledged is lost.
"""

from __future__ import annotations

from kafka_chaos.harness.config import FAULT_DETECTION
from kafka_chaos.nemesis.faults import HEAL
from kafka_chaos.scenarios.base import LOSS, Scenario
from kafka_chaos.scenarios.script import Script

LAG_S = int(FAULT_DETECTION["replica.lag.time.max.ms"]) / 1000


def script(s: Script) -> None:
    key = s.key(0)
    s.wait_for("the controllers agree on a leader", s.controllers_agree, 30)
    s.wait_for("chaos/0's ISR holds its three replicas", lambda: len(s.partition(key).isr) == 3, 30)
    state = s.partition(key)
    leader, f, g = state.leader, *[r for r in state.replicas if r != state.leader][:2]
    ll, ff, gg = s.name("L", s.alias(leader)), s.name("F", s.alias(f)), s.name("G", s.alias(g))
    c = s.name("C", s.active_controller())
    s.sleep(3)  # traffic under way

    # 2. L's channel to C: a shrink and an expansion sent to C.
    s.cut((ll, ff))
    s.wait_for("the ISR drops F (sent to C)", lambda: f not in s.partition(key, ask=gg).isr, 40)
    s.fault(HEAL.name)
    s.wait_for("F is back in the ISR (sent to C)", lambda: f in s.partition(key, ask=gg).isr, 40)
    s.sleep(2)

    # 3. C cut off from everyone; the others elect C2.
    others = ",".join(n.alias for n in s.cluster.nodes if n.alias != c)
    s.cut((c, others))
    s.wait_for("another controller leads", lambda: s.active_controller() != c, 30)
    s.name("C2", s.active_controller())
    s.sleep(2)

    # 4. F cut off from L again: the shrink is due after the lag; see when it comes.
    s.cut((c, others), (ll, ff))
    cut_at = s.elapsed()
    waited = s.wait_for("the ISR drops F again", lambda: f not in s.partition(key, ask=gg).isr, 90)
    s.note(f"the ISR dropped F {waited:.1f} s after the cut (replica lag {LAG_S:g} s)", cut_at_s=round(cut_at, 3))
    s.fault(HEAL.name)
    s.wait_for("F is back in the ISR", lambda: f in s.partition(key, ask=gg).isr, 60)
    s.sleep(5)


SCENARIO = Scenario(
    name="stale-controller-channel",
    story=__doc__,
    script=script,
    controllers=3,
    brokers=3,
    broker_config=dict(FAULT_DETECTION),
    workload={
        "keys": 1,
        "concurrency": 4,
        "rate": 100.0,
        "acks": "1",
        "enable_idempotence": False,
        "time_limit": 150.0,
        "final_time_limit": 20.0,
    },
    expect=lambda version, mv: LOSS,
    shows=("stale-isr-member",),
    references=(
        "No upstream JIRA found: a KRaft broker's controller channel re-resolves the controller only on a "
        "disconnection, NOT_CONTROLLER or an authentication error (3.9.1 NodeToControllerChannelManager.scala "
        "L335-358; 4.3.1 NodeToControllerRequestThread L129-156)",
        "Nearest: linkedin/kafka#425 (LIKAFKA-49304, always query the latest controller), KAFKA-20247",
    ),
    summary="an ISR shrink waits on a channel to the deposed controller",
)
