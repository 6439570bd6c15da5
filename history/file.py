"""The history file: the one module that writes and reads it.

The format is the contract of ../shared/history-format.md (version 1), documented for users in
docs/history.md: JSON Lines, one event per line, appended as events happen. Workloads and the
nemesis write through HistoryWriter; checkers read through read_history. Neither needs the other.
Once the history is closed, the writer has its columnar copy written beside it from the finished
file (`write_columnar_copy`, history/columns.py).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from kafka_chaos.history import columns as history_columns
from kafka_chaos.history.events import INVOKE, TYPES

#: How often the writer hands its buffer to the OS: a process killed outright loses at most this
#: much of its history's end (a prefix stays valid; a stopped or interrupted run loses nothing).
FLUSH_S = 0.02


class HistoryWriter:
    """Appends events with consecutive indices and monotonic times since the run started.

    Thread-safe; each event is written as it happens and handed to the OS within FLUSH_S, so a
    run killed half way leaves a valid prefix (at worst a truncated last line, which readers
    tolerate), and a run that ends or is interrupted (close()) leaves every event.
    """

    def __init__(
        self,
        path: str | Path,
        start_ns: int | None = None,
        tap: Callable[[dict[str, Any]], None] | None = None,
        columns: bool = True,
    ) -> None:
        """`tap`: told of every event as it is written (from the writing thread, outside the
        writer's lock), for a reader that would otherwise read the file back at the end."""
        self.path = Path(path)
        self._tap = tap
        #: Whether close() writes the columnar copy (a writer of many small histories may not want it).
        self.columns = columns
        self.start_ns = time.monotonic_ns() if start_ns is None else start_ns
        #: Wall-clock time of time 0, to line the history up with broker logs and metadata records.
        self.started_unix_ms = time.time() * 1000 - (time.monotonic_ns() - self.start_ns) / 1e6
        self._lock = threading.Lock()
        self._file: TextIO = open(self.path, "a", encoding="utf-8")  # closed in close()
        self._index = 0
        self._closed = threading.Event()
        threading.Thread(target=self._flush_often, name="history-flush", daemon=True).start()

    def _flush_often(self) -> None:
        """Hand what was written to the OS every FLUSH_S: a flush per event cost the client
        threads more than the events' encoding (docs/measurements.md, 2026-11-25)."""
        while not self._closed.wait(FLUSH_S):
            try:
                self._file.flush()
            except ValueError:  # closed meanwhile: close() flushed it
                return

    def now(self) -> int:
        """Nanoseconds since the run started."""
        return time.monotonic_ns() - self.start_ns

    def write(
        self, process: int | str, type: str, f: str, value: Any, error: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        """Append one event; returns it (with its index and time)."""
        if type not in TYPES:
            raise ValueError(f"event type must be one of {TYPES}, not {type!r}")
        # Encoded outside the lock, and flushed outside it (the file's buffer has a lock of its
        # own): under 16 client threads the lock held over json.dumps and a flush was the
        # harness's largest cost after the client itself (docs/measurements.md, 2026-11-25). Index and time are
        # given under the lock, so both grow with the line's place in the file.
        rest: dict[str, Any] = {"process": process, "type": type, "f": f, "value": value}
        if error is not None:
            rest["error"] = error
        rest.update(extra)
        tail = json.dumps(rest, separators=(",", ":"))
        with self._lock:
            index, now = self._index, self.now()
            self._file.write(f'{{"index":{index},"time":{now},{tail[1:]}\n')
            self._index += 1
        event = {"index": index, "time": now, **rest}
        if self._tap is not None:
            self._tap(event)
        return event

    def flush(self) -> None:
        """Hand what was written to the OS now (for a reader of a live history)."""
        self._file.flush()

    def invoke(self, process: int | str, f: str, value: Any, **extra: Any) -> dict[str, Any]:
        return self.write(process, INVOKE, f, value, **extra)

    @property
    def count(self) -> int:
        return self._index

    def close(self) -> None:
        """Close the file, then write its columnar copy beside it (history/columns.py): what the
        checker reads instead of parsing the JSON. A history the copy cannot take gets none."""
        self._closed.set()
        with self._lock:
            if self._file.closed:
                return
            self._file.close()
        if self.columns:
            try:
                write_columnar_copy(self.path)
            except OSError as exc:  # no copy (a full disk): the checker reads the JSON, as it can
                print(f"warning: {self.path}: no columnar copy ({exc})", file=sys.stderr)

    def __enter__(self) -> HistoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class ReadReport:
    """What read_history noticed about the file itself (not about Kafka)."""

    events: int = 0
    warnings: list[str] = field(default_factory=list)


class HistoryFormatError(ValueError):
    """A line that is not a history event (other than a truncated last line)."""


def _check(event: Any, lineno: int) -> dict[str, Any]:
    if not isinstance(event, dict):
        raise HistoryFormatError(f"line {lineno}: an event must be a JSON object")
    missing = [k for k in ("index", "time", "process", "type", "f") if k not in event]
    if missing:
        raise HistoryFormatError(f"line {lineno}: missing field(s) {', '.join(missing)}")
    if event["type"] not in TYPES:
        raise HistoryFormatError(f"line {lineno}: unknown type {event['type']!r}")
    return event


def read_history(path: str | Path, report: ReadReport | None = None) -> Iterator[dict[str, Any]]:
    """Events in file order, streamed. A truncated last line is dropped with a warning in `report`."""
    report = report if report is not None else ReadReport()
    with open(path, encoding="utf-8") as file:
        pending: tuple[int, str] | None = None
        for lineno, line in enumerate(file, 1):
            if not line.strip():
                continue
            if pending is not None:
                yield _parse(*pending, report)
            pending = (lineno, line)
        if pending is not None:
            lineno, line = pending
            if not line.endswith("\n"):
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    report.warnings.append(f"line {lineno}: truncated last line ignored")
                    return
                yield _checked(event, lineno, report)
            else:
                yield _parse(lineno, line, report)


def _parse(lineno: int, line: str, report: ReadReport) -> dict[str, Any]:
    try:
        event = json.loads(line)
    except json.JSONDecodeError as exc:
        raise HistoryFormatError(f"line {lineno}: not JSON ({exc.msg})") from None
    return _checked(event, lineno, report)


def _checked(event: Any, lineno: int, report: ReadReport) -> dict[str, Any]:
    event = _check(event, lineno)
    report.events += 1
    return event


def write_columnar_copy(path: str | Path) -> Path | None:
    """Write a finished history's columnar copy beside it (history/columns.py), from its events as
    read_history reads them; None, and no copy, for a history the copy does not take. A
    truncated last line is refused here: the copy is of whole histories only."""
    report = ReadReport()

    def events() -> Iterator[dict[str, Any]]:
        yield from read_history(path, report)
        if report.warnings:
            raise HistoryFormatError(report.warnings[0])

    return history_columns.write_beside(Path(path), events())
