"""kafka-14139: a stale ISR expansion lets a replica with an empty disk into the ISR, and it
becomes leader: acknowledged acks=all writes are lost (KAFKA-14139, fixed by KIP-903).

Story (one controller, brokers A and B, a topic of replication factor 2, min.insync.replicas
1, acks=all):
1. A and B are cut apart and B stops cleanly: the controller takes it out of the ISR. B starts
   again, still cut off from A. Writes go on, acknowledged by A alone.
2. A is cut off from the controller; A and B can talk again. B catches up, so A sends an
   AlterPartition adding B to the ISR. It cannot reach the controller: it is held back. A's
   session timeout (broker.session.timeout.ms, 60 s here) is longer than the whole hold, so
   A stays registered and unfenced.
3. A is cut off from B as well. B stops (cleanly, so that it is fenced at once and can
   register again without waiting out its session), its disk is wiped, and it starts again:
   it formats an empty log directory and registers with a new broker epoch.
4. A reaches the controller again, and its held AlterPartition lands. Before KIP-903 the
   controller checks only that B is registered and unfenced, which the new B is: B joins the
   ISR with an empty log. With KIP-903 (metadata version 3.5-IV1 and later) the request
   carries the broker epoch B had when it fetched, which is stale: INELIGIBLE_REPLICA.
5. A stops. Its controlled shutdown hands leadership to the other ISR member: B, whose log is
   empty. Everything A had acknowledged is gone; when A comes back it truncates to B's log.
   (A kill would end the same way, only after A's 60 s session ran out. It has to be soon:
   A itself would drop B from the ISR again once B's lag passed replica.lag.time.max.ms,
   which is why that is 120 s here.)

Expected: loss on 3.4.x; no loss on 3.5.0 and later formatted at metadata version 3.5-IV1 or
later (the default for a new cluster); loss again on 3.5+ formatted below it (e.g.
`--metadata-version 3.4-IV0`).

The fault sequence is the same on every version: only the controller's answer in step 4
differs, and the scenario's log (scenario.json) says which it was. On 4.x the sequence cannot
be set up: a cleanly stopped broker keeps its session there until broker.session.timeout.ms
runs out, so B registers again only after A's session (cut off since before B stopped) has
run out too. The script then stops at step 1 and the run counts as not set up.
"""

from __future__ import annotations

from kafka_chaos.scenarios.base import LOSS, LOSS_WORKLOAD, SAFE, Scenario, at_least, metadata_at_least
from kafka_chaos.scenarios.script import Script, StepTimeout


def script(s: Script) -> None:
    key = s.key(0)
    a, b = s.pair(key, "A", "B")
    a_id, b_id = s.node_id(a), s.node_id(b)
    controller = s.name("controller", s.active_controller())
    s.sleep(3)  # writes acknowledged by {A, B}

    # 1. B leaves the ISR: cut off from A, it stops cleanly (the controller drops it from the
    #    ISR at once) and starts again with its disk, unable to fetch.
    s.cut((a, b))
    s.fault("stop", b)
    s.wait_for("the ISR is {A}", lambda: s.partition(key, ask=a).isr == [a_id], 30)
    s.fault("start", b)
    s.cut((a, b))  # again: B's container may have a new address
    s.wait_for("B is back, out of the ISR", lambda: s.partition(key, ask=b).isr == [a_id], 60)
    s.sleep(2)  # writes acknowledged by A alone

    # 2. A loses the controller; B catches up, and A's AlterPartition adding B is held back.
    s.cut((a, controller))
    behind = s.log_bytes(a, key)
    s.wait_for("B caught up with A", lambda: s.log_bytes(b, key) >= behind, 60)
    s.sleep(2)  # A has sent its AlterPartition; it waits for a controller it cannot reach

    # 3. B goes, its disk wiped, and comes back empty with a new broker epoch.
    s.cut((a, controller), (a, b))
    s.fault("stop", b)
    s.fault("wipe", b)  # empties the data directory and starts B
    s.cut((a, controller), (a, b))
    s.wait_for("B registered again, empty", lambda: s.partition(key, ask=b).leader == a_id, 60)

    # 4. A reaches the controller again: its stale ISR change lands, or is refused.
    s.cut((a, b))
    try:
        s.wait_for("B joined the ISR with an empty log", lambda: b_id in s.partition(key, ask=b).isr, 30)
    except StepTimeout:  # the fixed controller refuses it: nothing more to set up
        s.note("the controller did not take the stale ISR change (KIP-903: INELIGIBLE_REPLICA)")

    # 5. A stops; its controlled shutdown hands leadership to B if B is in the ISR.
    s.fault("stop", a)
    try:
        s.wait_for("B leads", lambda: s.partition(key, ask=b).leader == b_id, 20)
    except StepTimeout:
        s.note("B did not become leader: the partition waits for A")
    s.sleep(4)  # writes to B at the new leader epoch
    s.fault("heal")
    s.fault("start", a)
    s.wait_for("A is back", lambda: s.partition(key, ask=b).leader != -1, 60)
    s.sleep(8)  # more writes: reads past the lost offsets show which acknowledged values are gone


def expect(version, metadata_version) -> str:
    fixed = at_least(version, "3.5.0") and metadata_at_least(metadata_version, "3.5-IV1")
    return SAFE if fixed else LOSS


SCENARIO = Scenario(
    name="kafka-14139",
    story=__doc__,
    script=script,
    controllers=1,
    brokers=2,
    broker_config={
        "broker.session.timeout.ms": "60000",  # A stays registered while cut off from the controller
        # B's lag never takes it out of the ISR here: the stale expansion must not be undone by
        # A's own shrink before the controller has moved leadership to B.
        "replica.lag.time.max.ms": "120000",
    },
    workload={**LOSS_WORKLOAD, "replication_factor": 2, "min_insync_replicas": 1, "time_limit": 180.0},
    expect=expect,
    references=("KIP-903 / KAFKA-14139: fixed in 3.5.0, in effect from metadata version 3.5-IV1",),
)
