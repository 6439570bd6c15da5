"""The counts the stats and the report need from a key's rows, made in the rules' pass.

checkers/data_plane/per_key.py runs once per key over all its rows; counting the key's values and bucketing
its acknowledgements there costs nothing more, where a Spark aggregation of its own would cost a
job (seconds on a small history). Each count travels as one row of the instance table under a
name that is not an anomaly's ("#values", "#acked", "#seen"), `offsets` naming slots and `values`
holding the counts; checkers/check.py sums them over keys in Spark and never collects them per key.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kafka_chaos.checkers.anomalies import tally_frame
from kafka_chaos.checkers.data_plane.version_order import KeyView

PREFIX = "#"
VALUES = "#values"  # slots: VALUE_SLOTS
ACKED = "#acked"  # slots: time buckets of ok sends' acknowledgements
SEEN = "#seen"  # slots: time buckets at which an acknowledged value was first read by an ok poll
VALUE_SLOTS = ("attempted", "acknowledged", "failed", "indeterminate", "must_have_committed", "read", "ok_txn_reads")


def named(slots: dict[int, int]) -> dict[str, int]:
    """The summed #values row's slots by name (VALUE_SLOTS), 0 where no key counted any."""
    return {name: slots.get(i, 0) for i, name in enumerate(VALUE_SLOTS)}


def _distinct(values: pd.Series) -> int:
    # A (key, value) pair counts once; a missing value is one more (Spark's distinct of a struct).
    return int(values.nunique(dropna=False))


def _buckets(times: pd.Series, width: int) -> tuple[list[int], list[int]]:
    counts = np.floor(times.to_numpy(dtype="float64") / width).astype("int64")
    slots, n = np.unique(counts, return_counts=True)
    return [int(s) for s in slots], [int(c) for c in n]


def key_tallies(view: KeyView, width: int) -> pd.DataFrame:
    """The key's rows of counts (INSTANCE_COLUMNS). `width`: the report's time bucket, in ns.

    Unseen over time: a value acknowledged at t is unseen from t until the first ok poll that read
    it (or, read before its acknowledgement arrived, seen at its acknowledgement); never read, it
    stays unseen to the end.
    """
    s = view.sends
    by_type = {t: s.loc[s["type"] == t, "value"] for t in ("ok", "fail", "info")}
    counts = [
        _distinct(s["value"]),
        _distinct(by_type["ok"]),
        _distinct(by_type["fail"]),
        _distinct(by_type["info"]),
        _distinct(view.committed["value"]),
        _distinct(view.ok_reads["value"]),
        int((view.ok_reads["f"] == "txn").sum()),
    ]
    acked = s[(s["type"] == "ok") & s["time"].notna()]
    first_read = view.ok_reads.groupby("value")["time"].min()
    read_at = acked["value"].map(first_read)
    seen = np.maximum(acked["time"], read_at)[read_at.notna()]
    rows = [(VALUES, list(range(len(counts))), counts), (ACKED, *_buckets(acked["time"], width))]
    rows.append((SEEN, *_buckets(seen, width)))
    return tally_frame(view.key, rows)
