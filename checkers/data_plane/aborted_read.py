"""`G1a`, aborted read: an ok poll read a value whose send operation failed.

`fail` means certainly did not happen (for a transaction: it aborted), so the value must never be
visible; for read_committed consumers this is the transactional guarantee at stake.
"""

from __future__ import annotations

import pandas as pd
from pyspark.sql import DataFrame

from kafka_chaos.checkers.anomalies import instance_sql, instances, maybe, maybe_sql, one, pairs
from kafka_chaos.checkers.data_plane.key_tables import KeyTables
from kafka_chaos.checkers.data_plane.version_order import KeyView


def rules(k: KeyView) -> list[pd.DataFrame]:
    failed = k.sends.loc[k.sends["type"] == "fail", ["value", "op"]].rename(columns={"op": "send_op"})
    hits = k.ok_reads.merge(failed, on="value")
    if hits.empty:
        return []
    return [
        instances(
            "G1a", k.key, hits["process"], pairs(hits["op"], hits["send_op"]), maybe(hits["offset"]), one(hits["value"])
        )
    ]


def query(t: KeyTables) -> DataFrame:
    """The rule over every key (Spark SQL)."""
    hit = instance_sql("G1a", "r.process", "array(r.op, s.op)", maybe_sql("r.offset"), "array(`value`)")
    return t.sql(
        f"SELECT {', '.join(hit)} FROM {{ok_reads}} r"
        " JOIN (SELECT key, op, `value` FROM {sends} WHERE `type` = 'fail') s USING (key, `value`)"
    )
