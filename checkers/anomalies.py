"""The anomaly table: names and whether each is an error, as ../shared/anomalies.md defines them.

This is the checker's one copy of that list; the rule modules produce instances under these names,
the verdict and the report read them from here, and a test compares it with the shared document.
Every rule module returns instance frames of the same shape (INSTANCE_COLUMNS), so the verdict can
count them and pick examples in one Spark job.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F


@dataclass(frozen=True)
class Anomaly:
    name: str
    module: str  # where its rule lives, under checkers/
    holds_when: str
    error: str  # "always", "never" (reported, allowed) or "unless-subscribe"


ANOMALIES: tuple[Anomaly, ...] = (
    Anomaly(
        "lost-write",
        "lost_write",
        "a must-have-committed value at or below the highest index read, never read by an ok poll",
        "always",
    ),
    Anomaly(
        "unseen", "lost_write", "a value from an ok send that no ok poll read and that is not a lost-write", "always"
    ),
    Anomaly("duplicate", "offsets", "one value at two or more offsets of a key", "always"),
    Anomaly("inconsistent-offsets", "offsets", "one (key, offset) carrying two or more values", "always"),
    Anomaly("G1a", "aborted_read", "an ok poll read a value whose send operation failed", "always"),
    Anomaly(
        "garbage-read", "garbage_read", "a poll read a value that no operation tried to send to that key", "always"
    ),
    Anomaly(
        "poll-skip",
        "poll_order",
        "an operation's first value of a key is more than one index after the consumer's reference",
        "unless-subscribe",
    ),
    Anomaly(
        "nonmonotonic-poll",
        "poll_order",
        "an operation's first value of a key is at or before the consumer's reference",
        "unless-subscribe",
    ),
    Anomaly(
        "int-poll-skip",
        "poll_order",
        "inside one operation, consecutive values of a key more than one index apart",
        "always",
    ),
    Anomaly(
        "int-nonmonotonic-poll",
        "poll_order",
        "inside one operation, a value of a key at or before the one read just before it",
        "always",
    ),
    Anomaly(
        "nonmonotonic-send",
        "send_order",
        "a process's first send to a key lands at or before its previous ok operation's last send there",
        "always",
    ),
    Anomaly(
        "int-nonmonotonic-send",
        "send_order",
        "inside one operation, a send to a key lands at or before the previous send to it",
        "always",
    ),
    Anomaly(
        "int-send-skip",
        "send_order",
        "inside one operation, consecutive sends to a key land more than one index apart",
        "never",
    ),
    Anomaly("precommitted-read", "precommitted_read", "a transaction polled a value that it sent itself", "always"),
)
NAMES = tuple(a.name for a in ANOMALIES)
BY_NAME = {a.name: a for a in ANOMALIES}

# One row per anomaly instance. `ops` are history indices of the operations involved (each named by
# the event that completed it, or by its invoke when it never completed). `allowed` marks an
# instance that is reported but is not an error.
INSTANCE_COLUMNS = ("name", "key", "process", "ops", "offsets", "values", "allowed")


def instances(
    df: DataFrame,
    name: str,
    *,
    key: Column | str = "key",
    ops: Column,
    offsets: Column,
    values: Column,
    process: Column | str | None = None,
    allowed: Column | None = None,
) -> DataFrame:
    """Shape a frame of rule hits into instance rows of anomaly `name`."""
    if name not in BY_NAME:
        raise ValueError(f"unknown anomaly {name!r}")
    never = BY_NAME[name].error == "never"
    return df.select(
        F.lit(name).alias("name"),
        (F.col(key) if isinstance(key, str) else key).cast("string").alias("key"),
        (F.col(process) if isinstance(process, str) else F.lit(None) if process is None else process)
        .cast("string")
        .alias("process"),
        ops.cast("array<bigint>").alias("ops"),
        offsets.cast("array<bigint>").alias("offsets"),
        values.cast("array<bigint>").alias("values"),
        (F.lit(True) if never else allowed if allowed is not None else F.lit(False)).alias("allowed"),
    )


def markdown_table() -> str:
    """The table docs/checker.md shows (a test keeps the two in step)."""
    kinds = {"always": "error", "never": "allowed", "unless-subscribe": "error (allowed under subscribe)"}
    rows = ["| anomaly | kind | rule in | holds when |", "|---|---|---|---|"]
    rows += [f"| `{a.name}` | {kinds[a.error]} | `checkers/{a.module}.py` | {a.holds_when} |" for a in ANOMALIES]
    return "\n".join(rows)


def read_instances(reads: DataFrame, name: str) -> DataFrame:
    """Instances that are single reads (op, offset, value, process of a reads-table row)."""
    return instances(
        reads, name, ops=F.array("op"), offsets=F.array("offset"), values=F.array("value"), process="process"
    )


def consecutive_in_op(rows: DataFrame) -> DataFrame:
    """Rows of sends or reads with `prev`, the row of the same key just before it in the same
    operation (by `pos`); the first row of each key in each operation is dropped."""
    w = Window.partitionBy("op", "key").orderBy("pos")
    prev = F.lag(F.struct("pos", "idx", "offset", "value")).over(w)
    return rows.select("*", prev.alias("prev")).where(F.col("prev").isNotNull())


def step_instances(pairs: DataFrame, name: str) -> DataFrame:
    """Instances of two consecutive values inside one operation (rows of consecutive_in_op)."""
    return instances(
        pairs,
        name,
        ops=F.array("op"),
        offsets=F.array("prev.offset", "offset"),
        values=F.array("prev.value", "value"),
        process="process",
    )
