"""One key's version order, and everything the rules of that key share (pandas, one key at a time).

- A send must have committed if its operation is `ok`, or `info` with at least one of its values
  read by an `ok` poll (`evidenced`: an operation's sends stand or fall together, across keys, so
  the pipeline marks those operations before the shuffle by key; checkers/tables.py).
- The version order of a key: offsets seen by any poll (ok, info or fail) or by a must-have-
  committed send, numbered 0, 1, 2, ... without holes. An offset with several values is an
  `inconsistent-offsets` anomaly; every value seen at an offset takes that offset's index.
- A value's first and last index: the lowest and highest index of the offsets it was seen at
  (they differ only for a `duplicate`). Jepsen's lost-write bound uses first appearances and its
  test uses last appearances; so does ours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


@dataclass
class KeyView:
    key: str
    sends: pd.DataFrame  # every send micro-op of the key (tables.py's rows)
    reads: pd.DataFrame  # every read of the key, of every outcome
    assigns: pd.DataFrame  # the assign/subscribe operations that hold the key
    commits: pd.DataFrame  # the commit operations that name the key (offset: the next to read)
    ok_reads: pd.DataFrame
    ok_values: pd.Index  # distinct values some ok poll read
    committed: pd.DataFrame  # the sends that must have committed
    observed: pd.DataFrame  # offset, value, op: every sighting that builds the order
    seen: pd.DataFrame  # offset, value, idx: distinct sightings with the offset's index
    offsets: np.ndarray  # the key's known offsets, sorted: position = index
    values: pd.DataFrame  # by value: first_idx, last_idx, n (distinct offsets)
    share: Any = None  # the key's share-group rows (checkers/share/view.py ShareKey), if it has some

    def index_of(self, offsets: pd.Series) -> pd.Series:
        """The index of each known offset (NaN for an offset outside the order)."""
        return offsets.map(pd.Series(np.arange(len(self.offsets)), index=self.offsets))

    def offsets_of(self, values: pd.Index) -> pd.Series:
        """Each of `values` (seen in the order) -> the sorted offsets it was seen at, as ints."""
        mine = self.seen[self.seen["value"].isin(values)]
        return mine.groupby("value")["offset"].agg(lambda o: sorted(int(x) for x in o)).loc[values]


def build(rows: pd.DataFrame, share: Any = None) -> KeyView:
    """The view of one key's rows (all of them: the pipeline groups by key); `share`: the run's
    share-group context (checkers/share/context.py), when it has share consumers."""
    from kafka_chaos.checkers.share import view as share_view

    sends = rows[rows["kind"] == "send"]
    reads = rows[rows["kind"] == "read"]
    ok_reads = reads[reads["type"] == "ok"]
    ok_values = pd.Index(ok_reads["value"].unique())
    committed = sends[(sends["type"] == "ok") | ((sends["type"] == "info") & sends["evidenced"].astype(bool))]
    observed = pd.concat(
        [
            reads.loc[reads["offset"].notna(), ["offset", "value", "op"]],
            committed.loc[committed["offset"].notna(), ["offset", "value", "op"]],
        ]
    )
    seen = observed[["offset", "value"]].drop_duplicates()
    offsets = np.sort(seen["offset"].unique())
    seen = seen.assign(idx=np.searchsorted(offsets, seen["offset"].to_numpy()))
    values = seen.groupby("value").agg(first_idx=("idx", "min"), last_idx=("idx", "max"), n=("offset", "size"))
    return KeyView(
        rows["key"].iat[0],
        sends,
        reads,
        rows[rows["kind"] == "assign"],
        rows[rows["kind"] == "commit"],
        ok_reads,
        ok_values,
        committed,
        observed,
        seen,
        offsets,
        values,
        share_view.build(rows, share),
    )
