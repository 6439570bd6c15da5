"""`lost-write` and `unseen`: acknowledged values that no ok poll read.

Per key, *bound* is the highest first-appearance index of any value an ok poll read. A must-have-
committed value whose last appearance is at or below bound, and that no ok poll read, is a lost
write: later values were read, so a consumer went past where it should have been. An ok-sent value
that no ok poll read and that is not lost is unseen: nothing after it was read, so the checker
cannot tell lost from late (the run's final read phase is what makes unseen meaningful). A key
that only a share group read has no order to read past: its share rules judge what no member got.
"""

from __future__ import annotations

import pandas as pd

from kafka_chaos.checkers.anomalies import instances, maybe, one
from kafka_chaos.checkers.data_plane.version_order import KeyView


def rules(k: KeyView) -> list[pd.DataFrame]:
    if k.share is not None and k.reads.empty:  # read by a share group only: share-lost and share-unseen judge it
        return []
    unread = k.committed[~k.committed["value"].isin(k.ok_values)]
    if unread.empty:
        return []
    bound = k.values["first_idx"].reindex(k.ok_values).max()
    last = unread["value"].map(k.values["last_idx"])
    lost_mask = last.notna() & (last <= bound) if pd.notna(bound) else pd.Series(False, index=unread.index)
    out = []
    lost = unread[lost_mask]
    if len(lost):
        offsets = k.offsets_of(pd.Index(lost["value"].unique()))
        out.append(
            instances(
                "lost-write",
                k.key,
                lost["process"],
                one(lost["op"]),
                list(lost["value"].map(offsets)),
                one(lost["value"]),
            )
        )
    unseen = unread[~lost_mask & (unread["type"] == "ok")]
    if len(unseen):
        out.append(
            instances(
                "unseen", k.key, unseen["process"], one(unseen["op"]), maybe(unseen["offset"]), one(unseen["value"])
            )
        )
    return out
