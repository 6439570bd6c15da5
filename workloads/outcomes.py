"""Error classification: does a client's error prove an operation did not happen?

These rules, with each client's tables (in its record: workloads/clients/kafka_python.py,
librdkafka.py, java.py), are the one source of truth; docs/history.md shows them (rendered by
`markdown_table`, and a test keeps the two equal). The rule follows Jepsen: an error is `fail` only when it
proves that no attempt of the operation took effect; everything else is `info` (unknown).

For produce errors that means a rejection the broker gives to every attempt of the same batch
(the record itself is unacceptable), or an error raised by `send()` itself before the record
was handed to the client. A timeout, a lost connection or NotEnoughReplicasAfterAppend proves
nothing: an earlier attempt may already be in the log. kafka-python's `flush()` does not raise
for failed records, so every future is checked.

Each client names its errors its own way (kafka-python: an exception class; the Java client: an
exception's simple class name, as its driver reports it; librdkafka: an error code's name), so
each client's record has its own tables, the same rejections under its own names. Everything not
in a client's table is `info`: a name a client adds later is unknown until someone shows it is
definite.
"""

from __future__ import annotations

from kafka.errors import KafkaError

from kafka_chaos.history.events import FAIL, INFO
from kafka_chaos.workloads.clients.api import ClientError
from kafka_chaos.workloads.clients.registry import get

#: The order the tables below list the clients in (docs/history.md shows them so).
_LISTED = ("kafka-python", "java", "librdkafka")
#: Produce errors that prove the write did not happen, by client, and why: each client's record's.
DEFINITE: dict[str, dict[str, str]] = {name: get(name).definite for name in _LISTED}
#: Errors that look definite and are not, by client: why each stays `info`.
NOT_DEFINITE: dict[str, dict[str, str]] = {name: get(name).not_definite for name in _LISTED}
#: Commit errors that prove the group refused the commit (its offsets were not stored), by client.
COMMIT_DEFINITE: dict[str, dict[str, str]] = {name: get(name).commit_definite for name in _LISTED}

#: How each operation's errors are classified, for the documentation.
RULES: list[tuple[str, str, str]] = [
    (
        "send",
        "an error raised by `send()` itself (the record never left the client): kafka-python's "
        "`send()`, librdkafka's `produce()`, the Java client's `send()` as its driver reports it",
        FAIL,
    ),
    ("send", "a send failed with an error in its client's DEFINITE table", FAIL),
    ("send", "any other failed or timed-out send (timeouts, NotEnoughReplicas*, connection errors)", INFO),
    (
        "send",
        "its producer was retired as broken and closed (kafka-python's `Producer is closed forcefully`, "
        "librdkafka's `_PURGE_*`)",
        INFO,
    ),
    ("send", "the client itself died (the Java driver's process ended): the run stops", INFO),
    ("poll", "any error (the consumer's position is unknown; the client is rebuilt)", INFO),
    ("txn", "a send failed, then abort_transaction() completed", FAIL),
    ("txn", "deliberately aborted, and abort_transaction() completed", FAIL),
    ("txn", "commit or abort timed out under the watchdog, or raised", INFO),
    ("subscribe", "any error (the member's state is unknown; the client is rebuilt)", INFO),
    ("commit", "the group refused it: an error in its client's COMMIT_DEFINITE table", FAIL),
    ("commit", "any other error (a timeout, a coordinator that moved): the client is rebuilt", INFO),
]


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
