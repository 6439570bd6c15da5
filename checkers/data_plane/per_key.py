"""Every per-key rule of ../shared/anomalies.md in one pass over one key's rows.

The pipeline hands `key_rules` all micro-operations of one key at once (Spark's `applyInPandas`
after one shuffle by key; the rows are checkers/tables.py's micro table). Everything a rule needs
lives in the key once each row carries what its operation and process contribute, so each rule
module is a few vectorized pandas steps over the key's view (checkers/data_plane/version_order.py), and the
pipeline has one shuffle by key instead of a Spark job per rule. The same pass counts what the
stats and the report need of the key (checkers/data_plane/tallies.py).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import reduce
from importlib import import_module
from types import ModuleType
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame

from kafka_chaos.checkers.anomalies import ANOMALIES, DATA, INSTANCE_COLUMNS, INSTANCES
from kafka_chaos.checkers.data_plane import key_tables, tallies, version_order
from kafka_chaos.checkers.share import view as share_view
from kafka_chaos.checkers.sql import in_list

#: The data plane's rule modules, in the anomaly table's order: each one `rules(view: KeyView) ->
#: [instances]`, named by the table (checkers/anomalies.py `module`), so a new rule is its module
#: and its rows in the table. All live beside this module, on the checker's floor. (The control
#: plane's rules read other evidence: checkers/control_plane/judge.py.)
RULES: tuple[ModuleType, ...] = tuple(
    import_module(f"kafka_chaos.checkers.{module}")
    for module in dict.fromkeys(a.module for a in ANOMALIES if a.plane == DATA)
)


#: The rule modules with no Spark SQL form: run by a pandas pass over the keys a share group read.
SHARE_RULES = tuple(rule for rule in RULES if not hasattr(rule, "query"))


def _rules(view: version_order.KeyView, rules: tuple[ModuleType, ...] = RULES) -> list[pd.DataFrame]:
    return [frame for rule in rules for frame in rule.rules(view)]


def _frame(found: list[pd.DataFrame]) -> pd.DataFrame:
    found = [f for f in found if len(f)]
    if not found:
        return pd.DataFrame(columns=list(INSTANCE_COLUMNS))
    return pd.concat(found, ignore_index=True)


def key_rules(rows: pd.DataFrame, share: Any = None) -> pd.DataFrame:
    """All anomaly instances of one key (INSTANCE_COLUMNS); `rows` carry `evidenced`; `share`: a
    share-group run's context (checkers/share/context.py)."""
    return _frame(_rules(version_order.build(rows, share)))


def key_pass(evidenced: Collection[int], width: int, share: Any = None) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The function `applyInPandas` runs per key: the key's anomaly instances and its tallies.

    `evidenced`: the info operations an ok poll proved committed (in any key; checkers/tables.py);
    `width`: the report's time bucket in ns; `share`: a share-group run's context
    (checkers/share/context.py)."""
    return _viewed(
        evidenced, share, lambda view: [*_rules(view), tallies.key_tallies(view, width), *share_view.tallies(view)]
    )


def share_pass(evidenced: Collection[int], share: Any) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The function `applyInPandas` runs per key a share group read: the rules of the modules with
    no Spark SQL form (SHARE_RULES) and the key's share-group tallies."""
    return _viewed(evidenced, share, lambda view: [*_rules(view, SHARE_RULES), *share_view.tallies(view)])


def _viewed(
    evidenced: Collection[int], share: Any, judge: Callable[[version_order.KeyView], list[pd.DataFrame]]
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Per key: its rows marked with `evidenced`, its view built, and what `judge` finds in it."""
    marked = frozenset(int(op) for op in evidenced)

    def run(rows: pd.DataFrame) -> pd.DataFrame:
        return _frame(judge(version_order.build(rows.assign(evidenced=rows["op"].isin(marked)), share)))

    return run


def rules_query(micro: DataFrame, evidenced: Collection[int], width: int, share: Any = None) -> DataFrame:
    """Every anomaly instance and every tally of `micro`'s keys (INSTANCES): each rule module's
    Spark SQL (`query`) over every key at once, and a pandas pass over only the keys a share
    group read for the share rules, which have no SQL form yet."""
    spark = micro.sparkSession
    ev = spark.createDataFrame([(int(op),) for op in evidenced], "op bigint")
    t = key_tables.build(micro, ev, share is not None)
    found = [rule.query(t) for rule in RULES if rule not in SHARE_RULES]
    found.append(tallies.query(t, width))
    if share is not None:
        keys = micro.where(f"kind IN {in_list(key_tables.SHARE_KINDS)}").select("key").distinct()
        rows = micro.join(keys, "key", "left_semi")
        found.append(rows.groupBy("key").applyInPandas(share_pass(evidenced, share), INSTANCES))
    return reduce(DataFrame.unionByName, found)


def warm(rows: pd.DataFrame) -> pd.DataFrame:
    """Nothing: run by a first tiny job so that a Python worker has imported pandas, pyarrow and
    these rules before the per-key pass needs one (checkers/spark.py's warm_python)."""
    return rows
