"""The history's columnar copy: its operations and micro-operations as flat rows, in Parquet.

The JSON Lines file stays the contract (../shared/history-format.md); this copy is what the checker
reads when it is there and current, so that a check parses no JSON and pairs no events (the
largest part of a large check: docs/measurements.md, "Where a check's time goes"). Its rows are
exactly those of the checker's flat table (checkers/tables.py `flat`, which builds them from the
JSON in Spark when there is no copy): a row per operation (kind `op`), and one per send, read,
delivery, acknowledgement, share start, key held by an assign/subscribe, and key named by a
commit. tests/checkers/test_columns.py holds the two equal.

The copy is written once the history is complete (HistoryWriter.close, or history/file.py's
`write_columnar_copy` for a bare file, which the first check of a history without a current copy
calls: checkers/load.py `copy_for`), never half: a file is renamed into place. It records the
history's size and modification time; a history changed since (appended to, rewritten) has no
current copy. The copy is made only of histories whose every event has the format's shapes:
anything else (a broken pairing, a value of another shape, a truncated line) leaves no copy, and
the checker reads the JSON, which reports it as it always has.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kafka_chaos.history.events import (
    ACK_TYPES,
    ASSIGNS,
    CLIENT_FS,
    COMMIT,
    INFO,
    INVOKE,
    NEMESIS,
    POLL,
    SEND,
    SHARE_ACK,
    SHARE_FS,
    SHARE_OFFSETS,
    SHARE_POLL,
    TYPES,
)
from kafka_chaos.history.run_dir import HISTORY, HISTORY_COLUMNS

#: Bumped when the rows change: a copy of another version is not current.
VERSION = 1
#: The columns and types of an operation's own row (kind `op`); a micro-op's row keeps op,
#: process, f and type (its own outcome where it has one) of them, and itime where TIMED.
OP_COLUMNS: tuple[tuple[str, str], ...] = (
    ("op", "int64"),
    ("invoke", "int64"),
    ("process", "string"),
    ("f", "string"),
    ("type", "string"),
    ("itime", "int64"),
    ("ctime", "int64"),
    ("error", "string"),
    ("phase", "string"),
    ("problem", "string"),
    ("nvalue", "string"),
)
#: The columns of a micro-op's row (null on an operation's own row).
MICRO_COLUMNS: tuple[tuple[str, str], ...] = (
    ("n_assign", "int64"),
    ("mode", "string"),
    ("time", "int64"),
    ("kind", "string"),
    ("key", "string"),
    ("offset", "int64"),
    ("value", "int64"),
    ("pos", "int64"),
    ("count", "int64"),
)
#: The rows' columns and types, in the flat table's order: the one spelling of both
#: (checkers/tables.py `flat` selects them in this order; checkers/load.py reads them so).
COLUMNS = OP_COLUMNS + MICRO_COLUMNS
NAMES = tuple(name for name, _ in COLUMNS)


class Kind:
    """The rows' kinds (the `kind` column), here and in the flat table (checkers/tables.py)."""

    OP = "op"  # an operation's own row
    SEND = "send"  # a send micro-op
    READ = "read"  # a record a poll read
    ASSIGN = "assign"  # a key an assign/subscribe holds
    COMMIT = "commit"  # a key a commit names, its offset the next to read
    DELIVER = "deliver"  # a record a share-poll delivered
    ACK = "ack"  # an offset a share-ack acknowledged, its value the type's id (ACK_TYPES)
    START = "start"  # a share-partition's start offset, from share-offsets


#: Micro-op kinds whose rows carry their operation's invoke time (the rules order by it).
TIMED = (Kind.OP, Kind.ASSIGN, Kind.COMMIT, Kind.DELIVER, Kind.ACK)
#: A read's place: its micro-op's index times this, plus its place in the key's list.
READ_STRIDE = 1 << 32
#: The error of an operation that never completed (its type is info).
NO_COMPLETION = "no completion"
#: Rows per Parquet row group (a 1M-operation history has about 3M rows).
BATCH = 1 << 18


class NotColumnar(ValueError):
    """An event outside the shapes the copy takes: the history is read as JSON instead."""


def _must(x: Any, kind: type, what: str) -> Any:
    """`x` when it is a `kind` (a bool is no number here), else NotColumnar."""
    if isinstance(x, bool) or not isinstance(x, kind):
        raise NotColumnar(f"not {what}: {x!r}")
    return x


def _int(x: Any) -> int | None:
    return None if x is None else _must(x, int, "an integer")


def _str(x: Any) -> str:
    return _must(x, str, "a string")


def _opt_str(x: Any) -> str | None:
    return None if x is None else _str(x)


def _list(x: Any) -> list:
    return _must(x, list, "a list")


def _dict(x: Any) -> dict:
    return _must(x, dict, "an object")


def _json(value: Any) -> str:
    # As Spark writes a VARIANT (checkers/tables.py's to_json): compact, its object keys sorted.
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


