"""Each key's share-partition reloads on the history's clock, read from the brokers' own logs
(../shared/anomalies.md, "Share groups": a reload counts as a leader change).

A share partition's acquisitions and delivery counts live in one broker's memory; each time a
new instance is loaded from `__share_group_state`, or an old one is dropped, they are forgotten.
Three INFO lines mark such a time (the second and third read in 4.3.1's and 4.4.0's jars):

1. The drop of a fenced share partition: a leader drops it from its cache, without losing the
   leadership, when a share-state write or read fails with FENCED_STATE_EPOCH,
   FENCED_LEADER_EPOCH (surfacing as NOT_LEADER_OR_FOLLOWER), UNKNOWN_TOPIC_OR_PARTITION or
   GROUP_ID_NOT_FOUND, and loads it again on the next fetch
   (`SharePartitionManager.fencedSharePartitionHandler`)::

    [2026-12-05 12:00:01,234] INFO The share partition with key SharePartitionKey{groupId=g,
    topicIdPartition=<topic id>:<topic>-<partition>} is fenced: <why> (kafka.server.share...)

   (some releases' SharePartitionKey prints `groupId='g`, a stray quote; both are read).

2. A leader's first load at a new leader epoch: the share coordinator logs the state read that
   raises the partition's leader epoch (`ShareCoordinatorShard.readStateAndMaybeUpdateLeaderEpoch`;
   the leader's own "Initialized share partition" is DEBUG only). The topic is printed `null`,
   named here by its id from any node's state-change lines ("... chaos-1 with topic id ...")::

    [...] INFO [ShareCoordinator id=1 topic=__share_group_state partition=10] Read with leader
    epoch update call for key SharePartitionKey{groupId=g, topicIdPartition=<topic id>:null-1}
    having new leader epoch 2. (org.apache.kafka.coordinator.share.ShareCoordinatorShard)

3. A deposed leader's drop: the broker that led the partition applies its demotion (its
   `onBecomingFollower` listener drops the share partition, at DEBUG) when it reads the change,
   which a broker cut off from the controller does seconds after the metadata log made it. Until
   then it serves share fetches from its own instance beside the new leader's, so the metadata
   log's time of the change does not bound the two instances::

    [...] INFO [Broker id=3] Follower chaos-1 starts at leader epoch 2 ... Previous leader
    Some(3) and previous leader epoch was 1. (state.change.logger)

The log's times are the broker's wall clock in the container's zone (UTC: the image sets none),
mapped onto the history's clock by config.json's `history_started_unix_ms`. All three are logged
at INFO, which the broker image's log configuration (docker/kafka/log4j2.properties, root at
INFO) keeps.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

_AT = r"^\[(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] \w+ "
#: The drop's line, as log4j's pattern `[%d] %p %m (%c)%n` prints it.
FENCED = re.compile(
    _AT + r"The share partition with key "
    r"SharePartitionKey\{groupId='?(?P<group>.*?), topicIdPartition=[^:]*:(?P<topic>.+)-(?P<partition>\d+)\} is fenced"
)
#: What every form of the line shares: one that has it and does not match FENCED is a reload
#: this module cannot place, and leaves the reloads unknown rather than pass it over.
MARK = "The share partition with key "
#: The share coordinator's line for a leader's first state read at a new leader epoch.
LOADED = re.compile(
    _AT + r"(?:\[[^\]]*\] )?Read with leader epoch update call for key SharePartitionKey\{groupId='?(?P<group>.*?), "
    r"topicIdPartition=(?P<id>[^:]*):(?P<topic>.+)-(?P<partition>\d+)\} having new leader epoch"
)
LOAD_MARK = "Read with leader epoch update call for key "
#: A broker that led the partition applying its demotion (state.change.logger).
DEPOSED = re.compile(
    _AT + r"\[Broker id=(?P<broker>\d+)\] Follower (?P<topic>.+)-(?P<partition>\d+) starts at leader epoch "
    r".* Previous leader Some\((?P<previous>\d+)\)"
)
DEPOSED_MARK = "] Follower "
#: A topic named beside its id in a state-change line ("Creating new partition chaos-1 with topic
#: id <id>.", "Leader chaos-1 with topic id Some(<id>) ...") or in a fenced line.
NAMED = re.compile(r"(?P<topic>[^\s{}:]+)-\d+ with topic id (?:Some\()?(?P<id>[A-Za-z0-9_-]{22})\b")
NAMED_IN_KEY = re.compile(r"topicIdPartition=(?P<id>[A-Za-z0-9_-]{22}):(?P<topic>.+)-\d+\}")
#: A node's server log, under the run directory's cluster/<alias>/ (harness/node.py `logs_dir`).
SERVER_LOG = "logs/server.log"


def reloads(
    cluster: Path, t0_ms: float | None, group: str | None = None
) -> tuple[dict[str, list[int]] | None, str | None]:
    """key -> the times (ns, history's clock) its share partition was dropped or loaded again,
    sorted, from every node's log under the run directory's `cluster` folder; and why they are
    unknown (None when known). `group`: the run's share group (None: any group's). Unknown when
    some node's log could not be read (its reloads would be missing), a line was of a form not
    known, a load's topic id is named by no log, or a reload was logged with no clock to put it on."""
    # A node's folder holds its config/ and logs/ (harness/node.py); a tiered cluster's remote/ is no node.
    nodes = sorted(p for p in cluster.glob("*") if (p / "config").is_dir() or (p / "logs").is_dir())
    if not nodes:
        return None, "the run directory holds no node's log"
    found: list[tuple[str, str, str]] = []  # (topic, or "id:<topic id>" to name, partition, stamp)
    names: dict[str, str] = {}
    for node in nodes:
        try:
            with (node / SERVER_LOG).open(encoding="utf-8", errors="replace") as lines:
                for line in lines:
                    got = _reload(line, group, names)
                    if isinstance(got, str):
                        return None, f"{node.name}'s log {got}: {line.strip()[:200]}"
                    if got is not None:
                        found.append(got)
        except OSError as e:
            return None, f"{node.name}'s log could not be read ({e.strerror or e})"
    out: dict[str, list[int]] = {}
    for topic, partition, at in found:
        if topic.startswith("id:"):
            if topic[3:] not in names:
                return None, f"a share partition of topic id {topic[3:]} was loaded but no log names the topic"
            topic = names[topic[3:]]
        if t0_ms is None:
            return None, "a reload was logged but config.json gives no time 0 to place it on"
        out.setdefault(f"{topic}/{partition}", []).append(_ns(at, t0_ms))
    return {key: sorted(times) for key, times in out.items()}, None


