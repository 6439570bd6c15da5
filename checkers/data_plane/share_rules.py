"""Every share-group rule of ../shared/anomalies.md ("Share groups"), per key, in the data
plane's pass, over the key's share view (checkers/share/view.py). A share rule: its module is
named by the anomaly table like any other (checkers/anomalies.py), and reads only `k.share`.

Deliveries are paired by record, the offset a poll returned in this key, not by value (a value
written at two offsets is a `duplicate` already). Two deliveries of one record are compared when
the later poll was invoked after the earlier completed; a leader change or a share-partition
reload of the key between the earlier's invoke and the later's completion turns what would be an
error of concurrency or of the count into `share-redelivered-on-failover`, reported.

After a member's `ok` accept or reject of a record, a later delivery of it is an error
(`share-redelivered-after-ack`) only where the broker took it again: its own acknowledgement
came back `ok`, or its count grew past the accepted delivery's with no change or reload between.
Otherwise, its acknowledgement refused or never made and its count not above, it is
`share-stale-delivery`, reported: a client handing out a buffer the broker no longer honours.
That row judges its count (not above the accepted one's), so a stale delivery is not the later
delivery of a `share-delivery-count` pair too.

While the leader changes or reloads are unknown (context.py), what only one could excuse is
excused and counted (view.py UNVERIFIED): the check makes such a verdict unknown, never valid.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kafka_chaos.checkers.anomalies import instances, maybe, one, pairs, tally_frame
from kafka_chaos.checkers.data_plane.version_order import KeyView
from kafka_chaos.checkers.share.view import FINAL, UNVERIFIED, ShareKey
from kafka_chaos.history.events import OK

FAILOVER = "share-redelivered-on-failover"
REFUSED = "fail"  # a share-ack's outcome for a key the broker did not take


def rules(k: KeyView) -> list[pd.DataFrame]:
    s: ShareKey | None = k.share
    if s is None:
        return []
    key, d, out = k.key, s.deliveries, []
    dup = d[d.duplicated(["op", "offset"], keep="first")]
    if len(dup):
        out.append(_single("share-duplicate-in-poll", key, dup))
    after, unverified_after, stale = _after_ack(key, s)
    pairs_found, unverified = _pairs(key, s, stale)
    out += pairs_found
    over = d[d["count"].notna() & d["limit"].notna() & (d["count"] > d["limit"])]
    if len(over):
        out.append(_single("share-delivery-count", key, over))
    out += after
    out += _double_acceptance(key, s)
    out += _undelivered(k, s)
    if unverified + unverified_after:
        out.append(tally_frame(key, [(UNVERIFIED, [0], [unverified + unverified_after])]))
    return out


def _single(name: str, key: str, rows: pd.DataFrame) -> pd.DataFrame:
    """Instances of one operation's row each: its op, offset and value."""
    return instances(name, key, rows["process"], one(rows["op"]), maybe(rows["offset"]), maybe(rows["value"]))


def _pairs(key: str, s: ShareKey, stale: set[tuple[int, int]]) -> tuple[list[pd.DataFrame], int]:
    """Two deliveries of one record, the later poll invoked after the earlier completed; and how
    many errors only an unknown leader change or reload excused. A later delivery that is a
    `share-stale-delivery` (`stale`: its op and offset) has its count judged by that row (not
    above the accepted one's, from an acquisition the broker no longer honoured), not compared
    again here."""
    d = s.deliveries[s.deliveries["ctime"].notna() & s.deliveries["offset"].notna()]
    if len(d) < 2:
        return [], 0
    p = d.merge(d, on="offset", suffixes=("_a", "_b"))
    p = p[p["itime_b"] > p["ctime_a"]]
    if p.empty:
        return [], 0
    known = s.changed(p["itime_a"], p["ctime_b"])
    changed = s.excused(p["itime_a"], p["ctime_b"])
    concurrent = (p["ctime_b"] < p["hold_end_a"]).to_numpy()
    counted = (p["count_a"].notna() & p["count_b"].notna()).to_numpy()
    honoured = ~np.array([(int(o), int(f)) in stale for o, f in zip(p["op_b"], p["offset"], strict=True)], dtype=bool)
    stuck = counted & (p["count_b"] <= p["count_a"]).to_numpy() & honoured
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
                    pairs(hit["offset"], hit["offset"]),
                    maybe(hit["value_b"]),
                )
            )
    unverified = int(((concurrent | stuck) & changed & ~known).sum())
    return out, unverified