class _Op:
    __slots__ = ("invoke", "done", "n_assign", "mode")

    def __init__(self, invoke: dict[str, Any], n_assign: int, mode: str | None) -> None:
        self.invoke = invoke
        self.done: dict[str, Any] | None = None
        self.n_assign = n_assign
        self.mode = mode


def _event(e: Any) -> tuple[int, int, str, str, str]:
    """index, time, process (as text), type, f of a well-formed event."""
    e = _dict(e)
    process = e.get("process")
    if isinstance(process, bool) or not isinstance(process, (int, str)):
        raise NotColumnar(f"a process that is neither a number nor a name: {process!r}")
    if e.get("type") not in TYPES:
        raise NotColumnar(f"an event type outside the format: {e.get('type')!r}")
    index, time = _int(e.get("index")), _int(e.get("time"))
    if index is None or time is None:
        raise NotColumnar("an event without an index or a time")
    _opt_str(e.get("error"))
    _opt_str(e.get("phase"))
    return index, time, str(process), e["type"], _str(e.get("f"))


def operations(events: Iterable[Any]) -> Iterator[_Op]:
    """Each operation, its invoke paired with its process's next event, in the order they end
    (an invoke left open ends with the history)."""
    open_: dict[str, _Op] = {}
    assigns: dict[str, tuple[int, str | None]] = {}
    last = -1
    for e in events:
        index, _, process, type_, f = _event(e)
        if index <= last:  # the checker orders a process's events by index, not by line
            raise NotColumnar(f"event {index} after event {last}")
        last = index
        if type_ == INVOKE:
            if process in open_:
                raise NotColumnar(f"process {process} invokes again before its operation completed")
            n, mode = assigns.get(process, (0, None))
            if f in ASSIGNS and process != NEMESIS:
                n, mode = n + 1, f
                assigns[process] = (n, mode)
            open_[process] = _Op(e, n, mode)
            continue
        op = open_.pop(process, None)
        if op is None:
            raise NotColumnar(f"a completion of process {process} with no invoke outstanding")
        if op.invoke["f"] != f:
            raise NotColumnar(f"completed as {f}, invoked as {op.invoke['f']}")
        op.done = e
        yield op
    yield from sorted(open_.values(), key=lambda o: o.invoke["index"])


def rows(op: _Op) -> list[tuple]:
    """The operation's row and its micro-ops' rows, as tuples in COLUMNS' order."""
    inv, done = op.invoke, op.done
    process = str(inv["process"])
    f = inv["f"]
    ivalue = inv.get("value")
    cvalue = done.get("value") if done is not None else None
    type_ = done["type"] if done is not None else INFO
    name = done["index"] if done is not None else inv["index"]
    itime, ctime = inv["time"], done["time"] if done is not None else None
    error = done.get("error") if done is not None else NO_COMPLETION
    nvalue = None
    if process == NEMESIS or f == COMMIT:
        chosen = cvalue if cvalue is not None else ivalue
        nvalue = None if chosen is None else _json(chosen)
    elif f == SHARE_POLL:
        nvalue = None if ivalue is None else _json(ivalue)
    out: list[tuple] = [
        (name, inv["index"], process, f, type_, itime, ctime, error, inv.get("phase"), None, nvalue)
        + (None, None, None, Kind.OP, None, None, None, None, None)
    ]

    def micro(kind: str, key: str, pos: int, offset: int | None, value: int | None, count=None, mtype=None) -> None:
        out.append(
            (name, None, process, f, mtype or type_, itime if kind in TIMED else None, None, None, None, None, None)
            + (op.n_assign, op.mode, ctime, kind, key, offset, value, pos, count)
        )

    client = process != NEMESIS
    assign = client and f in ASSIGNS
    if client and f in (*CLIENT_FS, *SHARE_FS) and f != SHARE_ACK:
        for i, m in enumerate(_micro_ops(cvalue, ivalue)):
            _micro(micro, i, m)
    elif client and f == SHARE_ACK:
        _acks(micro, ivalue, cvalue)
    elif assign:
        held = cvalue if isinstance(cvalue, list) else ivalue if isinstance(ivalue, list) else []
        for k in held:
            micro(Kind.ASSIGN, _str(k), 0, None, None)
    elif client and f == COMMIT:
        committed = cvalue if isinstance(cvalue, dict) else ivalue if isinstance(ivalue, dict) else {}
        for k, v in committed.items():
            micro(Kind.COMMIT, k, 0, _int(v), None)
    return out


def _micro_ops(cvalue: Any, ivalue: Any) -> list:
    """The micro-ops: the completion's when it carries a list of them, else the invoke's."""
    if isinstance(cvalue, list):
        return cvalue
    if isinstance(ivalue, list):
        return ivalue
    return []


