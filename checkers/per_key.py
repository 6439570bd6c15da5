"""Every per-key rule of ../shared/anomalies.md in one pass over one key's rows.

The pipeline hands `key_rules` all micro-operations of one key at once (Spark's `applyInPandas`
after one shuffle by key; the rows are checkers/tables.py's micro table). Everything a rule needs
lives in the key once each row carries what its operation and process contribute, so each rule
module is a few vectorized pandas steps over the key's view (checkers/version_order.py), and the
pipeline has one shuffle by key instead of a Spark job per rule.
"""

from __future__ import annotations

import pandas as pd

from checkers import (
    aborted_read,
    garbage_read,
    lost_write,
    offsets,
    poll_order,
    precommitted_read,
    send_order,
    version_order,
)
from checkers.anomalies import INSTANCE_COLUMNS

RULES = (lost_write, offsets, aborted_read, garbage_read, poll_order, send_order, precommitted_read)


def key_rules(rows: pd.DataFrame) -> pd.DataFrame:
    """All anomaly instances of one key (INSTANCE_COLUMNS)."""
    view = version_order.build(rows)
    found = [frame for rule in RULES for frame in rule.rules(view)]
    if not found:
        return pd.DataFrame(columns=list(INSTANCE_COLUMNS))
    return pd.concat(found, ignore_index=True)
