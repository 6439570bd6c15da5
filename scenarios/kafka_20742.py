"""kafka-20742: partitions added to a topic a share group reads start at the latest offset, so
the group never delivers the records written to them before it first read them.

A share group keeps, per partition, a start offset (SPSO): records below it are done. The group
coordinator notices subscribed partitions it has not initialised on a member's heartbeat, new
partitions of a known topic too, and asks the share coordinator to initialise each at offset -1;
the partition's leader resolves -1 by the group's `share.auto.offset.reset` when it first loads
the share partition. With `latest` (Kafka's default) a new partition starts at its end as it is
then: what producers wrote to it in the heartbeat or two before that is skipped. 4.4.0
(apache/kafka PR #22714) initialises the new partitions of a topic the group already reads at
offset 0. Read from the releases' sources: 4.1.0 to 4.3.2 have the bug (docs/scenarios.md).

Story (three brokers; Java producers and six members of one share group; the group starts from
the earliest offset, as every share run here does, so that nothing written before the members
joined is skipped):
1. The members join and deliver from the topic's three partitions.
2. An operator sets the group's `share.auto.offset.reset` to `latest`, Kafka's default (a group
   whose partitions are all initialised is not affected by it).
3. An operator adds three partitions; the producers write to all six at once.
4. The members are assigned the new partitions on their next heartbeats and deliver from them.

Shown as `share-lost`: acknowledged values of a new partition that no member was given, below
the group's final start offset of that partition. On a fixed release every value is delivered.
"""

from __future__ import annotations

from kafka_chaos.scenarios.base import LOSS, SAFE, Scenario, at_least
from kafka_chaos.scenarios.script import Script

#: The topic's partitions before and after the operator adds some.
BEFORE, AFTER = 3, 6
#: How long the members deliver from the new partitions before the final drain: heartbeats of
#: 5 s (Kafka's default and minimum) assign them, with room for a slow machine.
AFTER_S = 25.0

WORKLOAD = {
    "client": "java",
    "consumer": "share",
    "keys": BEFORE,
    "concurrency": 6,
    "rate": 200.0,
    "share_lock_ms": 15000,
    "share_release": 0.0,
    "share_stalls": 0.0,
    "time_limit": 90.0,
    "final_time_limit": 30.0,
}


def script(s: Script) -> None:
    s.sleep(12)  # the members joined and deliver (the first delivery takes some 8 s)
    s.set_group_config({"share.auto.offset.reset": "latest"})
    s.sleep(2)
    s.add_partitions(AFTER)
    s.sleep(AFTER_S)


SCENARIO = Scenario(
    name="kafka-20742",
    story=__doc__,
    script=script,
    brokers=3,
    workload=WORKLOAD,
    expect=lambda version, mv: SAFE if at_least(version, "4.4.0") else LOSS,
    shows=("share-lost",),
    since="4.1.0",
    references=(
        "KAFKA-20742: apache/kafka PR #22714 (new partitions of a topic the share group already reads are "
        "initialised at offset 0), in 4.4.0; 4.1.0 to 4.3.2 initialise them at -1, resolved by "
        "share.auto.offset.reset (read from the releases' sources and bytecode)",
    ),
    summary="partitions added to a topic a share group reads: the records written before the group "
    "first reads them are never delivered",
)
