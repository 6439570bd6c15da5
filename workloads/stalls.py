"""A workload process held still inside a transaction: an application that stalls (a long GC,
a slow downstream call, a stopped container) while its transaction is open.

The nemesis asks (`Nemesis.hold_client`); the next transaction of the txn workload that has a
second send to make takes the hold once its first send is acknowledged, sleeps, and goes on with
the rest. Kafka's producer keeps running meanwhile: only the application is still, and the
coordinator may abort the open transaction when it outlasts `transaction.timeout.ms`. What the
transaction then came to (its outcome and error) is handed back to the asker.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class Hold:
    """One asked-for hold: how long, and, once a process took it, which one and how its
    transaction ended."""

    seconds: float
    process: int | None = None
    outcome: str | None = None
    error: str | None = None
    taken: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)


class ClientStalls:
    """The holds asked of the run's workload processes, one at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._asked: Hold | None = None

    def ask(self, seconds: float) -> Hold:
        """A hold for the next process that can take it; ValueError while another is asked."""
        with self._lock:
            if self._asked is not None and not self._asked.done.is_set():
                raise ValueError("a workload process is already asked to hold")
            self._asked = Hold(seconds)
            return self._asked

    def take(self, process: int) -> Hold | None:
        """The hold asked and not yet taken, now this process's; None when there is none."""
        with self._lock:
            hold = self._asked
            if hold is None or hold.taken.is_set():
                return None
            hold.process = process
            hold.taken.set()
            return hold

    def withdraw(self, hold: Hold) -> bool:
        """Take back a hold no process took; False when one took it meanwhile."""
        with self._lock:
            if hold.taken.is_set():
                return False
            if self._asked is hold:
                self._asked = None
            hold.done.set()
            return True

    @staticmethod
    def finish(hold: Hold, outcome: str, error: str | None) -> None:
        """The held process's transaction ended so."""
        hold.outcome, hold.error = outcome, error
        hold.done.set()
