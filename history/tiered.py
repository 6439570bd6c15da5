"""A tiered run's files typed: log-starts.json (where each partition begins at the run's end, on
every replica and in remote storage) and summary.json's `tiered_reads` (where the final read's
records came from). The harness makes them (harness/tiered.py `log_starts`, `ReadSources`), the
run writes them (runs/run.py), the checker reads them (checkers/tiered.py): all through these
classes' `to_json` and `from_json`.

`from_json` raises ValueError for a document that is not this shape, so that the checker says the
file could not be read rather than judging half of it. A start is an integer or None (unknown:
that replica did not answer, and `error` says why), never 0 for unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not an object")
    return value


def _opt_int(value: Any, what: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"{what} is not an integer: {value!r}")
    return value


def _int(value: Any, what: str) -> int:
    if value is None:
        raise ValueError(f"{what} is missing")
    return _opt_int(value, what)  # type: ignore[return-value]


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} is not text: {value!r}")
    return value


@dataclass(frozen=True)
class ReplicaStart:
    """One replica's start of a partition: the partition's (`log_start`, remote storage included)
    and its local log's (`local_log_start`), None when not answered; `error`, why not: a line of
    text, or the broker's error codes per field (harness/admin.py `log_starts_from`)."""

    log_start: int | None
    local_log_start: int | None
    error: str | dict[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"log_start": self.log_start, "local_log_start": self.local_log_start}
        if self.error is not None:
            out["error"] = self.error
        return out

    @classmethod
    def from_json(cls, data: Any) -> ReplicaStart:
        data = _object(data, "a replica's starts")
        error = data.get("error")
        if error is not None and not isinstance(error, str):
            error = {str(k): _int(v, "an error code") for k, v in _object(error, "error").items()}
        return cls(
            _opt_int(data.get("log_start"), "log_start"),
            _opt_int(data.get("local_log_start"), "local_log_start"),
            error,
        )


@dataclass(frozen=True)
class RemoteStart:
    """A partition in remote storage: how many segments it has, the lowest base offset among them."""

    segments: int
    lowest_offset: int | None

    def to_json(self) -> dict[str, Any]:
        return {"segments": self.segments, "lowest_offset": self.lowest_offset}

    @classmethod
    def from_json(cls, data: Any) -> RemoteStart:
        data = _object(data, "remote")
        return cls(_int(data.get("segments", 0), "segments"), _opt_int(data.get("lowest_offset"), "lowest_offset"))


@dataclass(frozen=True)
class PartitionStarts:
    """One partition's starts: each replica's by broker id (as text), and remote storage's."""

    replicas: dict[str, ReplicaStart]
    remote: RemoteStart

    def to_json(self) -> dict[str, Any]:
        return {"replicas": {b: r.to_json() for b, r in self.replicas.items()}, "remote": self.remote.to_json()}

    @classmethod
    def from_json(cls, data: Any) -> PartitionStarts:
        data = _object(data, "a partition")
        replicas = _object(data.get("replicas", {}), "replicas")
        return cls(
            {str(b): ReplicaStart.from_json(r) for b, r in replicas.items()},
            RemoteStart.from_json(data.get("remote", {})),
        )


@dataclass(frozen=True)
class LogStarts:
    """log-starts.json: `partitions` by key (`topic/partition`); `unanswered`, each broker that could
    not be asked at all and why; `taken` and `assignment`, how the starts were read."""

    partitions: dict[str, PartitionStarts]
    unanswered: dict[str, str]
    taken: str = ""
    assignment: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "taken": self.taken,
            "assignment": self.assignment,
            "partitions": {k: p.to_json() for k, p in self.partitions.items()},
            "unanswered": dict(self.unanswered),
        }

    @classmethod
    def from_json(cls, data: Any) -> LogStarts:
        data = _object(data, "log-starts.json")
        partitions = _object(data.get("partitions", {}), "partitions")
        unanswered = _object(data.get("unanswered", {}), "unanswered")
        return cls(
            {str(k): PartitionStarts.from_json(p) for k, p in partitions.items()},
            {str(b): _str(why, "an unanswered broker's reason") for b, why in unanswered.items()},
            _str(data.get("taken", ""), "taken"),
            _str(data.get("assignment", ""), "assignment"),
        )


@dataclass(frozen=True)
class TieredReads:
    """summary.json's `tiered_reads`: distinct records (key, offset) the final read got from remote
    storage and from local logs, the local log starts it counted against (per key, None where no
    broker held a segment), and how it counted."""

    from_remote: int
    from_local: int
    local_log_start: dict[str, int | None] | None
    how: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "from_remote": self.from_remote,
            "from_local": self.from_local,
            "local_log_start": None if self.local_log_start is None else dict(self.local_log_start),
            "how": self.how,
        }

    @classmethod
    def from_json(cls, data: Any) -> TieredReads:
        data = _object(data, "tiered_reads")
        starts = data.get("local_log_start")
        if starts is not None:
            starts = {str(k): _opt_int(v, "a local log start") for k, v in _object(starts, "local_log_start").items()}
        return cls(
            _int(data.get("from_remote"), "from_remote"),
            _int(data.get("from_local"), "from_local"),
            starts,
            _str(data.get("how", ""), "how"),
        )
