"""`commit-lost`: a member given a key starts below the group's acknowledged commit of it.

A subscribe completion that adds a key (the process's previous assignment did not hold it) makes
the member the key's new owner; its first poll of the key under that assignment shows where the
group told it to start. The offset it must not start below: the latest `ok` commit of the key
completed before the subscribe was invoked, unless another commit of the key overlapped that one
in time (then the coordinator's order of the two is unknown). Starting below it means an
acknowledged commit was dropped (KAFKA-20634); starting above it is `poll-skip`'s concern.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kafka_chaos.checkers.anomalies import instances
from kafka_chaos.checkers.data_plane.version_order import KeyView
from kafka_chaos.history.events import OK, SUBSCRIBE

NAME = "commit-lost"


def rules(k: KeyView) -> list[pd.DataFrame]:
    c = k.commits
    if c.empty or k.assigns.empty or k.reads.empty:
        return []
    trusted = _latest_trusted(c)
    if trusted.empty:
        return []
    added = _additions(k.assigns)
    if added.empty:
        return []
    # The latest ok commit completed strictly before each addition's subscribe was invoked.
    ok = c[(c["type"] == OK) & c["time"].notna()].sort_values("time")
    added = added.sort_values("itime")
    found = pd.merge_asof(
        added.assign(at=added["itime"].astype("float64")),
        ok.assign(at=ok["time"].astype("float64"))[["at", "op", "offset"]].rename(
            columns={"op": "commit_op", "offset": "committed"}
        ),
        on="at",
        allow_exact_matches=False,
    )
    found = found[found["commit_op"].notna() & found["commit_op"].isin(trusted)]
    if found.empty:
        return []
    first = _first_polls(k.reads)
    hits = found.merge(first, on=["process", "n_assign"])
    hits = hits[hits["first_offset"] < hits["committed"]]
    if hits.empty:
        return []
    return [
        instances(
            NAME,
            k.key,
            hits["process"],
            [[int(a), int(b), int(p)] for a, b, p in zip(hits["commit_op"], hits["op"], hits["poll_op"], strict=True)],
            [[int(a), int(b)] for a, b in zip(hits["committed"], hits["first_offset"], strict=True)],
            [[int(v)] for v in hits["first_value"]],
        )
    ]


def _latest_trusted(c: pd.DataFrame) -> pd.Series:
    """The ok commits of the key that no other commit of it overlapped in time (an operation with
    no completion lasts to the end)."""
    s = c.sort_values(["itime", "op"])
    start = s["itime"].to_numpy(dtype="float64")
    end = s["time"].to_numpy(dtype="float64")
    end = np.where(np.isnan(end), np.inf, end)
    earlier_end = np.r_[-np.inf, np.maximum.accumulate(end)[:-1]]
    next_start = np.r_[start[1:], np.inf]
    alone = (earlier_end < start) & (next_start > end)
    return s.loc[alone & (s["type"] == OK).to_numpy() & ~np.isnan(s["time"].to_numpy(dtype="float64")), "op"]


def _additions(assigns: pd.DataFrame) -> pd.DataFrame:
    """The ok subscribes that gave their process the key: its assignment just before did not hold it."""
    a = assigns[["process", "op", "f", "type", "n_assign", "itime"]]
    held_before = set(zip(a["process"], a["n_assign"], strict=True))
    before = pd.Series([(p, n - 1) not in held_before for p, n in zip(a["process"], a["n_assign"], strict=True)])
    adds = a[before.to_numpy() & (a["f"] == SUBSCRIBE).to_numpy() & (a["type"] == OK).to_numpy()]
    return adds[adds["itime"].notna()]


def _first_polls(reads: pd.DataFrame) -> pd.DataFrame:
    """Per process and assignment, the first poll that returned the key: its op and the first
    offset and value it returned of it."""
    r = reads[reads["offset"].notna()].sort_values(["op", "pos"])
    first = r.groupby(["process", "n_assign"], sort=False).head(1)
    return first[["process", "n_assign", "op", "offset", "value"]].rename(
        columns={"op": "poll_op", "offset": "first_offset", "value": "first_value"}
    )
