"""Each key's leader changes on the history's clock, from the run's control-plane evidence: the
share rules' "a leader change of a key between two times" (../shared/anomalies.md, "Share groups").

The longest node's decoded metadata log is replayed (history/metadata_replay.py); a record that
gives a partition a leader other than the one it had is a change, at the record's time. A log
that holds records the quorum never committed can only add changes, which turn errors into the
reported `share-redelivered-on-failover`, never the reverse.
"""

from __future__ import annotations

import json
from pathlib import Path

from kafka_chaos.history.metadata_replay import Replay


def leader_changes(logs: dict[str, Path]) -> dict[str, list[int]]:
    """key -> the times (ns) its leader changed, sorted; {} when no node left a log."""
    paths = [p for p in logs.values() if p.is_file()]
    if not paths:
        return {}
    replay = Replay(bump_on_shrink=False)
    out: dict[str, list[int]] = {}
    with max(paths, key=lambda p: p.stat().st_size).open(encoding="utf-8") as lines:
        for line in lines:
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a truncated last line
            data = rec.get("data")
            if not isinstance(data, dict) or rec.get("offset") is None:
                continue
            step = replay.step(int(rec["offset"]), rec.get("type"), data)
            if step.partition is None or step.after is None or rec.get("time") is None:
                continue
            if step.before is None or step.before.leader != step.after.leader:
                out.setdefault(step.partition, []).append(int(rec["time"]))
    return {key: sorted(times) for key, times in out.items()}