def _reload(line: str, group: str | None, names: dict[str, str]) -> tuple[str, str, str] | str | None:
    """(topic, partition, stamp) of a reload `line` marks (topic "id:<id>" while only its id is
    known); a phrase saying why a line that looks like one could not be read; or None. Topics
    named beside their ids are noted in `names`."""
    if " with topic id " in line or "topicIdPartition=" in line:
        for m in (*NAMED.finditer(line), *NAMED_IN_KEY.finditer(line)):
            if m["topic"] != "null":
                names[m["id"]] = m["topic"]
    if MARK in line and "is fenced" in line:
        m = FENCED.match(line)
        if m is None:
            return "has a reload line of a form not known"
        return None if group is not None and m["group"] != group else (m["topic"], m["partition"], m["at"])
    if LOAD_MARK in line:
        m = LOADED.match(line)
        if m is None:
            return "has a share-partition load line of a form not known"
        if group is not None and m["group"] != group:
            return None
        topic = f"id:{m['id']}" if m["topic"] == "null" else m["topic"]
        return topic, m["partition"], m["at"]
    if DEPOSED_MARK in line and "Previous leader Some(" in line:
        m = DEPOSED.match(line)
        if m is not None and m["broker"] == m["previous"]:
            return m["topic"], m["partition"], m["at"]
    return None


def _ns(at: str, t0_ms: float) -> int:
    wall = datetime.strptime(at, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC)
    return round((wall.timestamp() * 1000 - t0_ms) * 1e6)
