"""`precommitted-read`: a transaction polled a value that it sent itself.

A transactional producer's writes are invisible to read_committed consumers until the commit, so a
transaction that sees its own sends read uncommitted data (Jepsen added this check in 2024).
"""

from __future__ import annotations

import pandas as pd

from kafka_chaos.checkers.anomalies import read_instances
from kafka_chaos.checkers.data_plane.version_order import KeyView


def rules(k: KeyView) -> list[pd.DataFrame]:
    sent = k.sends.loc[k.sends["f"] == "txn", ["op", "value"]]
    hits = k.reads[k.reads["f"] == "txn"].merge(sent, on=["op", "value"])
    return [read_instances("precommitted-read", k.key, hits)] if len(hits) else []