def _micro(micro, i: int, m: Any) -> None:
    m = _list(m)
    kind = m[0] if m else None
    if kind == SEND:
        key = _str(m[1])
        x = m[2] if len(m) > 2 else None
        if isinstance(x, list):
            offset = _int(x[0]) if x else None
            value = _int(x[1]) if len(x) > 1 else None
        else:
            offset, value = None, _int(x)
        if value is not None:
            micro(Kind.SEND, key, i, offset, value)
    elif kind in (POLL, SHARE_POLL):
        got = _dict(m[1]) if len(m) > 1 and m[1] is not None else {}
        for key, records in got.items():
            for j, r in enumerate(_list(records) if records is not None else []):
                r = _list(r)
                offset = _int(r[0]) if r else None
                value = _int(r[1]) if len(r) > 1 else None
                if kind == POLL:
                    micro(Kind.READ, key, i * READ_STRIDE + j, offset, value)
                else:
                    micro(Kind.DELIVER, key, i * READ_STRIDE + j, offset, value, _int(r[2]) if len(r) > 2 else None)
    elif kind == SHARE_OFFSETS:
        starts = _dict(m[1]) if len(m) > 1 and m[1] is not None else {}
        for key, start in starts.items():
            micro(Kind.START, key, 0, _int(start), None)
    elif kind is not None and not isinstance(kind, str):
        raise NotColumnar(f"a micro-op named by {kind!r}")


def _acks(micro, ivalue: Any, cvalue: Any) -> None:
    """A share-ack: its invoke's [offset, type] pairs by key, each key's outcome its completion's."""
    acked = _dict(_list(_list(ivalue)[0])[1])
    outcomes: dict = {}
    if isinstance(cvalue, list) and cvalue and isinstance(cvalue[0], list) and len(cvalue[0]) > 1:
        outcomes = _dict(cvalue[0][1])
    for key, pairs in acked.items():
        for j, a in enumerate(_list(pairs) if pairs is not None else []):
            a = _list(a)
            if a[1] not in ACK_TYPES:
                raise NotColumnar(f"an acknowledgement type outside the format: {a[1]!r}")
            micro(Kind.ACK, key, j, _int(a[0]), ACK_TYPES[a[1]], None, _str(outcomes.get(key, INFO)))


def copy_path(history: Path) -> Path:
    """Where a history's copy lives: beside it, named after it (a run directory's is
    history/run_dir.py's HISTORY_COLUMNS)."""
    if history.name == HISTORY:
        return history.with_name(HISTORY_COLUMNS)
    return history.with_name(history.name.rsplit(".", 1)[0] + ".parquet")


def _stamp(history: Path) -> dict[str, str]:
    st = history.stat()
    return {
        "kafka_chaos.version": str(VERSION),
        "history.size": str(st.st_size),
        "history.mtime_ns": str(st.st_mtime_ns),
    }


def stamp_of(path: Path) -> dict[str, str] | None:
    """What a copy at `path` says it was made of; None when there is no file there or it is no
    copy of this program's (another Parquet file, a damaged one, not Parquet at all)."""
    if not path.exists():
        return None
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(path).metadata or {}
    except Exception:  # a damaged copy is no copy
        return None
    stamp = {
        k.decode(): v.decode() for k, v in meta.items() if k.startswith(b"kafka_chaos.") or k.startswith(b"history.")
    }
    return stamp if "kafka_chaos.version" in stamp else None


def current(history: Path) -> Path | None:
    """The history's copy when it is current (made of this very file by this version), else None."""
    path = copy_path(history)
    return path if stamp_of(path) == _stamp(history) else None


def schema():
    import pyarrow as pa

    return pa.schema([pa.field(name, getattr(pa, kind)()) for name, kind in COLUMNS])


def write_beside(history: Path, events: Iterable[Any]) -> Path | None:
    """Write the copy of a complete history file beside it, from `events`, the file's events as
    history/file.py reads them (`write_columnar_copy`); None (and no copy) when an event is
    outside the shapes the copy takes, or the reader refuses the file (a ValueError)."""
    import pyarrow.parquet as pq

    history = Path(history)
    target = copy_path(history)
    stamp = _stamp(history)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        sch = schema().with_metadata(stamp)
        with pq.ParquetWriter(partial, sch, compression="snappy") as writer:
            batch: list[tuple] = []
            wrote = False
            for op in operations(events):
                batch.extend(rows(op))
                if len(batch) >= BATCH:
                    writer.write_table(_table(batch, sch))
                    batch, wrote = [], True
            if not batch and not wrote:  # an empty history: the JSON says so (it proves nothing)
                raise NotColumnar("no events")
            if batch:
                writer.write_table(_table(batch, sch))
        if _stamp(history) != stamp:  # written to meanwhile: this copy is of an older file
            raise NotColumnar("the history changed while its copy was made")
        os.replace(partial, target)
        return target
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):  # NotColumnar is a ValueError
        partial.unlink(missing_ok=True)
        target.unlink(missing_ok=True)
        return None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _table(batch: list[tuple], sch):
    import pyarrow as pa

    columns = list(zip(*batch, strict=True)) if batch else [[] for _ in COLUMNS]
    return pa.table([pa.array(c, type=field.type) for c, field in zip(columns, sch, strict=True)], schema=sch)
