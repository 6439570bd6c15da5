"""`duplicate` and `inconsistent-offsets`: the log disagrees with itself.

Both come from every observation of (key, offset, value): any poll (ok, info or fail) and any
must-have-committed send with a known offset. A value at two offsets is a duplicate (an idempotent
producer should never write one twice); an offset with two values means two clients were told
different things about the same log position (typically a truncated and rewritten log).
"""

from __future__ import annotations

import pandas as pd

from kafka_chaos.checkers.anomalies import instances, one
from kafka_chaos.checkers.data_plane.version_order import KeyView

MAX_OPS = 8  # operations named per instance


def _ops(observed: pd.DataFrame, by: str, among: pd.Index) -> pd.Series:
    mine = observed[observed[by].isin(among)]
    return mine.groupby(by)["op"].agg(lambda ops: [int(o) for o in sorted(set(ops))[:MAX_OPS]]).loc[among]


def rules(k: KeyView) -> list[pd.DataFrame]:
    out = []
    # `seen` holds each (offset, value) once: an offset with more than one row has two values.
    # Counted first, listed only where there are conflicts (a list per offset costs a Python
    # call per offset, seconds on a key of a million offsets).
    n_values = k.seen.groupby("offset").size()
    conflicts = n_values.index[n_values > 1]
    if len(conflicts):
        mine = k.seen[k.seen["offset"].isin(conflicts)]
        at = mine.groupby("offset")["value"].agg(lambda v: sorted(int(x) for x in v)).loc[conflicts]
        out.append(
            instances(
                "inconsistent-offsets", k.key, None, _ops(k.observed, "offset", conflicts), one(conflicts), list(at)
            )
        )
    dups = k.values.index[k.values["n"] > 1]
    if len(dups):
        out.append(
            instances("duplicate", k.key, None, _ops(k.observed, "value", dups), list(k.offsets_of(dups)), one(dups))
        )
    return out
