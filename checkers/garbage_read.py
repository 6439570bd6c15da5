"""`garbage-read`: a poll read a value that no operation ever tried to send to that key.

Values are unique per key and every attempt is in the history, so such a value came from outside
the test or from a corrupted log. Polls of every outcome count: each shows what the log held.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from checkers.anomalies import read_instances
from checkers.tables import Tables


def rules(t: Tables) -> list[DataFrame]:
    tried = t.sends.select("key", "value").distinct()
    hits = t.reads.join(tried, ["key", "value"], "left_anti")
    return [read_instances(hits, "garbage-read")]
