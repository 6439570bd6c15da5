"""`garbage-read`: a poll read a value that no operation ever tried to send to that key.

Values are unique per key and every attempt is in the history, so such a value came from outside
the test or from a corrupted log. Polls of every outcome count: each shows what the log held.
"""

from __future__ import annotations

import pandas as pd

from kafka_chaos.checkers.anomalies import read_instances
from kafka_chaos.checkers.data_plane.version_order import KeyView


def rules(k: KeyView) -> list[pd.DataFrame]:
    hits = k.reads[~k.reads["value"].isin(k.sends["value"])]
    return [read_instances("garbage-read", k.key, hits)] if len(hits) else []
