"""The kinds of a dependency edge between two transactions (../shared/anomalies.md, "Transactions").

Named here once: the cycle search (checkers/txn/cycles.py) keeps them as numbers in numpy arrays, the
anomaly table's cycle policies name them (checkers/anomalies.py), and results.json's examples and
the report spell each by its label.
"""

from __future__ import annotations

from enum import IntEnum


class EdgeKind(IntEnum):
    WW = 0  # in some key, T1 sent the value at index i and T2 the one at i + 1
    WR = 1  # an ok poll of T2 read a value that T1 sent
    PROCESS = 2  # the same process invoked T2 after T1 completed
    REALTIME = 3  # T1 completed before T2 was invoked

    @property
    def label(self) -> str:
        """The kind as results.json spells it: "ww", "wr", "process", "realtime"."""
        return self.name.lower()

    @classmethod
    def of(cls, label: str) -> EdgeKind:
        return cls[label.upper()]
