"""The anomaly table: names and whether each is an error, as ../shared/anomalies.md defines them.

This is the checker's one copy of that list; checkers/per_key.py runs the rule module each row names,
the verdict and the report read them from here, and a test compares it with the shared document.
Every rule module returns instance frames of the same shape (INSTANCE_COLUMNS), so the verdict can
count them and pick examples in one Spark job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Anomaly:
    name: str
    module: str  # where its rule lives, under checkers/
    holds_when: str
    #: "always", "never" (reported, allowed), "unless-subscribe", or "wr-only" (an error when every
    #: edge of the cycle is wr, allowed when it needs a ww edge)
    error: str


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
    Anomaly("G0", "cycles", "a cycle of ww edges between transactions (writes are not isolated)", "never"),
    Anomaly("G1c", "cycles", "a cycle of ww and wr edges between transactions with at least one wr edge", "wr-only"),
    Anomaly("G1c-process", "cycles", "a cycle of wr edges that exists only once process order is added", "always"),
    Anomaly("G1c-realtime", "cycles", "a cycle of wr edges that exists only once realtime order is added", "always"),
)
NAMES = tuple(a.name for a in ANOMALIES)
BY_NAME = {a.name: a for a in ANOMALIES}

# One row per anomaly instance. `ops` are history indices of the operations involved (each named by
# the event that completed it, or by its invoke when it never completed). `allowed` marks an
# instance that is reported but is not an error.
INSTANCE_COLUMNS = ("name", "key", "process", "ops", "offsets", "values", "allowed")
INSTANCES = (
    "name string, key string, process string, ops array<long>, offsets array<long>, values array<long>, allowed boolean"
)


def instances(name: str, key: str, process, ops, offsets, values, allowed=None) -> pd.DataFrame:
    """Rule hits of anomaly `name` in one key as instance rows (pandas; each argument one entry
    per hit, `process` None when the anomaly has none)."""
    if name not in BY_NAME:
        raise ValueError(f"unknown anomaly {name!r}")
    n = len(ops)
    never = BY_NAME[name].error == "never"
    if allowed is None or never:
        allowed = np.full(n, never)
    return pd.DataFrame({
        "name": name, "key": key,
        "process": list(process) if process is not None else [None] * n,
        "ops": list(ops), "offsets": list(offsets), "values": list(values),
        "allowed": np.asarray(allowed, dtype=bool),
    }, columns=list(INSTANCE_COLUMNS))  # fmt: skip


def one(a) -> list[list]:
    """Each entry as a one-element list."""
    return [[int(x)] for x in a]


def pairs(a, b) -> list[list]:
    return [[int(x), int(y)] for x, y in zip(a, b, strict=True)]


def maybe(a) -> list[list]:
    """Each entry as a one-element list, or an empty one where it is missing (an unknown offset)."""
    return [[] if pd.isna(x) else [int(x)] for x in a]


def read_instances(name: str, key: str, rows: pd.DataFrame) -> pd.DataFrame:
    """Instances that are single reads (op, offset, value, process of a read row)."""
    return instances(name, key, rows["process"], one(rows["op"]), maybe(rows["offset"]), one(rows["value"]))


def step_instances(key: str, rows: pd.DataFrame, skip: str, back: str) -> list[pd.DataFrame]:
    """Consecutive rows of the key inside one operation (by pos, each with its index `idx`) more
    than one index apart (`skip`), or at or before the one just before (`back`)."""
    if len(rows) < 2:
        return []
    r = rows.sort_values(["op", "pos"])
    same = r["op"].to_numpy()[1:] == r["op"].to_numpy()[:-1]
    prev, cur = r.iloc[:-1][same], r.iloc[1:][same]
    delta = cur["idx"].to_numpy() - prev["idx"].to_numpy()
    out = []
    for name, mask in ((skip, delta > 1), (back, delta <= 0)):
        if mask.any():
            p, c = prev[mask], cur[mask]
            out.append(instances(
                name, key, c["process"], one(c["op"]), pairs(p["offset"], c["offset"]), pairs(p["value"], c["value"])
            ))  # fmt: skip
    return out


def markdown_table() -> str:
    """The table docs/checker.md shows (a test keeps the two in step)."""
    kinds = {
        "always": "error", "never": "allowed", "unless-subscribe": "error (allowed under subscribe)",
        "wr-only": "error when every edge is wr (allowed when it needs a ww edge)",
    }  # fmt: skip
    rows = ["| anomaly | kind | rule in | holds when |", "|---|---|---|---|"]
    rows += [f"| `{a.name}` | {kinds[a.error]} | `checkers/{a.module}.py` | {a.holds_when} |" for a in ANOMALIES]
    return "\n".join(rows)
