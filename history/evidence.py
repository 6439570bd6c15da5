"""The control-plane evidence's line types: what each line of control-plane/quorum-views.jsonl,
quorum-replication.jsonl and metadata/<alias>.jsonl holds. The harness writes the lines with the
constructors below (harness/view_sampler.py, harness/control_plane.py, harness/metadata_log.py);
the checker reads them with the Spark schemas made from the same field lists
(checkers/control_plane/judge.py). One list per line type, so a field added on one side is on both.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from kafka_chaos.history import faults
from kafka_chaos.history.run_dir import GAP_KINDS, RunDir

#: A replica in a DescribeQuorum answer: a voter or an observer.
MEMBER_FIELDS = (
    ("id", "int"),
    ("log_end_offset", "long"),
    ("last_fetch_unix_ms", "long"),
    ("last_caught_up_unix_ms", "long"),
)
#: quorum-views.jsonl: one node's own quorum-state at `time` (ns on the history's clock); `after`,
#: the nemesis completion that asked for it; `error` when the file could not be read; `written`,
#: when the file was last written (the history's clock; absent from runs before 2026-11-29).
VIEW_FIELDS = (
    ("time", "long"),
    ("node", "string"),
    ("node_id", "int"),
    ("leader_id", "int"),
    ("leader_epoch", "int"),
    ("voted_id", "int"),
    ("after", "long"),
    ("error", "string"),
    ("written", "long"),
)
#: quorum-replication.jsonl: DescribeQuorum asked at `time`: the quorum's leader, its epoch and
#: high watermark, each voter's and observer's replication; `error` when it failed.
SAMPLE_FIELDS = (
    ("time", "long"),
    ("leader_id", "int"),
    ("leader_epoch", "int"),
    ("high_watermark", "long"),
    ("voters", "members"),
    ("observers", "members"),
    ("error", "string"),
)
#: metadata/<alias>.jsonl: one record of the node's `__cluster_metadata`, as DumpLogSegments
#: decoded it (`type`, `version`, `data`; `raw` when it could not), with its batch's epoch and its
#: time on the history's clock. `data` is written as the decoded JSON object, or null where the
#: tool printed none (a 3.x control record, a payload it could not decode): `record_data` reads it;
#: Spark reads it as the object's JSON text (its DDL type is a string, `_ddl`).
RECORD_FIELDS = (
    ("offset", "long"),
    ("batch_epoch", "int"),
    ("create_time_ms", "long"),
    ("time", "long"),
    ("type", "string"),
    ("version", "int"),
    ("data", "object"),
    ("raw", "string"),
)


def _ddl(fields: tuple[tuple[str, str], ...]) -> str:
    """A line type's Spark schema: members as an array of structs, a JSON object as its text."""
    member = "struct<" + ", ".join(f"{n}:{t}" for n, t in MEMBER_FIELDS) + ">"
    spark = {"members": f"array<{member}>", "object": "string"}
    return ", ".join(f"`{n}` {spark.get(t, t)}" for n, t in fields)


#: Spark's schemas of the three line types (the JSON `data` of a record is read as its text).
VIEW_SCHEMA, SAMPLE_SCHEMA, RECORD_SCHEMA = _ddl(VIEW_FIELDS), _ddl(SAMPLE_FIELDS), _ddl(RECORD_FIELDS)


def _line(fields: tuple[tuple[str, str], ...], values: dict[str, Any]) -> str:
    unknown = set(values) - {n for n, _ in fields}
    if unknown:
        raise ValueError(f"not a field of this line: {sorted(unknown)}")
    return json.dumps({n: values.get(n) for n, _ in fields if n in values}, separators=(",", ":")) + "\n"


def member(**values: Any) -> dict[str, Any]:
    """A voter's or observer's replication, as a sample holds it."""
    unknown = set(values) - {n for n, _ in MEMBER_FIELDS}
    if unknown:
        raise ValueError(f"not a field of a member: {sorted(unknown)}")
    return {n: values.get(n) for n, _ in MEMBER_FIELDS}


#: The nemesis effects that end a node's process (history/faults.py MEANINGS): a kill or stop, a
#: restart.
ENDS_PROCESS = faults.ENDS_PROCESS


def left_by_the_dead(written: int | None, taken: int, ends: Iterable[int]) -> bool:
    """Whether a view taken at `taken` shows a quorum-state file written (`written`) before one of
    `ends` (when faults that ended its node's process began) that came before the view: the file a
    dead process left, not yet written again by the one running now. A view that does not say when
    its file was written (a run before it was recorded) is taken as the running process's."""
    return written is not None and any(written < end < taken for end in ends)


def view_line(**values: Any) -> str:
    """A line of quorum-views.jsonl (ValueError for a field it does not have)."""
    return _line(VIEW_FIELDS, values)


def sample_line(**values: Any) -> str:
    """A line of quorum-replication.jsonl (an error sample holds only `time` and `error`)."""
    return _line(SAMPLE_FIELDS, values)


def record_line(**values: Any) -> str:
    """A line of metadata/<alias>.jsonl (ValueError for a `data` that is not an object or None)."""
    data = values.get("data")
    if data is not None and not isinstance(data, dict):
        raise ValueError(f"a record's data is a JSON object or null, not {type(data).__name__}")
    return _line(RECORD_FIELDS, values)


def record_data(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record's `data` as record_line wrote it: its object, {} where it wrote null (or a line of
    another shape: nothing is taken from it)."""
    data = record.get("data")
    return data if isinstance(data, dict) else {}


def read_gaps(run: RunDir) -> dict[str, str]:
    """control-plane/gaps.json's kinds and reasons (the harness writes it, harness/evidence_gaps.py;
    the checker reads it); {} when there is none. A gaps.json that is there but cannot be read (not
    JSON, not an object, a read that failed) is a gap of every kind over the whole run
    (../shared/anomalies.md, "Control plane", amended 2026-12-06): what the sampler said it missed
    is unknown, so nothing it sampled is known whole."""
    path = run.control_plane_gaps
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        return _unreadable(f"{type(exc).__name__}: {exc}")
    if not isinstance(data, dict):
        return _unreadable(f"a JSON {type(data).__name__}, not an object")
    return {str(k): str(v) for k, v in data.items()}


def _unreadable(why: str) -> dict[str, str]:
    said = f"gaps.json could not be read ({' '.join(why.split())}): a gap over the whole run"
    return dict.fromkeys(GAP_KINDS, said)
