"""Error classification: does a client's error prove an operation did not happen?

This table is the one source of truth; docs/history.md shows it (rendered by `markdown_table`,
and a test keeps the two equal). The rule follows Jepsen: an error is `fail` only when it
proves that no attempt of the operation took effect; everything else is `info` (unknown).

For produce errors that means a rejection the broker gives to every attempt of the same batch
(the record itself is unacceptable), or an error raised by `send()` itself before the record
was handed to the client. A timeout, a lost connection or NotEnoughReplicasAfterAppend proves
nothing: an earlier attempt may already be in the log. kafka-python's `flush()` does not raise
for failed records, so every future is checked.

Each client names its errors its own way (kafka-python: an exception class; the Java client: an
exception's simple class name, as its driver reports it; librdkafka: an error code's name), so
DEFINITE has one table per client, the same rejections under each client's names. Everything not
in a client's table is `info`: a name a client adds later is unknown until someone shows it is
definite.
"""

from __future__ import annotations

from kafka.errors import KafkaError

from kafka_chaos.history.events import FAIL, INFO
from kafka_chaos.workloads.clients.api import ClientError

#: Produce errors that prove the write did not happen, by client, and why.
DEFINITE: dict[str, dict[str, str]] = {
    "kafka-python": {
        "MessageSizeTooLargeError": "the record is over the size limit; every attempt is rejected",
        "RecordListTooLargeError": "the batch is over the size limit; every attempt is rejected",
        "InvalidRecordError": "the broker rejects the record itself; every attempt is rejected",
        "InvalidTopicError": "the topic name is invalid; nothing is appended",
        "InvalidRequiredAcksError": "the acks setting is refused before any append",
        "TopicAuthorizationFailedError": "not authorized to write; nothing is appended",
        "ClusterAuthorizationFailedError": "not authorized; nothing is appended",
        "TransactionalIdAuthorizationFailedError": "not authorized to use the transactional id",
        "UnsupportedVersionError": "the broker cannot take the request at all",
    },
    "java": {
        "RecordTooLargeException": "the record is over the size limit; every attempt is rejected",
        "RecordBatchTooLargeException": "the batch is over the size limit; every attempt is rejected",
        "InvalidRecordException": "the broker rejects the record itself; every attempt is rejected",
        "InvalidTopicException": "the topic name is invalid; nothing is appended",
        "InvalidRequiredAcksException": "the acks setting is refused before any append",
        "TopicAuthorizationException": "not authorized to write; nothing is appended",
        "ClusterAuthorizationException": "not authorized; nothing is appended",
        "TransactionalIdAuthorizationException": "not authorized to use the transactional id",
        "UnsupportedVersionException": "the broker cannot take the request at all",
        "SerializationException": "the record could not be serialized; it never left the client",
    },
    "librdkafka": {
        "MSG_SIZE_TOO_LARGE": "the record is over the size limit; every attempt is rejected",
        "RECORD_LIST_TOO_LARGE": "the batch is over the size limit; every attempt is rejected",
        "INVALID_RECORD": "the broker rejects the record itself; every attempt is rejected",
        "TOPIC_EXCEPTION": "the topic name is invalid; nothing is appended",
        "INVALID_REQUIRED_ACKS": "the acks setting is refused before any append",
        "TOPIC_AUTHORIZATION_FAILED": "not authorized to write; nothing is appended",
        "CLUSTER_AUTHORIZATION_FAILED": "not authorized; nothing is appended",
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": "not authorized to use the transactional id",
        "UNSUPPORTED_VERSION": "the broker cannot take the request at all",
    },
}

#: Errors that look definite and are not, by client: why each stays `info`.
NOT_DEFINITE: dict[str, dict[str, str]] = {
    "kafka-python": {
        "KafkaTimeoutError": "an attempt may have been appended before the timeout",
        "NotEnoughReplicasAfterAppendError": "the leader appended the record before it found too few replicas",
        "NotLeaderForPartitionError": "an earlier attempt may have been appended by the old leader",
    },
    "java": {
        "TimeoutException": "an attempt may have been appended before the timeout",
        "NotEnoughReplicasAfterAppendException": "the leader appended the record before it found too few replicas",
        "NotLeaderOrFollowerException": "an earlier attempt may have been appended by the old leader (KAFKA-13574)",
        "OutOfOrderSequenceException": "an earlier batch of the producer was lost; this one may be in the log",
        "ProducerFencedException": "a send is fenced after its transaction may have committed",
    },
    "librdkafka": {
        "_MSG_TIMED_OUT": "an attempt may have been appended before the delivery timeout",
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND": "the leader appended the record before it found too few replicas",
        "NOT_LEADER_FOR_PARTITION": "an earlier attempt may have been appended by the old leader",
        "_PURGE_QUEUE": "a queued record may be a retry of one already sent (the producer was closed)",
        "_PURGE_INFLIGHT": "the request was sent; the producer was closed before the answer",
    },
}

