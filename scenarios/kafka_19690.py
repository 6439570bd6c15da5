"""kafka-19690: an application that stalls inside a transaction past `transaction.timeout.ms` is
told `InvalidTxnStateException` when it sends again, not the producer-epoch error it can recover
from.

The transaction coordinator aborts a transaction left open longer than the producer's
`transaction.timeout.ms` and bumps the producer's epoch. The producer does not know until it
next talks to a broker: its next send carries the old epoch. The partition's leader should refuse
it as from an old epoch (`InvalidProducerEpochException`, which a transactional application,
Kafka Streams among them, handles by aborting and going on). KAFKA-19690: the leader checked the
transaction's verification first and answered `InvalidTxnStateException`, which Kafka Streams
takes as fatal. Fixed by apache/kafka PR #20534 (an epoch check before the verification check),
in 3.9.2, 4.0.2, 4.1.1 and 4.2.0 (per the JIRA and the research, ../shared/research).

Story (three brokers; one Java transactional producer with a 10 s `transaction.timeout.ms`, the
coordinator looking for timed-out transactions every second):
1. Transactions of two or three sends commit.
2. The application holds still for 20 s in a transaction, once its first send is acknowledged
   (`pause-client`: the producer's own threads run on).
3. It sends again, and the transaction fails with the leader's error: the scenario's own
   finding `invalid-txn-state-after-timeout` when it is `InvalidTxnStateException`.
4. Transactions go on.

The data plane is not at stake (the aborted transaction's writes are never read committed);
what differs is whether an application may go on.

Not reproduced: on 4.1.0 the held transaction's next send is refused InvalidProducerEpoch, as on
4.1.1 (docs/scenarios.md says why, and what a reproduction would need).
"""

from __future__ import annotations

from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.scenarios.base import LOSS, ONE_TXN_PRODUCER, SAFE, Scenario
from kafka_chaos.scenarios.script import Script, StepTimeout

#: The producer's transaction timeout, and how long the application holds still: past the timeout
#: and the coordinator's next look (every second here).
TIMEOUT_MS, HOLD_S = 10_000, 20.0
FATAL = "InvalidTxnStateException"
RECOVERABLE = "InvalidProducerEpochException"
FINDING = "invalid-txn-state-after-timeout"
#: Affected lines, each [first affected, first fixed): KIP-890's verification (3.6.0) to the fix.
AFFECTED = (("3.6.0", "3.9.2"), ("4.0.0", "4.0.2"), ("4.1.0", "4.1.1"))

WORKLOAD = {
    **ONE_TXN_PRODUCER,
    "txn_min_ops": 2,
    "txn_max_ops": 3,
    "transaction_timeout_ms": TIMEOUT_MS,
    "time_limit": 90.0,
    "final_time_limit": 20.0,
}


def affected(version: KafkaVersion) -> bool:
    return any(KafkaVersion.parse(a) <= version < KafkaVersion.parse(b) for a, b in AFFECTED)


def script(s: Script) -> None:
    s.sleep(8)  # transactions commit
    held = s.pause_client(HOLD_S)
    error = held.get("txn_error") or ""
    s.note(f"the held transaction: {held.get('txn_outcome')} ({error or 'no error'})")
    if held.get("txn_outcome") == "ok":
        raise StepTimeout("the held transaction committed: the coordinator did not abort it")
    if FATAL in error:
        s.observe(FINDING, process=held.get("process"), error=error)
    s.sleep(8)  # transactions go on, or the producer is rebuilt


SCENARIO = Scenario(
    name="kafka-19690",
    story=__doc__,
    script=script,
    brokers=3,
    broker_config={"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000"},
    workload=WORKLOAD,
    expect=lambda version, mv: LOSS if affected(version) else SAFE,
    shows=(FINDING,),
    since="3.6.0",
    references=(
        "KAFKA-19690: apache/kafka PR #20534 (an epoch check before the verification guard's), in 3.9.2, "
        "4.0.2, 4.1.1 (PR #20618) and 4.2.0",
    ),
    summary="a transaction held past its timeout: the next send is refused InvalidTxnState, not as from an old epoch",
    not_reproduced="10 runs on 4.1.0, each refused as from an old epoch, as on 4.1.1 (docs/scenarios.md)",
)
