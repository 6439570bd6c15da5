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
from pyspark.sql import DataFrame

from kafka_chaos.checkers.anomalies import instance_sql, instances, maybe, maybe_sql, one
from kafka_chaos.checkers.data_plane.key_tables import KeyTables
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


def query(t: KeyTables) -> DataFrame:
    """Both rules over every key (Spark SQL)."""
    lost = instance_sql("lost-write", "process", "array(op)", "os", "array(`value`)")
    unseen = instance_sql("unseen", "process", "array(op)", maybe_sql("offset"), "array(`value`)")
    share_only = "LEFT ANTI JOIN {share_only} USING (key)" if t.share_only is not None else ""
    unread = t.sql(
        f"""SELECT c.*, v.last_idx, b.bound FROM {{committed}} c
        LEFT ANTI JOIN {{ok_values}} USING (key, `value`)
        {share_only}
        LEFT JOIN {{values}} v USING (key, `value`)
        LEFT JOIN (
            SELECT key, max(v.first_idx) AS bound FROM {{values}} v JOIN {{ok_values}} USING (key, `value`) GROUP BY key
        ) b USING (key)"""
    ).selectExpr("*", "coalesce(last_idx <= bound, false) AS lost")
    return t.sql(
        f"""SELECT {", ".join(lost)} FROM (SELECT * FROM {{unread}} WHERE lost) u JOIN (
            SELECT key, `value`, array_sort(collect_list(offset)) AS os FROM {{seen}}
            WHERE (key, `value`) IN (SELECT key, `value` FROM {{unread}} WHERE lost) GROUP BY key, `value`
        ) USING (key, `value`)
        UNION ALL
        SELECT {", ".join(unseen)} FROM {{unread}} WHERE NOT lost AND `type` = 'ok'""",
        unread=unread,
    )
