"""Where a run reports a line for a person: the cluster is ready, a fault was applied, the check
began. One protocol for every floor (the cluster's log, the workload's progress, the nemesis's
operations, the checker's phases), on the bottom floor because every floor reports; a
`harness.progress.LiveProgress` is one, and so is `print`.
"""

from __future__ import annotations

from typing import Protocol


class Reporter(Protocol):
    """Takes one line. A reporter that also has `tick(status)` shows the workload's status line
    (operations, rate, time left) in place on a terminal."""

    def __call__(self, line: str, /) -> None: ...


def silent(line: str, /) -> None:
    """A reporter that drops every line."""
