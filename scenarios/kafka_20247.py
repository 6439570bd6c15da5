"""kafka-20247: a controller whose registration request timed out never sends it again, so it stays
unregistered, and the next feature upgrade is refused.

Since KIP-919 (3.7.0) each controller registers itself with the active controller
(ControllerRegistration, a `RegisterControllerRecord` in the metadata log), once the cluster's
metadata version is 3.7-IV0 or later. The registration manager sends one request at a time: a
flag says one is pending, and the response clears it. The channel gives a request 5 s (the
registration channel's retry timeout, and its network timeout); then it calls the handler's
`onTimeout`, which scheduled a retry but left the flag set. Every retry then found a request
"pending" and sent nothing ("waiting for the previous RPC to complete"), for as long as the process
lives. Fixed by apache/kafka PR #21619 (KAFKA-20247), in 4.2.1 and 4.3.0; 3.7.0 to 4.2.0 have the
bug (3.9.2, 4.0.2 and 4.1.2 included), as read from each release's sources
(../shared/research and docs/scenarios.md).

Story (three dedicated controllers, one broker, formatted at metadata version 3.6, where no
controller registers yet):
1. The controllers agree on a leader, C; X is another controller.
2. X can open no new connection to the controllers' listener (`block-connect`: the SYN is
   dropped); its quorum connection, open since it joined, carries on, so X keeps fetching the
   metadata log. Its registration channel has never been used, so it has no connection yet.
3. An operator upgrades metadata.version to 3.7-IV0. Every controller replays it and registers;
   X's channel cannot connect, and after 5 s gives its request up (X's log: "channel manager timed
   out before sending the request"). The request never left X: a dropped request on an open
   connection would not do, as TCP delivers it at the heal and X registers late.
4. The hold is healed and the cluster settles for 20 s: a fixed release sends the registration
   again and X registers.
5. The operator upgrades metadata.version to 3.7-IV2. The active controller checks that every
   voter registered and supports the level: with X unregistered it refuses ("controller X has not
   registered, and may not support this feature").

Shown by the scenario's own finding, `controller-unregistered` (no anomaly of the contract is
about controller registrations): the second upgrade refused because a voter that ran and fetched
throughout has not registered. The data plane is not at stake: the broker and its writes are
unaffected.
"""

from __future__ import annotations

from kafka_chaos.nemesis.faults import BLOCK_CONNECT, HEAL
from kafka_chaos.scenarios.base import LOSS, SAFE, Scenario, at_least
from kafka_chaos.scenarios.script import Script, StepTimeout

#: The metadata versions: formatted below controller registration, then the first level with it,
#: then one more that every release from 3.7.0 on knows and ships as production.
FORMATTED, FIRST, SECOND = "3.6", "3.7-IV0", "3.7-IV2"
#: How long X is kept from connecting: past the channel's 5 s, with room for a slow machine.
HOLD_S = 15.0
#: How long a fixed release has to register after the heal (its backoff is 100 ms doubling).
SETTLE_S = 20.0
GAVE_UP = "timed out before sending the request"
REGISTERED = "Our registration has been persisted to the metadata log"
NOT_REGISTERED = "has not registered"
FINDING = "controller-unregistered"


def script(s: Script) -> None:
    s.wait_for("the controllers agree on a leader", s.controllers_agree, 30)
    c = s.name("C", s.active_controller())
    x = s.name("X", next(n.alias for n in s.cluster.controllers if n.alias != c))
    s.sleep(3)  # traffic under way

    s.fault(BLOCK_CONNECT.name, x)
    first = s.upgrade_metadata(FIRST)
    if "error" in first:
        raise StepTimeout(f"the upgrade to {FIRST} was refused: {first['error']}")
    s.wait_for("X's registration channel gives its request up", lambda: GAVE_UP in s.server_log(x), 30)
    s.sleep(HOLD_S)
    s.fault(HEAL.name)
    s.sleep(SETTLE_S)

    registered = REGISTERED in s.server_log(x)
    s.note(f"X's log says it registered: {registered}")
    second = s.upgrade_metadata(SECOND)
    refusal = second.get("error", "")
    if NOT_REGISTERED in refusal:
        s.observe(FINDING, controller=x, node_id=s.node_id(x), refusal=refusal, registered_in_log=registered)
    elif refusal:
        raise StepTimeout(f"the upgrade to {SECOND} was refused for another reason: {refusal}")
    s.sleep(3)


SCENARIO = Scenario(
    name="kafka-20247",
    story=__doc__,
    script=script,
    controllers=3,
    brokers=1,
    metadata_version=FORMATTED,
    workload={
        "keys": 1,
        "concurrency": 2,
        "rate": 50.0,
        "replication_factor": 1,
        "min_insync_replicas": 1,
        "time_limit": 120.0,
        "final_time_limit": 15.0,
    },
    expect=lambda version, mv: SAFE if at_least(version, "4.2.1") else LOSS,
    shows=(FINDING,),
    since="3.7.0",
    references=(
        "KAFKA-20247: apache/kafka PR #21619 (ControllerRegistrationManager clears its pending flag on a "
        "timeout), in 4.2.1 and 4.3.0; the same bug as KAFKA-18874 (PR #19321, never merged)",
        "The registration channel's 5 s retry timeout: ControllerServer (3.7.2 to 4.3.0); the refusal: "
        "FeatureControlManager.reasonNotSupported (4.2.0)",
    ),
    summary="a controller's registration times out once and is never sent again",
)
