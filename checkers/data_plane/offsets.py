"""`duplicate` and `inconsistent-offsets`: the log disagrees with itself.

Both come from every observation of (key, offset, value): any poll (ok, info or fail) and any
must-have-committed send with a known offset. A value at two offsets is a duplicate (an idempotent
producer should never write one twice); an offset with two values means two clients were told
different things about the same log position (typically a truncated and rewritten log).
"""

from __future__ import annotations

import pandas as pd
from pyspark.sql import DataFrame

from kafka_chaos.checkers.anomalies import instance_sql, instances, one
from kafka_chaos.checkers.data_plane.key_tables import KeyTables
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


def query(t: KeyTables) -> DataFrame:
    """Both rules over every key (Spark SQL): the few offsets and values in conflict first, then
    what was seen of them."""
    ops = f"slice(array_sort(collect_set(o.op)), 1, {MAX_OPS})"
    conflicts = instance_sql("inconsistent-offsets", None, ops, "array(offset)", "first(vs)")
    dups = instance_sql("duplicate", None, ops, "first(os)", "array(`value`)")
    return t.sql(
        f"""SELECT {", ".join(conflicts)} FROM {{observed}} o JOIN (
            SELECT key, offset, array_sort(collect_list(`value`)) AS vs FROM {{seen}}
            WHERE `value` IS NOT NULL GROUP BY key, offset HAVING count(1) > 1
        ) c USING (key, offset) GROUP BY key, offset
        UNION ALL
        SELECT {", ".join(dups)} FROM {{observed}} o JOIN (
            SELECT key, `value`, array_sort(collect_list(offset)) AS os FROM {{seen}}
            WHERE (key, `value`) IN (SELECT key, `value` FROM {{values}} WHERE n > 1) GROUP BY key, `value`
        ) d USING (key, `value`) GROUP BY key, `value`"""
    )
