"""One key's share-group rows as the share rules read them (checkers/data_plane/share_rules.py):
its deliveries with each one's hold, its acknowledgements, its start offset and its leader
changes; and the key's share-group counts (`tallies`), summed into results.json's `share`.

A *delivery* is a record a `share-poll` completion returned (rows of kind `deliver`: its poll's
invoke *i* and completion *c*, the delivery count the client reported). Its process's hold surely
lasts from *c* until the earliest of *i* + *L* − *S*, the process's first `share-ack` naming the
offset, its crash or close, and its end (context.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kafka_chaos.checkers.anomalies import tally_frame
from kafka_chaos.checkers.share.context import ShareContext
from kafka_chaos.history.events import ACK_TYPES, OK

#: The redeliveries' causes, in the order a cause is given (the first that applies), and the
#: tallies' names (summed over keys by checkers/check.py, like data_plane/tallies.py's).
CAUSES = ("release", "member end", "leader change", "lock expiry", "unexplained")
DELIVERIES, REDELIVERIES = "#share-deliveries", "#share-causes"
ARCHIVED, UNACKNOWLEDGED = "#share-archived", "#share-unacked"
#: Findings that only a leader change or a reload could excuse, excused while those were unknown
#: (context.py `unknown`): each one makes the verdict unknown (checkers/data_plane/share_rules.py).
UNVERIFIED = "#share-unverified"
#: Acknowledgements after which a record is never delivered again: accepted or rejected.
FINAL = (ACK_TYPES["accept"], ACK_TYPES["reject"])


@dataclass
class ShareKey:
    """One key's share-group rows: deliveries with their holds, acknowledgements, start offset."""

    #: op, process, itime, ctime, offset, value, count, lock_ms, limit, member_end (when its process
    #: stopped holding anything: crash, close or end), hold_end
    deliveries: pd.DataFrame
    acks: pd.DataFrame  # op, process, itime, ctime, offset, ack (ACK_TYPES' id), outcome
    start: int | None  # the share-partition start offset in the last share-offsets
    changes: np.ndarray  # the key's leader changes and share-partition reloads (ns, sorted)
    slack_ns: float = 0.0  # the control plane's slack S (context.py)
    unknown: bool = False  # whether the leader changes or reloads are unknown (context.py)

    def changed(self, start: pd.Series, end: pd.Series) -> np.ndarray:
        """Whether the key's leader changed, or its share partition was reloaded, between each
        `start` and `end` (inclusive), as far as known."""
        lo = np.searchsorted(self.changes, start.to_numpy(dtype="float64"), side="left")
        hi = np.searchsorted(self.changes, end.to_numpy(dtype="float64"), side="right")
        return hi > lo

    def excused(self, start: pd.Series, end: pd.Series) -> np.ndarray:
        """Whether a leader change or a reload may excuse what happened between each `start` and
        `end`: a known one, or any while they are unknown."""
        return np.ones(len(start), dtype=bool) if self.unknown else self.changed(start, end)


def build(rows: pd.DataFrame, ctx: ShareContext | None) -> ShareKey | None:
    """The key's share view, or None when it had no share-group rows (or no context)."""
    if ctx is None:
        return None
    d = rows[rows["kind"] == "deliver"]
    acks = rows[rows["kind"] == "ack"]
    starts = rows[rows["kind"] == "start"]
    if d.empty and acks.empty and starts.empty:
        return None
    key = rows["key"].iat[0]
    d = d[["op", "process", "itime", "time", "offset", "value", "count"]].rename(columns={"time": "ctime"})
    settings = d["op"].map(lambda op: ctx.settings.get(int(op), (None, None)))
    d = d.assign(
        lock_ms=[s[0] for s in settings],
        limit=[s[1] for s in settings],
        process=d["process"].astype(str),
    )
    acks = acks[["op", "process", "itime", "time", "offset", "value", "type"]].rename(
        columns={"time": "ctime", "value": "ack", "type": "outcome"}
    )
    acks = acks.assign(process=acks["process"].astype(str))
    ends = [ctx.hold_cap(p, int(c)) for p, c in zip(d["process"], d["ctime"].fillna(0), strict=True)]
    d = d.assign(member_end=np.asarray(ends, dtype="float64"))
    d = d.assign(hold_end=_hold_ends(d, acks, ctx))
    start = int(starts.sort_values("op")["offset"].iat[-1]) if len(starts) else None
    changes = np.asarray(sorted(ctx.changes_of(key)), dtype="float64")
    return ShareKey(d.reset_index(drop=True), acks, start, changes, float(ctx.slack_ns), ctx.unknown is not None)


