"""`precommitted-read`: a transaction polled a value that it sent itself.

A transactional producer's writes are invisible to read_committed consumers until the commit, so a
transaction that sees its own sends read uncommitted data (Jepsen added this check in 2024).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.anomalies import read_instances
from checkers.tables import Tables


def rules(t: Tables) -> list[DataFrame]:
    sent = t.sends.where(F.col("f") == "txn").select("op", "key", "value")
    hits = t.reads.where(F.col("f") == "txn").join(sent, ["op", "key", "value"])
    return [read_instances(hits, "precommitted-read")]
