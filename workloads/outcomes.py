"""Error classification: does a kafka-python error prove an operation did not happen?

This table is the one source of truth; docs/history.md shows it (rendered by `markdown_table`,
and a test keeps the two equal). The rule follows Jepsen: an error is `fail` only when it
proves that no attempt of the operation took effect; everything else is `info` (unknown).

For produce errors that means a rejection the broker gives to every attempt of the same batch
(the record itself is unacceptable), or an error raised by `send()` itself before the record
was handed to the client. A timeout, a lost connection or NotEnoughReplicasAfterAppend proves
nothing: an earlier attempt may already be in the log. kafka-python's `flush()` does not raise
for failed records, so every future is checked.
"""

from __future__ import annotations

from kafka.errors import KafkaError

from kafka_chaos.harness.history import FAIL, INFO

#: Produce and transaction errors that prove the write did not happen, and why.
DEFINITE: dict[str, str] = {
    "MessageSizeTooLargeError": "the record is over the size limit; every attempt is rejected",
    "RecordListTooLargeError": "the batch is over the size limit; every attempt is rejected",
    "InvalidRecordError": "the broker rejects the record itself; every attempt is rejected",
    "InvalidTopicError": "the topic name is invalid; nothing is appended",
    "InvalidRequiredAcksError": "the acks setting is refused before any append",
    "TopicAuthorizationFailedError": "not authorized to write; nothing is appended",
    "ClusterAuthorizationFailedError": "not authorized; nothing is appended",
    "TransactionalIdAuthorizationFailedError": "not authorized to use the transactional id",
    "UnsupportedVersionError": "the broker cannot take the request at all",
}

#: How each operation's errors are classified, for the documentation.
RULES: list[tuple[str, str, str]] = [
    ("send", "an error raised by `send()` itself (the record never left the client)", FAIL),
    ("send", "a future failed with an error in DEFINITE", FAIL),
    ("send", "any other failed or timed-out future (KafkaTimeoutError, NotEnoughReplicas*, connection errors)", INFO),
    ("send", "its producer was retired as broken and closed (`Producer is closed forcefully`)", INFO),
    ("poll", "any error (the consumer's position is unknown; the client is rebuilt)", INFO),
    ("txn", "a send future failed, then abort_transaction() completed", FAIL),
    ("txn", "deliberately aborted, and abort_transaction() completed", FAIL),
    ("txn", "commit or abort timed out under the watchdog, or raised", INFO),
]


def classify(exc: BaseException) -> str:
    """`fail` when the error proves the operation did not happen, else `info`."""
    return FAIL if type(exc).__name__ in DEFINITE else INFO


def describe(exc: BaseException) -> str:
    """A short, stable error string for the history: the class name and its message."""
    name = type(exc).__name__
    text = str(exc).strip().replace("\n", " ")
    if isinstance(exc, KafkaError) and text.startswith("[Error"):
        text = text.split("]", 1)[-1].strip()
    if text.startswith(f"{name}:"):  # kafka-python errors repeat their own name
        text = text[len(name) + 1 :].strip()
    return f"{name}: {text}"[:300] if text and text != name else name


def markdown_table() -> str:
    """The classification as Markdown, for docs/history.md."""
    lines = ["| operation | error | outcome |", "|---|---|---|"]
    lines += [f"| `{op}` | {what} | `{outcome}` |" for op, what, outcome in RULES]
    lines += ["", "Errors in DEFINITE (workloads/outcomes.py):", "", "| error | why it proves no write |", "|---|---|"]
    lines += [f"| `{name}` | {why} |" for name, why in DEFINITE.items()]
    return "\n".join(lines)
