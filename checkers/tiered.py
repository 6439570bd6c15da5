"""`log-start-moved`: a tiered run's partitions must still begin at offset 0 when retention could
delete nothing.

A tiered run sets retention far above what it writes and proves it (config.json's
`tiered.retention.nothing_deletable`). A log start offset that moved anyway is data deleted that
retention did not ask for (KAFKA-20732's false size breach moves it on the new leader, and every
replica follows), or, when one replica alone moved while its leader and remote storage stay at 0,
a replica that lost track of the partition's start (which releases before 3.9 may do when a
wiped follower rebuilds from remote storage; not seen here yet): the example names where. The
history can show a loss only for the records the final read missed; the starts show the deletion
itself. They are read at the end of the run from every replica and the remote folder
(log-starts.json, harness/tiered.py).

A tiered run whose starts could not all be read (a replica that did not answer; a partition of
the workload's that log-starts.json does not list, or none listed at all: an empty answer is not a
pass, ../shared/anomalies.md "Tiered storage"; a log-starts.json that cannot be read), or whose
retention was not proven unable to delete, is not judged: results.json's `tiered` says why, and the
verdict is "unknown" unless an error was found (a start read above 0 is one, whatever else could
not be read).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kafka_chaos.checkers.anomalies import Fact, is_error
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.history.tiered import LogStarts, TieredReads

NAME = "log-start-moved"
MAX_EXAMPLES = 10


def moved(starts: LogStarts) -> list[dict[str, Any]]:
    """Every start above 0 in log-starts.json: one example per (partition, where), where a broker
    id or "remote" (the lowest offset of the partition's remote segments). A replica that did not
    answer (`log_start` None) moved nothing that is known: it is `unjudged`'s."""
    out = []
    for key, partition in sorted(starts.partitions.items()):
        for broker, replica in sorted(partition.replicas.items()):
            if replica.log_start is not None and replica.log_start > 0:
                out.append({"partition": key, "where": f"broker {broker}", "log_start": replica.log_start})
        lowest = partition.remote.lowest_offset
        if lowest:
            out.append({"partition": key, "where": "remote", "log_start": lowest})
    return out


def unjudged(starts: LogStarts) -> list[str]:
    """The replicas whose start is not known (each `partition broker: why`), and the partitions
    with no replica listed at all."""
    out = []
    for key, partition in sorted(starts.partitions.items()):
        if not partition.replicas:
            out.append(f"{key}: no replica listed")
        for broker, replica in sorted(partition.replicas.items()):
            if replica.log_start is None:
                out.append(f"{key} broker {broker}: {replica.error or 'no answer'}")
    return out


def unlisted(starts: LogStarts, keys: list[str] | None) -> list[str]:
    """Why log-starts.json does not cover the run's partitions: it lists none, or not each of the
    workload's `keys` (None: the run's config.json does not say which)."""
    partitions = starts.partitions
    if not partitions:
        return ["log-starts.json lists no partition (an empty answer is not a pass)"]
    return [f"{key}: not in log-starts.json" for key in keys or [] if key not in partitions]


def _read(path: Path) -> LogStarts | str:
    """log-starts.json (history/tiered.py), or why it could not be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"log-starts.json could not be read: {type(exc).__name__}: {exc}"
    if not isinstance(data, dict):
        return f"log-starts.json is a JSON {type(data).__name__}, not an object"
    try:
        return LogStarts.from_json(data)
    except ValueError as exc:
        return f"log-starts.json is not a listing of log starts: {exc}"


def _reads(files: RunDir) -> dict[str, Any] | None:
    """summary.json's `tiered_reads` (history/tiered.py), as results.json shows it; None when the
    run did not count them or they cannot be read."""
    try:
        reads = json.loads(files.summary.read_text(encoding="utf-8")).get("tiered_reads")
        return None if reads is None else TieredReads.from_json(reads).to_json()
    except (OSError, ValueError, AttributeError):
        return None


def judge(run_dir: Path | None, config: RunConfig) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None]:
    """The anomaly's entry (empty when none), and results.json's `tiered` object: None for a run
    that is not tiered; else `checked` (whether the rule judged every start), `why` when it did
    not, each partition's starts, and `reads`, summary.json's `tiered_reads` as the run counted
    them (for the report). A start found above 0 is an error even when another could not be read."""
    if not config.tiered:
        return {}, None
    retention = config.tiered.get("retention")
    files = RunDir(run_dir) if run_dir is not None else None
    reads = None
    if files is not None and files.summary.exists():
        reads = _reads(files)
    if files is None or not files.log_starts.exists():
        why = "no log-starts.json: the run ended before its final read, or could not record them (its log says why)"
        return {}, {"checked": False, "why": why, "reads": reads}
    starts = _read(files.log_starts)
    if isinstance(starts, str):
        return {}, {"checked": False, "why": starts, "reads": reads}
    summary: dict[str, Any] = {"partitions": starts.to_json()["partitions"], "reads": reads}
    if retention is None:
        return {}, {**summary, "checked": False, "why": "retention not proven unable to delete (config.json)"}
    if not retention.get("nothing_deletable"):
        return {}, {**summary, "checked": False, "why": "retention could delete what the run wrote"}
    found, missing, unknown = moved(starts), unlisted(starts, config.keys), unjudged(starts)
    if (missing or unknown) and not found:
        why = f"not every partition's start was read: {_shown(missing)}" if missing else ""
        if unknown:
            why += ("; " if why else "") + f"not every replica answered: {_shown(unknown)}"
        return {}, {**summary, "checked": False, "why": why}
    summary["checked"] = True
    if not found:
        return {}, summary
    error = is_error(Fact(NAME))
    examples = [ex if error else {**ex, "allowed": True} for ex in found[:MAX_EXAMPLES]]
    return {NAME: {"count": len(found), "errors": len(found) if error else 0, "examples": examples}}, summary


def _shown(reasons: list[str]) -> str:
    return "; ".join(reasons[:3]) + (f"; {len(reasons) - 3} more" if len(reasons) > 3 else "")


def format_reads(reads: TieredReads | dict[str, Any] | None) -> str | None:
    """summary.json's `tiered_reads` (or results.json's `tiered.reads`, the same) in one line, for
    the run's and the check's summaries."""
    if not reads:
        return None
    counted = reads if isinstance(reads, TieredReads) else TieredReads.from_json(reads)
    return (
        f"tiered: the final read got {counted.from_remote} records from remote storage and "
        f"{counted.from_local} from local logs"
    )


def format_status(tiered: dict[str, Any] | None) -> str | None:
    """results.json's `tiered` in one line (None for a run that is not tiered)."""
    if tiered is None:
        return None
    if not tiered.get("checked"):
        return f"log starts: not checked ({tiered.get('why')})"
    n = len(tiered.get("partitions", {}))
    return f"log starts: checked on {n} partitions, every replica and remote storage"