def _accepted(s: ShareKey) -> pd.DataFrame:
    """Each record's first ok accept or reject (by completion), with the delivery it
    acknowledged: the acking process's latest delivery of the record completed before the ack's
    invoke (its count and poll invoke; missing when the history holds none)."""
    a = s.acks[(s.acks["outcome"] == OK) & s.acks["ack"].isin(FINAL) & s.acks["ctime"].notna()]
    if a.empty:
        return a.assign(acked_itime=pd.Series(dtype="float64"), acked_count=pd.Series(dtype="float64"))
    first = a.sort_values(["ctime", "op"]).groupby("offset").head(1)
    first = first[["op", "process", "itime", "ctime", "offset"]]
    d = s.deliveries[["process", "offset", "itime", "ctime", "count"]]
    m = first.merge(d, on=["process", "offset"], how="left", suffixes=("", "_d"))
    m = m[m["ctime_d"].isna() | (m["ctime_d"] <= m["itime"])].sort_values("ctime_d")
    got = m.groupby("op", as_index=False).tail(1)[["op", "itime_d", "count"]]
    first = first.merge(got, on="op", how="left")
    return first.rename(columns={"itime_d": "acked_itime", "count": "acked_count"})


def _own_outcome(s: ShareKey, hit: pd.DataFrame) -> np.ndarray:
    """Each delivery's own acknowledgement's outcome for the key: its process's first share-ack
    naming the offset invoked after the delivery completed ("" where it made none)."""
    mine = hit[["pos", "process", "offset", "ctime"]].merge(
        s.acks[["process", "offset", "itime", "outcome"]], on=["process", "offset"], suffixes=("", "_ack")
    )
    mine = mine[mine["itime"] >= mine["ctime"]].sort_values("itime").groupby("pos").head(1)
    outcome = np.full(len(hit), "", dtype=object)
    outcome[mine["pos"].to_numpy(dtype="int64")] = mine["outcome"].to_numpy()
    return outcome


def _after_ack(key: str, s: ShareKey) -> tuple[list[pd.DataFrame], int, set[tuple[int, int]]]:
    """Deliveries whose poll was invoked after the record's first ok accept or reject completed:
    `share-redelivered-after-ack` where the broker took it again, `share-stale-delivery` (another
    member's) where it did not; how many were excused only by unknown changes or reloads; and
    the stale deliveries (op, offset)."""
    first = _accepted(s)
    if first.empty or s.deliveries.empty:
        return [], 0, set()
    first = first.rename(columns={"op": "ack_op", "process": "ack_process", "itime": "ack_itime", "ctime": "acked"})
    hit = s.deliveries[s.deliveries["offset"].notna()].merge(first, on="offset")
    hit = hit[hit["itime"] > hit["acked"]].reset_index(drop=True)
    if hit.empty:
        return [], 0, set()
    hit = hit.assign(pos=np.arange(len(hit)))
    own = _own_outcome(s, hit)
    took_ack = own == OK
    since = hit["acked_itime"].fillna(hit["ack_itime"])
    end = hit["ctime"].fillna(hit["itime"])
    above = (hit["count"].notna() & hit["acked_count"].notna() & (hit["count"] > hit["acked_count"])).to_numpy()
    known = s.changed(since, end)
    excused = s.excused(since, end)
    again = took_ack | (above & ~excused)
    stale = ~took_ack & ~above & np.isin(own, ["", REFUSED]) & (hit["process"] != hit["ack_process"]).to_numpy()
    out = []
    for name, mask in (("share-redelivered-after-ack", again), ("share-stale-delivery", stale)):
        rows = hit[mask]
        if len(rows):
            out.append(
                instances(
                    name,
                    key,
                    rows["process"],
                    pairs(rows["ack_op"], rows["op"]),
                    one(rows["offset"]),
                    maybe(rows["value"]),
                )
            )
    gone = {(int(o), int(f)) for o, f in zip(hit["op"][stale], hit["offset"][stale], strict=True)}
    return out, int((~took_ack & above & excused & ~known).sum()), gone


def _double_acceptance(key: str, s: ShareKey) -> list[pd.DataFrame]:
    """Records that two different processes' share-acks accepted or rejected, both ok for the
    key: one instance per record, naming the first ok ack and the first of another process."""
    a = s.acks[(s.acks["outcome"] == OK) & s.acks["ack"].isin(FINAL)].sort_values(["ctime", "op"])
    firsts = a.groupby(["offset", "process"], as_index=False).head(1)
    twice = firsts.groupby("offset").head(2)
    twice = twice[twice.groupby("offset")["process"].transform("size") == 2]
    if twice.empty:
        return []
    a_ = twice.groupby("offset").head(1).sort_values("offset")
    b_ = twice.groupby("offset").tail(1).sort_values("offset")
    return [
        instances(
            "share-double-acceptance",
            key,
            b_["process"],
            pairs(a_["op"], b_["op"]),
            one(b_["offset"]),
            [[] for _ in range(len(b_))],
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