#: Commit errors that prove the group refused the commit (its offsets were not stored), by client.
COMMIT_DEFINITE: dict[str, dict[str, str]] = {
    "kafka-python": {
        "CommitFailedError": "the group rebalanced and gave the member's keys away; nothing was stored",
        "RebalanceInProgressError": "the group is rebalancing; the coordinator stored nothing",
        "IllegalGenerationError": "the member's generation is over; the coordinator stored nothing",
        "UnknownMemberIdError": "the member was removed from the group; the coordinator stored nothing",
    },
    "java": {
        "CommitFailedException": "the group rebalanced and gave the member's keys away; nothing was stored",
        "RebalanceInProgressException": "the group is rebalancing; the coordinator stored nothing",
        "IllegalGenerationException": "the member's generation is over; the coordinator stored nothing",
        "UnknownMemberIdException": "the member was removed from the group; the coordinator stored nothing",
        "FencedInstanceIdException": "a newer member has the instance id; the coordinator stored nothing",
    },
    "librdkafka": {
        "REBALANCE_IN_PROGRESS": "the group is rebalancing; the coordinator stored nothing",
        "ILLEGAL_GENERATION": "the member's generation is over; the coordinator stored nothing",
        "UNKNOWN_MEMBER_ID": "the member was removed from the group; the coordinator stored nothing",
        "_ASSIGNMENT_LOST": "the member lost its keys to the group; nothing was committed",
    },
}

#: How each operation's errors are classified, for the documentation.
RULES: list[tuple[str, str, str]] = [
    ("send", "an error raised by `send()` itself (the record never left the client): kafka-python's "
     "`send()`, librdkafka's `produce()`, the Java client's `send()` as its driver reports it", FAIL),
    ("send", "a send failed with an error in its client's DEFINITE table", FAIL),
    ("send", "any other failed or timed-out send (timeouts, NotEnoughReplicas*, connection errors)", INFO),
    ("send", "its producer was retired as broken and closed (kafka-python's `Producer is closed forcefully`, "
     "librdkafka's `_PURGE_*`)", INFO),
    ("send", "the client itself died (the Java driver's process ended): the run stops", INFO),
    ("poll", "any error (the consumer's position is unknown; the client is rebuilt)", INFO),
    ("txn", "a send failed, then abort_transaction() completed", FAIL),
    ("txn", "deliberately aborted, and abort_transaction() completed", FAIL),
    ("txn", "commit or abort timed out under the watchdog, or raised", INFO),
    ("subscribe", "any error (the member's state is unknown; the client is rebuilt)", INFO),
    ("commit", "the group refused it: an error in its client's COMMIT_DEFINITE table", FAIL),
    ("commit", "any other error (a timeout, a coordinator that moved): the client is rebuilt", INFO),
]  # fmt: skip


def error_name(exc: BaseException) -> str:
    """The name a client gives an error: its own (ClientError) or the exception's class."""
    return exc.name if isinstance(exc, ClientError) else type(exc).__name__


def classify(exc: BaseException, client: str = "kafka-python") -> str:
    """`fail` when the error proves the operation did not happen, else `info`."""
    if isinstance(exc, ClientError) and exc.refused:
        return FAIL
    return FAIL if error_name(exc) in DEFINITE.get(client, {}) else INFO


def classify_commit(exc: BaseException, client: str = "kafka-python") -> str:
    """A consumer group commit's outcome: `fail` when the group refused it, else `info`."""
    return FAIL if error_name(exc) in COMMIT_DEFINITE.get(client, {}) else INFO


def describe(exc: BaseException) -> str:
    """A short, stable error string for the history: the error's name and its message."""
    name = error_name(exc)
    text = (exc.message if isinstance(exc, ClientError) else str(exc)).strip().replace("\n", " ")
    if isinstance(exc, KafkaError) and text.startswith("[Error"):
        text = text.split("]", 1)[-1].strip()
    if text.startswith(f"{name}:"):  # kafka-python errors repeat their own name
        text = text[len(name) + 1 :].strip()
    return f"{name}: {text}"[:300] if text and text != name else name


def markdown_table() -> str:
    """The classification as Markdown, for docs/history.md."""
    lines = ["| operation | error | outcome |", "|---|---|---|"]
    lines += [f"| `{op}` | {what} | `{outcome}` |" for op, what, outcome in RULES]
    tables = (
        ("DEFINITE: `fail`", DEFINITE),
        ("NOT_DEFINITE: `info` although they look final", NOT_DEFINITE),
        ("COMMIT_DEFINITE: a `commit` the group refused, `fail`", COMMIT_DEFINITE),
    )
    for title, table in tables:
        lines += ["", f"{title} (workloads/outcomes.py), by client:", ""]
        lines += ["| client | error | why |", "|---|---|---|"]
        lines += [f"| {client} | `{name}` | {why} |" for client, rows in table.items() for name, why in rows.items()]
    return "\n".join(lines)
