"""Consumer order: `poll-skip`, `nonmonotonic-poll` and their in-operation forms.

A consumer's *reference* for a key is the last value of that key in its latest ok operation that
polled it (checkers/references.py). Only ok operations move it; an assign/subscribe that leaves the
key out clears it. Each ok operation's first value of the key, and each info operation's that
carries values, is compared with the reference by version-order index: more than one after is a skip, at or
before is nonmonotonic. Under `subscribe` a group rebalance may legally move positions, so those
two are reported as allowed when the process's latest assignment was a subscribe. Inside one ok
operation, consecutive values of a key (across its poll micro-ops, in order) must be adjacent.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.anomalies import consecutive_in_op, instances, step_instances
from checkers.references import with_references
from checkers.tables import Tables
from checkers.version_order import Order


def _per_op(o: Order) -> DataFrame:
    """One row per (process, key, ok or info operation that polled the key): its first and last
    value. Info polls that carry values are compared with the reference; only ok ones move it."""
    polled = o.read_idx.where(F.col("type").isin("ok", "info") & F.col("idx").isNotNull())
    first, last = F.struct("pos", "idx", "offset", "value"), F.struct(-F.col("pos"), "idx", "offset", "value")
    return polled.groupBy("process", "key", "op", "type").agg(F.min(first).alias("first"), F.min(last).alias("last"))


def rules(t: Tables, o: Order) -> list[DataFrame]:
    refs = with_references(_per_op(o), t.assigns).where(~F.col("cleared"))
    delta = F.col("first.idx") - F.col("prev_last.idx")
    common = dict(
        ops=F.array("prev_op", "op"),
        offsets=F.array("prev_last.offset", "first.offset"),
        values=F.array("prev_last.value", "first.value"),
        process="process",
        allowed=F.coalesce(F.col("mode") == "subscribe", F.lit(False)),
    )
    inner = consecutive_in_op(o.read_idx.where((F.col("type") == "ok") & F.col("idx").isNotNull()))
    inner_delta = F.col("idx") - F.col("prev.idx")
    return [
        instances(refs.where(delta > 1), "poll-skip", **common),
        instances(refs.where(delta <= 0), "nonmonotonic-poll", **common),
        step_instances(inner.where(inner_delta > 1), "int-poll-skip"),
        step_instances(inner.where(inner_delta <= 0), "int-nonmonotonic-poll"),
    ]
