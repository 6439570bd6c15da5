"""Every share-group rule of ../shared/anomalies.md ("Share groups"), per key, in the data
plane's pass, over the key's share view (checkers/share/view.py).

Two deliveries of one value are compared when the later poll was invoked after the earlier
completed; a leader change of the key between the earlier's invoke and the later's completion
turns what would be an error of concurrency or of the count into
`share-redelivered-on-failover`, reported.
"""

from __future__ import annotations

import pandas as pd

from kafka_chaos.checkers.anomalies import instances, maybe, one, pairs
from kafka_chaos.checkers.data_plane.version_order import KeyView
from kafka_chaos.checkers.share.view import FINAL, ShareKey
from kafka_chaos.history.events import OK

FAILOVER = "share-redelivered-on-failover"


def rules(k: KeyView) -> list[pd.DataFrame]:
    s: ShareKey | None = k.share
    if s is None:
        return []
    key, d, out = k.key, s.deliveries, []
    dup = d[d.duplicated(["op", "offset"], keep="first")]
    if len(dup):
        out.append(_single("share-duplicate-in-poll", key, dup))
    out += _pairs(key, s)
    over = d[d["count"].notna() & d["limit"].notna() & (d["count"] > d["limit"])]
    if len(over):
        out.append(_single("share-delivery-count", key, over))
    out += _after_ack(key, s)
    out += _undelivered(k, s)
    return out


def _single(name: str, key: str, rows: pd.DataFrame) -> pd.DataFrame:
    """Instances of one operation's row each: its op, offset and value."""
    return instances(name, key, rows["process"], one(rows["op"]), maybe(rows["offset"]), maybe(rows["value"]))


def _pairs(key: str, s: ShareKey) -> list[pd.DataFrame]:
    """Two deliveries of one value, the later poll invoked after the earlier completed."""
    d = s.deliveries[s.deliveries["ctime"].notna() & s.deliveries["value"].notna()]
    if len(d) < 2:
        return []
    p = d.merge(d, on="value", suffixes=("_a", "_b"))
    p = p[p["itime_b"] > p["ctime_a"]]
    if p.empty:
        return []
    changed = s.changed(p["itime_a"], p["ctime_b"])
    concurrent = (p["ctime_b"] < p["hold_end_a"]).to_numpy()
    known = (p["count_a"].notna() & p["count_b"].notna()).to_numpy()
    stuck = known & (p["count_b"] <= p["count_a"]).to_numpy()
    out = []
    for name, mask in (
        ("share-concurrent-delivery", concurrent & ~changed),
        ("share-delivery-count", stuck & ~changed),
        (FAILOVER, (concurrent | stuck) & changed),
    ):
        hit = p[mask]
        if len(hit):
            out.append(
                instances(
                    name,
                    key,
                    hit["process_b"],
                    pairs(hit["op_a"], hit["op_b"]),
                    pairs(hit["offset_a"], hit["offset_b"]),
                    one(hit["value"]),
                )
            )
    return out


def _after_ack(key: str, s: ShareKey) -> list[pd.DataFrame]:
    """Deliveries whose poll was invoked after an ok accept or reject of the offset completed."""
    a = s.acks[(s.acks["outcome"] == OK) & s.acks["ack"].isin(FINAL) & s.acks["ctime"].notna()]
    if a.empty or s.deliveries.empty:
        return []
    first = a.sort_values("ctime").groupby("offset").head(1)[["offset", "op", "ctime"]]
    hit = s.deliveries.merge(first.rename(columns={"op": "ack_op", "ctime": "acked"}), on="offset")
    hit = hit[hit["itime"] > hit["acked"]]
    if hit.empty:
        return []
    return [
        instances(
            "share-redelivered-after-ack",
            key,
            hit["process"],
            pairs(hit["ack_op"], hit["op"]),
            one(hit["offset"]),
            maybe(hit["value"]),
        )
    ]


def _undelivered(k: KeyView, s: ShareKey) -> list[pd.DataFrame]:
    """Acknowledged writes no share-poll delivered: below the start offset (the broker holds them
    done) `share-lost`, else (an ok send) `share-unseen`."""
    delivered = set(s.deliveries["value"].dropna())
    missing = k.committed[~k.committed["value"].isin(delivered)]
    if missing.empty:
        return []
    lost = missing["offset"].notna() & (missing["offset"] < s.start) if s.start is not None else missing["value"].isna()
    out = []
    for name, rows in (("share-lost", missing[lost]), ("share-unseen", missing[~lost & (missing["type"] == OK)])):
        if len(rows):
            out.append(_single(name, k.key, rows))
    return out
