"""The KRaft metadata log of a finished run, decoded into a timeline: broker registrations,
fencing, and every leader and ISR change of the workload's partitions.

The controller writes each decision as a record of `__cluster_metadata` (KIP-631): a broker
registers (RegisterBrokerRecord, with its broker epoch), is fenced or unfenced, a partition is
created (PartitionRecord) or changed (PartitionChangeRecord: a new leader, a new ISR). Kafka's
DumpLogSegments with --cluster-metadata-decoder prints them as JSON; this module replays them
in order and writes `metadata-timeline.json` into the run directory, each event with its time
on the history's clock (seconds since the history's time 0, from config.json).

Leader epochs are not in PartitionChangeRecord; they are replayed: +1 on a leader change, and
on an ISR shrink before 3.6.0, whose controllers also bumped the epoch then (KAFKA-15021).
Partition epochs are exact: +1 per change record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kafka_chaos.harness.logdump import DumpRequest, records, segment_files
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.history.run_dir import RunDir, workload_topic

METADATA_DIR = "__cluster_metadata-0"
NO_CHANGE = -2  # PartitionChangeRecord.leader when the leader stays


def metadata_source(run_dir: Path) -> Path | None:
    """The longest metadata log among the nodes (a controller's; a wiped broker has a short one)."""
    candidates = [p / METADATA_DIR for p in RunDir(run_dir).node_data_dirs() if segment_files(p / METADATA_DIR)]
    controllers = [p for p in candidates if p.parts[-3].startswith("controller")] or candidates
    return max(controllers, key=lambda p: sum(f.stat().st_size for f in p.glob("*.log")), default=None)


def replay(entries: list[dict[str, Any]], topic: str, version: KafkaVersion, t0_ms: float) -> list[dict[str, Any]]:
    """Timeline events from decoded metadata records (pure: unit-tested on hand-made records)."""
    topic_ids: dict[str, str] = {}
    partitions: dict[int, dict[str, Any]] = {}
    bump_on_shrink = version < KafkaVersion(3, 6, 0)
    events: list[dict[str, Any]] = []

    def event(entry: dict[str, Any], kind: str, **facts: Any) -> None:
        t = round((entry["create_time_ms"] - t0_ms) / 1000, 3)
        events.append({"t_s": t, "offset": entry["offset"], "kind": kind, **facts})

    for entry in entries:
        try:
            record = json.loads(entry["payload"] or "")
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        kind, data = record.get("type"), record.get("data", {})
        if kind == "REGISTER_BROKER_RECORD":
            event(
                entry,
                "register",
                broker=data.get("brokerId"),
                broker_epoch=data.get("brokerEpoch"),
                fenced=data.get("fenced", True),
                incarnation=data.get("incarnationId"),
            )
        elif kind in ("FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD"):
            event(
                entry,
                "fence" if kind.startswith("FENCE") else "unfence",
                broker=data.get("id"),
                broker_epoch=data.get("epoch"),
            )
        elif kind == "BROKER_REGISTRATION_CHANGE_RECORD":
            fenced = data.get("fenced", 0)  # 1 fenced, -1 unfenced, 0 unchanged
            shutdown = data.get("inControlledShutdown", 0)
            what = (
                "fence"
                if fenced == 1
                else "unfence"
                if fenced == -1
                else "controlled-shutdown"
                if shutdown == 1
                else "change"
            )
            event(entry, what, broker=data.get("brokerId"), broker_epoch=data.get("brokerEpoch"))
        elif kind == "UNREGISTER_BROKER_RECORD":
            event(entry, "unregister", broker=data.get("brokerId"), broker_epoch=data.get("brokerEpoch"))
        elif kind == "TOPIC_RECORD":
            topic_ids[data.get("topicId")] = data.get("name")
        elif kind == "PARTITION_RECORD" and topic_ids.get(data.get("topicId")) == topic:
            state = {
                "leader": data.get("leader", -1),
                "isr": list(data.get("isr", [])),
                "replicas": list(data.get("replicas", [])),
                "leader_epoch": data.get("leaderEpoch", 0),
                "partition_epoch": data.get("partitionEpoch", 0),
                "elr": list(data.get("eligibleLeaderReplicas") or []),
            }
            partitions[data.get("partitionId")] = state
            event(entry, "partition", key=f"{topic}/{data.get('partitionId')}", change="created", **state)
        elif kind == "PARTITION_CHANGE_RECORD" and topic_ids.get(data.get("topicId")) == topic:
            part = data.get("partitionId")
            state = dict(
                partitions.get(part)
                or {"leader": -1, "isr": [], "replicas": [], "leader_epoch": 0, "partition_epoch": 0, "elr": []}
            )
            before = dict(state)
            changes = []
            leader = data.get("leader", NO_CHANGE)
            if leader != NO_CHANGE and leader != state["leader"]:
                state["leader"] = leader
                changes.append("leader")
            if data.get("isr") is not None and sorted(data["isr"]) != sorted(state["isr"]):
                state["isr"] = list(data["isr"])
                changes.append("isr")
            if data.get("replicas") is not None:
                state["replicas"] = list(data["replicas"])
            if data.get("eligibleLeaderReplicas") is not None:
                state["elr"] = list(data["eligibleLeaderReplicas"])
                changes.append("elr")
            shrank = "isr" in changes and set(state["isr"]) < set(before["isr"])
            if "leader" in changes or (bump_on_shrink and shrank):
                state["leader_epoch"] += 1
            state["partition_epoch"] += 1
            partitions[part] = state
            unclean = data.get("leaderRecoveryState") == 1
            event(
                entry,
                "partition",
                key=f"{topic}/{part}",
                change="+".join(changes) or "other",
                previous_leader=before["leader"],
                previous_isr=before["isr"],
                unclean=unclean,
                **state,
            )
    return events


def timeline_request(run_dir: Path) -> DumpRequest | None:
    """The tool's run that decodes the metadata log, on paths inside the run's cluster folder
    (harness/logdump.py); None when no node left one."""
    source = metadata_source(run_dir)
    if source is None:
        return None
    folder = source.relative_to(RunDir(run_dir).cluster)
    return DumpRequest(tuple(f"{folder}/{name}" for name in segment_files(source)), ("--cluster-metadata-decoder",))


def write_timeline(run_dir: Path, version: KafkaVersion, output: str) -> Path:
    """metadata-timeline.json from the tool's output for timeline_request(run_dir)."""
    source = metadata_source(run_dir)
    assert source is not None, "write_timeline() after a timeline_request() that found the log"
    config = json.loads(RunDir(run_dir).config.read_text())
    topic = workload_topic(config)
    t0 = float(config.get("history_started_unix_ms") or 0)
    events = replay(list(records(output)), topic, version, t0)
    path = RunDir(run_dir).timeline
    path.write_text(
        json.dumps({"source": str(source.relative_to(run_dir)), "topic": topic, "events": events}, indent=1) + "\n"
    )
    return path
