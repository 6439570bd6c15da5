"""kafka-17754: a delayed commit or abort marker (or EndTxn) ends the producer's next transaction
instead of its own: aborted reads, lost writes, torn transactions (KAFKA-17754, found by Jepsen's
2024 Bufstream analysis in Kafka itself; fixed by KIP-890's second transaction protocol).

Story (three brokers, the txn workload through the Java client, several transactional producers):
1. On every connection between the brokers open now, the next WriteTxnMarkers request is held
   back (the `hold-markers` fault: the segment that starts it is dropped, so TCP retransmits it
   and holds what follows; other requests flow, and a new connection passes). The next time a
   transaction coordinator ends a transaction, its commit or abort marker for a partition on
   another broker is delayed, not lost.
2. The coordinator times the request out (the brokers' request.timeout.ms, 3 s here), sends the
   marker again on a new connection, completes the transaction, and lets the producer begin its
   next one with the same producer id and, under the first transaction protocol, the same epoch.
3. The hold heals: the first marker arrives late at the partition's leader, which cannot tell it
   from a marker for the transaction now open there, with the same producer id and epoch: that
   transaction's records so far on the partition are committed (or aborted) by a marker meant for
   the one before, whatever the producer does with it afterwards.
4. The same with EndTxn requests between the producers and the coordinators (`hold-endtxn`), the
   other message whose delay the first protocol does not order. Repeated: a hold every few
   seconds, each long enough for the retries to land and the producers to move on.

Expected: aborted reads (G1a), lost writes, or dependency cycles on 3.x (the first transaction
protocol: a producer keeps its epoch from one transaction to the next); none on 4.x with a 4.x
Java client, whose second protocol (KIP-890, transaction.version 2, on by default for a new 4.0+
cluster) bumps the epoch at the end of every transaction, so the late EndTxn carries a stale epoch
and is fenced. The Java client is built against the cluster's own version.
"""

from __future__ import annotations

from kafka_chaos.nemesis.faults import HEAL, HOLD_ENDTXN, HOLD_MARKERS
from kafka_chaos.scenarios.base import LOSS, SAFE, Scenario, at_least
from kafka_chaos.scenarios.script import Script

ROUNDS = 8
HOLD_S = 9.0  # longer than the request timeouts (3 s): the retries land and the producers carry on
BETWEEN_S = 4.0


def script(s: Script, rounds: int = ROUNDS) -> None:
    everyone = ",".join(n.alias for n in s.cluster.nodes)
    s.sleep(BETWEEN_S)  # transactions under way
    for round_ in range(rounds):
        s.fault((HOLD_MARKERS if round_ % 2 == 0 else HOLD_ENDTXN).name, everyone)
        s.sleep(HOLD_S)
        s.fault(HEAL.name)
        s.sleep(BETWEEN_S)


SCENARIO = Scenario(
    name="kafka-17754",
    story=__doc__,
    script=script,
    brokers=3,
    # The coordinators' marker requests time out (and are sent again) within a hold.
    broker_config={"request.timeout.ms": "3000"},
    workload={
        "workload": "txn",
        "client": "java",
        "keys": 4,
        "concurrency": 6,
        "rate": 200.0,
        # A request times out after 3 s and is sent again on a new connection, while the producer's
        # commit waits up to 12 s: the commit outlives its first EndTxn, and the producer goes on.
        "request_timeout_ms": 3000,
        "max_block_ms": 12000,
        # Aborts as often as commits: a late abort ends the next transaction too.
        "txn_abort_fraction": 0.4,
        "time_limit": 150.0,
        "final_time_limit": 60.0,
    },
    expect=lambda version, mv: SAFE if at_least(version, "4.0.0") else LOSS,
    shows=("lost-write", "G1a", "G1c", "G1c-process", "G1c-realtime"),
    references=(
        "KAFKA-17754: the transaction protocol orders no EndTxn against the next transaction's requests",
        "KIP-890 part 2 (transaction.version 2, default for new 4.0 clusters): an epoch bump per transaction",
    ),
    summary="a marker or EndTxn held back on its connection arrives after the producer's next transaction began",
)
