"""kafka-19789: a broker returns the same acquired offset twice in one share fetch, and the
member acknowledges the duplicate.

The broker's answer to a share fetch lists the record batches a member acquired. KAFKA-19789:
brokers returned one offset twice in a response, and the Java client handed both to the
application and acknowledged the second as a gap. The fix (apache/kafka PR #20752, in the
Java client from 4.2.0) drops a repeated offset and logs "Duplicate acquired record offset";
the broker-side cause was fixed in the same weeks (KAFKA-19808, a method 4.1 does not have,
so possibly never released).

The same failovers as kafka-19954 (the share partition's leader killed four times while six
Java members of the cluster's release poll, accept, release, and let locks run out), where
acquisitions are rebuilt from the reloaded state. A `share-poll` that returns one offset twice
is `share-duplicate-in-poll`.

Expected: 4.1.x (its client passes duplicates on). Not 4.2.0 on, whose client drops them
whatever the broker sends. Before 4.1 the run is refused. The runs: docs/scenarios.md.
"""

from __future__ import annotations

from kafka_chaos.scenarios.base import LOSS, SAFE, Scenario, at_least
from kafka_chaos.scenarios.kafka_19954 import WORKLOAD, failovers

SCENARIO = Scenario(
    name="kafka-19789",
    story=__doc__,
    script=failovers,
    brokers=3,
    workload={**WORKLOAD, "share_stalls": 0.05},
    expect=lambda version, mv: SAFE if at_least(version, "4.2.0") else LOSS,
    shows=("share-duplicate-in-poll",),
    references=(
        "KAFKA-19789: duplicate acquired offsets in one ShareFetch response; apache/kafka PR #20752 "
        "(ShareCompletedFetch drops and logs them), in kafka-clients 4.2.0 and later, in no 4.1 release",
    ),
    summary="the kafka-19954 failovers: one share fetch that returns an acquired offset twice",
)