def _hold_ends(d: pd.DataFrame, acks: pd.DataFrame, ctx: ShareContext) -> np.ndarray:
    if d.empty:
        return np.array([], dtype="float64")
    lock = d["itime"].to_numpy(dtype="float64") + d["lock_ms"].to_numpy(dtype="float64") * 1e6 - ctx.slack_ns
    lock = np.where(np.isnan(lock), np.inf, lock)  # no lock known: it does not bound the hold
    cap = d["member_end"].to_numpy(dtype="float64")
    end = np.minimum(lock, cap)
    if not acks.empty:
        named = d.assign(pos=np.arange(len(d))).merge(
            acks[["process", "offset", "itime"]], on=["process", "offset"], suffixes=("", "_ack")
        )
        named = named[named["itime_ack"] >= named["ctime"]]
        first = named.groupby("pos")["itime_ack"].min()
        acked = np.full(len(d), np.inf)
        acked[first.index.to_numpy(dtype="int64")] = first.to_numpy(dtype="float64")
        end = np.minimum(end, acked)
    return end


def tallies(k: Any) -> list[pd.DataFrame]:  # k: data_plane.version_order.KeyView
    """The key's share-group counts, as rows of the instance table: records (key, offset: a value
    as it was written once) by how many times they were delivered (slot: deliveries),
    redeliveries by cause (slot: CAUSES' index), records archived at the limit and records
    delivered but never acknowledged (slot 0)."""
    s: ShareKey | None = k.share
    if s is None or s.deliveries.empty:
        return []
    d = s.deliveries[s.deliveries["offset"].notna()].sort_values(["itime", "op"])
    per_value = d.groupby("offset").size()
    counts = per_value.value_counts()
    rows = [(DELIVERIES, [int(n) for n in counts.index], [int(c) for c in counts.to_numpy()])]
    causes = _causes(s, d)
    rows.append((REDELIVERIES, list(range(len(CAUSES))), [int((causes == i).sum()) for i in range(len(CAUSES))]))
    ok = s.acks[s.acks["outcome"] == OK]
    final = set(ok.loc[ok["ack"].isin(FINAL), "offset"])
    reached = d.groupby("offset").agg(count=("count", "max"), limit=("limit", "max"))
    archived = reached[(reached["count"] >= reached["limit"]) & ~reached.index.isin(final)]
    acked = set(ok["offset"])
    unacked = [o for o in d["offset"].unique() if o not in acked]
    rows += [(ARCHIVED, [0], [len(archived)]), (UNACKNOWLEDGED, [0], [len(unacked)])]
    return [tally_frame(k.key, rows)]


def _causes(s: ShareKey, d: pd.DataFrame) -> np.ndarray:
    """Each redelivery's cause (CAUSES' index), the first that applies: the previous holder
    released it (an ok release between the two); its member ended first (crash, close, or its
    last operation `info`); the key's leader changed between them; the lock may have run out
    first (the later delivery completed after the earlier poll's invoke + L - S: a client hands
    out records it fetched ahead, up to S before the poll, as the hold's end allows for)."""
    prev = d.groupby("offset").shift(1)
    again = prev["op"].notna().to_numpy()
    if not again.any():
        return np.array([], dtype="int64")
    b, a = d[again], prev[again]
    released = s.acks[(s.acks["outcome"] == OK) & (s.acks["ack"] == ACK_TYPES["release"])]
    pos = np.arange(len(b))
    both = pd.DataFrame({"process": a["process"].to_numpy(), "offset": b["offset"].to_numpy(), "pos": pos})
    hits = both.merge(released[["process", "offset", "itime"]], on=["process", "offset"])
    hits = hits[
        (hits["itime"] >= a["ctime"].to_numpy(dtype="float64")[hits["pos"]])
        & (hits["itime"] <= b["itime"].to_numpy(dtype="float64")[hits["pos"]])
    ]
    release = np.zeros(len(b), dtype=bool)
    release[hits["pos"].to_numpy(dtype="int64")] = True
    member_end = a["member_end"].to_numpy(dtype="float64") <= b["itime"].to_numpy(dtype="float64")
    changed = s.changed(a["itime"], b["ctime"])
    lock_end = a["itime"].to_numpy(dtype="float64") + a["lock_ms"].to_numpy(dtype="float64") * 1e6 - s.slack_ns
    expired = b["ctime"].to_numpy(dtype="float64") >= np.where(np.isnan(lock_end), np.inf, lock_end)
    return np.select([release, member_end, changed, expired], [0, 1, 2, 3], default=4)
