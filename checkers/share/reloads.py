"""Each key's share-partition reloads on the history's clock, read from the brokers' own logs
(../shared/anomalies.md, "Share groups": a reload counts as a leader change).

A leader drops a share partition from its cache, without losing the leadership, when a
share-state write or read fails with FENCED_STATE_EPOCH, FENCED_LEADER_EPOCH (surfacing as
NOT_LEADER_OR_FOLLOWER), UNKNOWN_TOPIC_OR_PARTITION or GROUP_ID_NOT_FOUND, and loads it again
from `__share_group_state` on the next fetch, forgetting its acquisitions and their counts. The
drop is what the broker logs at INFO, in every release from 4.1 to 4.4 alike
(`SharePartitionManager.fencedSharePartitionHandler`, logger
`kafka.server.share.SharePartitionManager`):

    [2026-12-05 12:00:01,234] INFO The share partition with key SharePartitionKey{groupId=g,
    topicIdPartition=<topic id>:<topic>-<partition>} is fenced: <why> (kafka.server.share...)

(some releases' SharePartitionKey prints `groupId='g`, a stray quote; both are read).

The load that follows (`SharePartition.maybeInitialize`: "Initialized share partition: ...")
is logged at DEBUG only, which the broker image's log configuration (docker/kafka/log4j2.properties,
root at INFO) does not keep, so the drop's time stands for the reload's: from then on the old
instance acquires nothing and what it handed out is forgotten. The log's times are the broker's
wall clock in the container's zone (UTC: the image sets none), mapped onto the history's clock
by config.json's `history_started_unix_ms`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

#: The drop's line, as log4j's pattern `[%d] %p %m (%c)%n` prints it.
FENCED = re.compile(
    r"^\[(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] \w+ The share partition with key "
    r"SharePartitionKey\{groupId='?(?P<group>.*?), topicIdPartition=[^:]*:(?P<topic>.+)-(?P<partition>\d+)\} is fenced"
)
#: What every form of the line shares: one that has it and does not match FENCED is a reload
#: this module cannot place, and leaves the reloads unknown rather than pass it over.
MARK = "The share partition with key "
#: A node's server log, under the run directory's cluster/<alias>/ (harness/node.py `logs_dir`).
SERVER_LOG = "logs/server.log"


def reloads(
    cluster: Path, t0_ms: float | None, group: str | None = None
) -> tuple[dict[str, list[int]] | None, str | None]:
    """key -> the times (ns, history's clock) its share partition was dropped to be reloaded,
    sorted, from every node's log under the run directory's `cluster` folder; and why they are
    unknown (None when known). `group`: the run's share group (None: any group's). Unknown when
    some node's log could not be read (its reloads would be missing), or a drop was logged with
    no clock to put it on."""
    # A node's folder holds its config/ and logs/ (harness/node.py); a tiered cluster's remote/ is no node.
    nodes = sorted(p for p in cluster.glob("*") if (p / "config").is_dir() or (p / "logs").is_dir())
    if not nodes:
        return None, "the run directory holds no node's log"
    out: dict[str, list[int]] = {}
    for node in nodes:
        try:
            with (node / SERVER_LOG).open(encoding="utf-8", errors="replace") as lines:
                for line in lines:
                    if MARK not in line or "is fenced" not in line:
                        continue
                    m = FENCED.match(line)
                    if m is None:
                        return None, f"{node.name}'s log has a reload line of a form not known: {line.strip()[:200]}"
                    if group is not None and m["group"] != group:
                        continue
                    if t0_ms is None:
                        return None, "a reload was logged but config.json gives no time 0 to place it on"
                    out.setdefault(f"{m['topic']}/{m['partition']}", []).append(_ns(m["at"], t0_ms))
        except OSError as e:
            return None, f"{node.name}'s log could not be read ({e.strerror or e})"
    return {key: sorted(times) for key, times in out.items()}, None


def _ns(at: str, t0_ms: float) -> int:
    wall = datetime.strptime(at, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC)
    return round((wall.timestamp() * 1000 - t0_ms) * 1e6)
