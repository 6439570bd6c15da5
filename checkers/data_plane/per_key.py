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
from importlib import import_module
from types import ModuleType
from typing import Any

import pandas as pd

from kafka_chaos.checkers.anomalies import ANOMALIES, DATA, INSTANCE_COLUMNS, SHARE_MODULES
from kafka_chaos.checkers.data_plane import tallies, version_order
from kafka_chaos.checkers.share import view as share_view

_ROOT = "kafka_chaos.checkers."
#: The data plane's rule modules, in the anomaly table's order: each one `rules(view: KeyView) ->
#: [instances]`, named by the table (checkers/anomalies.py `module`), so a new rule is its module
#: and its rows in the table. All live beside this module, on the checker's floor. (The control
#: plane's rules read other evidence: checkers/control_plane/judge.py.)
RULES: tuple[ModuleType, ...] = tuple(
    import_module(f"{_ROOT}{module}") for module in dict.fromkeys(a.module for a in ANOMALIES if a.plane == DATA)
)


#: The share groups' rule modules, as the anomaly table marks them (checkers/anomalies.py
#: SHARE_MODULES): run only over a key a share group read (its view has share rows).
SHARE_RULES = tuple(rule for rule in RULES if rule.__name__.removeprefix(_ROOT) in SHARE_MODULES)
#: The others: run over every key.
PLAIN_RULES = tuple(rule for rule in RULES if rule not in SHARE_RULES)


def _rules(view: version_order.KeyView) -> list[pd.DataFrame]:
    rules = RULES if view.share is not None else PLAIN_RULES
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
    marked = frozenset(int(op) for op in evidenced)

    def run(rows: pd.DataFrame) -> pd.DataFrame:
        view = version_order.build(rows.assign(evidenced=rows["op"].isin(marked)), share)
        return _frame([*_rules(view), tallies.key_tallies(view, width), *share_view.tallies(view)])

    return run


def warm(rows: pd.DataFrame) -> pd.DataFrame:
    """Nothing: run by a first tiny job so that a Python worker has imported pandas, pyarrow and
    these rules before the per-key pass needs one (checkers/spark.py's warm_python)."""
    return rows
