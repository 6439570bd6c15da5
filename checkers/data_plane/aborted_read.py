"""`G1a`, aborted read: an ok poll read a value whose send operation failed.

`fail` means certainly did not happen (for a transaction: it aborted), so the value must never be
visible; for read_committed consumers this is the transactional guarantee at stake.
"""

from __future__ import annotations

import pandas as pd

from kafka_chaos.checkers.anomalies import instances, maybe, one, pairs
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
