"""Live progress of a long run, for a person at a terminal and for a CI log.

A run reports two kinds of lines: events (the cluster is ready, a fault was applied, the final
read began), which always print, and a status line (operations so far, rate, time left), which
the workload refreshes every second. On a terminal the status line is rewritten in place; in a
CI log (not a terminal) it is printed only every `every` seconds, so a ten-minute run leaves
about sixty status lines, not six hundred. `--quiet` passes no progress at all.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from kafka_chaos.history.reporter import Reporter


class LiveProgress:
    """Callable for events (`progress("nemesis: kill kafka-2 ok")`), `.tick(status)` for the status line."""

    def __init__(
        self,
        stream: TextIO | None = None,
        every: float = 10.0,
        tty: bool | None = None,
        prefix: str = "",
        emit: Reporter | None = None,
    ):
        """`emit`: where lines go instead of a stream (a logger's info); never a terminal then."""
        self.stream = stream or sys.stderr
        self.every = every
        self.tty = False if emit else (self.stream.isatty() if tty is None else tty)
        self.prefix = prefix
        self._emit = emit or self._write
        self._last_tick = float("-inf")
        self._status_shown = False
        self._lock = threading.Lock()

    def __call__(self, message: str) -> None:
        with self._lock:
            self._clear_status()
            self._emit(f"{self.prefix}{message}")

    def tick(self, status: str) -> None:
        with self._lock:
            if self.tty:
                self.stream.write(f"\r\x1b[K{self.prefix}{status}")
                self.stream.flush()
                self._status_shown = True
                return
            now = time.monotonic()
            if now - self._last_tick >= self.every:
                self._last_tick = now
                self._emit(f"{self.prefix}{status}")

    def close(self) -> None:
        with self._lock:
            self._clear_status()
            self.stream.flush()

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def _clear_status(self) -> None:
        if self._status_shown:
            self.stream.write("\r\x1b[K")
            self._status_shown = False
