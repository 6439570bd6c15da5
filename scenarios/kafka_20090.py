"""kafka-20090: a transaction that times out at the producer epoch's last value leaves the
transactional id stuck, its transaction open for ever and the partition's last stable offset
with it.

Under transactions version 2 (KIP-890, Kafka 4.0 on) the coordinator bumps the producer's epoch
at every transaction's end, and when the epoch reaches 32766 (Short.MAX_VALUE - 1) it moves the
producer to a new producer id at the next commit. A transaction the coordinator aborts on its
timeout takes the other path: 4.0 to 4.2 bump the epoch to 32767 there without moving to a new
id, and hand that epoch to the producer when it next ends a transaction. Its next commit must
bump past 32767: the coordinator throws ("Illegal new producer epoch -32768", answered as an
unknown server error), and the transaction stays open. Neither the timeout nor a new producer
of the same id can end it ("Cannot fence producer with epoch equal to Short.MaxValue"), so
read_committed consumers stop at its first offset for good. Fixed by apache/kafka PRs #21469 and
#21506 (KAFKA-20090), in 4.3.0, with KAFKA-20310 (#21828, the next producer id kept in
`__transaction_state`); 4.2.2 has neither, read from the releases' sources and bytecode
(docs/scenarios.md).

Story (three brokers, `__transaction_state` on one replica each, one partition; one Java
transactional producer whose transactional id is first brought to epoch 32765 by InitProducerId
requests, as Admin.fenceProducers sends them, so that its own initTransactions takes it to 32766;
a 5 s `transaction.timeout.ms`, the coordinator looking every second):
1. The producer's first transaction is held still for 15 s after its first send: the coordinator
   aborts it on its timeout.
2. The producer goes on: the held transaction fails, the next ones commit or fail.
3. The script reads the brokers' logs for the overflow (the scenario's own finding,
   `producer-epoch-overflow`).

Shown as `unseen`: values of transactions committed after the stuck one are never read by the
final read_committed read, which lasts longer than the transaction timeout by which Kafka must
end any transaction; and by the finding.
"""

from __future__ import annotations

from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.scenarios.base import LOSS, ONE_TXN_PRODUCER, SAFE, Scenario
from kafka_chaos.scenarios.script import Script
from kafka_chaos.workloads.options import MAX_START_EPOCH

TIMEOUT_MS, HOLD_S = 5_000, 15.0
OVERFLOW = "Illegal new producer epoch"
FINDING = "producer-epoch-overflow"
#: Transactions version 2 (4.0.0) to the fix (4.3.0).
FIRST, FIXED = KafkaVersion.parse("4.0.0"), KafkaVersion.parse("4.3.0")

WORKLOAD = {
    **ONE_TXN_PRODUCER,
    "txn_min_ops": 2,
    "txn_max_ops": 2,
    "transaction_timeout_ms": TIMEOUT_MS,
    "txn_start_epoch": MAX_START_EPOCH,
    "time_limit": 90.0,
    "final_time_limit": 30.0,
}


def script(s: Script) -> None:
    held = s.pause_client(HOLD_S, within_s=60)  # the first transaction, at epoch 32766
    s.note(f"the held transaction: {held.get('txn_outcome')} ({held.get('txn_error') or 'no error'})")
    s.sleep(15)  # transactions go on, or stay stuck
    s.note("the held process's transactional id, as its coordinator holds it", **s.transaction_state(held["process"]))
    lines = [
        {"broker": node.alias, "line": line.strip()}
        for node in s.cluster.brokers
        for line in s.server_log(node.alias).splitlines()
        if OVERFLOW in line
    ]
    if lines:
        s.observe(FINDING, count=len(lines), first=lines[0])


SCENARIO = Scenario(
    name="kafka-20090",
    story=__doc__,
    script=script,
    brokers=3,
    broker_config={
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
        # The set-up's 32,765 writes to __transaction_state each wait for its replicas: one
        # replica makes them local. No broker is faulted here, so nothing else depends on it.
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
    },
    workload=WORKLOAD,
    expect=lambda version, mv: LOSS if FIRST <= version < FIXED else SAFE,
    shows=("unseen", FINDING),
    since="4.0.0",
    references=(
        "KAFKA-20090: apache/kafka PRs #21469 and #21506 (no bump past Short.MAX_VALUE; a fenced epoch moves to "
        "a new producer id), in 4.3.0; KAFKA-20310: PR #21828 (TransactionLog writes the next producer id), "
        "in 4.3.0; 4.0.2, 4.1.2, 4.2.1 and 4.2.2 have neither (sources, bytecode)",
    ),
    summary="a transaction timed out at the producer epoch's last value: the id stuck, its transaction open",
)
