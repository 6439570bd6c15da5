"""Each key's leader changes on the history's clock, from the run's control-plane evidence: the
share rules' "a leader change of a key between two times" (../shared/anomalies.md, "Share groups").

The longest node's decoded metadata log is replayed (history/metadata_replay.py); a record that
gives a partition a leader other than the one it had is a change, at the record's time. A log
that holds records the quorum never committed can only add changes, which turn errors into the
reported `share-redelivered-on-failover`, never the reverse.

`of_run` puts them beside the share-partition reloads the brokers logged (reloads.py): both
excuse alike. A bare history (no control-plane evidence) is judged as if nothing changed, and
says so; a run with the evidence whose metadata logs could not be decoded, or whose brokers' logs
could not be read, has them *unknown*, and says why (../shared/anomalies.md, amended 2026-12-06).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_chaos.checkers.share.reloads import reloads as read_reloads
from kafka_chaos.history.metadata_replay import Replay
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.run_dir import RunDir


@dataclass(frozen=True)
class Leaders:
    """What a share check knows of its keys' leader changes and share-partition reloads."""

    #: key -> leader changes (ns, sorted); None: unknown, or no evidence (`bare`)
    changes: dict[str, list[int]] | None = None
    #: key -> share-partition reloads (ns, sorted); None: unknown, or no evidence (`bare`)
    reloads: dict[str, list[int]] | None = None
    #: why the changes or reloads are unknown; None when both are known (or the history is bare)
    unknown: str | None = None
    #: a history without control-plane evidence: judged as if nothing changed
    bare: bool = False

    def merged(self) -> dict[str, list[int]]:
        """key -> every time a leader change or a reload forgot its acquisitions, sorted."""
        out: dict[str, list[int]] = {}
        for times in (self.changes or {}, self.reloads or {}):
            for key, ts in times.items():
                out.setdefault(key, []).extend(ts)
        return {key: sorted(ts) for key, ts in out.items()}

    def describe(self) -> dict[str, Any]:
        """results.json's account of them: per key, times in seconds, or "unknown"."""

        def seconds(times: dict[str, list[int]] | None) -> dict[str, list[float]] | str:
            if times is None:
                return "unknown" if not self.bare else "not read"
            return {key: [round(t / 1e9, 3) for t in ts] for key, ts in sorted(times.items())}

        return {
            "leader_changes": seconds(self.changes),
            "reloads": seconds(self.reloads),
            "unknown_reason": self.unknown,
        }


def of_run(logs: dict[str, Path] | None, run_dir: Path | None, config: RunConfig) -> Leaders:
    """A run's leader changes and reloads; `logs`: its decoded metadata logs (None: the run has
    no control-plane evidence, a bare history)."""
    if logs is None:
        return Leaders(bare=True)
    why = []
    changes = leader_changes(logs)
    if changes is None:
        why.append("leader changes unknown: the run's metadata logs could not be decoded")
    found, no_reloads = None, "the history is not in a run directory"
    if run_dir is not None:
        found, no_reloads = read_reloads(RunDir(run_dir).cluster, config.history_started_unix_ms, config.group_id)
    if found is None:
        why.append(f"share-partition reloads unknown: {no_reloads}")
    return Leaders(changes, found, "; ".join(why) or None)


def leader_changes(logs: dict[str, Path]) -> dict[str, list[int]] | None:
    """key -> the times (ns) its leader changed, sorted; None when no node left a log that could
    be read with at least one record (the changes are unknown)."""
    paths = [p for p in logs.values() if p.is_file() and p.stat().st_size > 0]
    if not paths:
        return None
    replay = Replay(bump_on_shrink=False)
    out: dict[str, list[int]] = {}
    records = 0
    try:
        with max(paths, key=lambda p: p.stat().st_size).open(encoding="utf-8") as lines:
            for line in lines:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue  # a truncated last line
                data = rec.get("data")
                if not isinstance(data, dict) or rec.get("offset") is None:
                    continue
                records += 1
                step = replay.step(int(rec["offset"]), rec.get("type"), data)
                if step.partition is None or step.after is None or rec.get("time") is None:
                    continue
                if step.before is None or step.before.leader != step.after.leader:
                    out.setdefault(step.partition, []).append(int(rec["time"]))
    except OSError:
        return None
    if not records:
        return None
    return {key: sorted(times) for key, times in out.items()}
