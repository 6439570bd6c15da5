"""kafka-15489: the quorum's leader, cut off from the other voters, never resigns: two controllers
hold themselves leader in different epochs, and brokers can read two sets of metadata
(KAFKA-15489, fixed in 3.7.0).

Story (three dedicated controllers, three brokers, the queue workload):
1. The controllers agree on a leader, L (each one's own `quorum-state` file names it).
2. L is cut off from the other two voters (the `quorum-leader` partition shape); every broker
   still reaches every controller, L included.
3. The other two stop hearing from L, one of them times out (`controller.quorum.fetch.timeout.ms`),
   and the two elect a leader in a later epoch. Up to 3.6.x, L keeps leading its old epoch: a
   leader without a majority's fetches has no rule to resign, so two controllers hold themselves
   leader, in different epochs, for as long as the cut lasts. From 3.7.0, L resigns once no
   majority has fetched from it within 1.5 x `controller.quorum.fetch.timeout.ms`.
4. The cut heals after 30 s; L learns of the later epoch and follows.

Shown by the control-plane rule `quorum-split-brain`: the two claims overlap, both nodes running,
for longer than 1.5 x `controller.quorum.fetch.timeout.ms` + S (1 s here, the nemesis's fast failure
detection: 6.5 s). L
cannot commit without a majority, so the split is stale metadata, not lost committed records.
"""

from __future__ import annotations

from kafka_chaos.harness.config import FAULT_DETECTION
from kafka_chaos.harness.quorum_state import leader_claims
from kafka_chaos.nemesis.faults import HEAL, PARTITION
from kafka_chaos.scenarios.base import LOSS, SAFE, Scenario, at_least
from kafka_chaos.scenarios.script import Script

CUT_S = 30.0


def _claims(s: Script) -> list[str]:
    return [f"{s.alias(node_id)} in epoch {epoch}" for epoch, node_id in leader_claims(s.cluster.controllers)]


def script(s: Script) -> None:
    s.wait_for("the controllers agree on a leader", s.controllers_agree, 30)
    s.sleep(8)  # traffic under way
    s.name("L", s.active_controller())
    s.fault(PARTITION.name, "controller", shape="quorum-leader")
    s.sleep(CUT_S / 2)
    s.note("controllers holding themselves leader: " + ", ".join(_claims(s)))
    s.sleep(CUT_S / 2)
    s.note("controllers holding themselves leader: " + ", ".join(_claims(s)))
    s.fault(HEAL.name)
    s.wait_for("the controllers agree on a leader again", s.controllers_agree, 30)
    s.sleep(5)


SCENARIO = Scenario(
    name="kafka-15489",
    story=__doc__,
    script=script,
    controllers=3,
    brokers=3,
    broker_config=dict(FAULT_DETECTION),
    workload={"keys": 2, "concurrency": 4, "rate": 100.0, "time_limit": 120.0, "final_time_limit": 20.0},
    expect=lambda version, mv: SAFE if at_least(version, "3.7.0") else LOSS,
    shows=("quorum-split-brain",),
    references=(
        "KAFKA-15489: an isolated KRaft leader never resigns; two leaders in different epochs (3.5.1 and on)",
        "Fixed in 3.7.0 (apache/kafka#14428): the leader resigns after 1.5 x controller.quorum.fetch.timeout.ms "
        "without fetches from a majority",
    ),
    summary="the quorum leader cut off from the other voters keeps leading: a split brain",
)
