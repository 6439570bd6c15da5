"""The KRaft metadata log of a finished run, decoded into a timeline: broker registrations,
fencing, and every leader and ISR change of the workload's partitions.

The controller writes each decision as a record of `__cluster_metadata` (KIP-631): a broker
registers (RegisterBrokerRecord, with its broker epoch), is fenced or unfenced, a partition is
created (PartitionRecord) or changed (PartitionChangeRecord: a new leader, a new ISR). Kafka's
DumpLogSegments with --cluster-metadata-decoder prints them as JSON; this module replays them
in order and writes `metadata-timeline.json` into the run directory, each event with its time
on the history's clock (seconds since the history's time 0, from the run's RunConfig).

Leader and partition epochs are not in PartitionChangeRecord; the one replay of the log,
history/metadata_replay.py (which the checker's record rules use too), keeps them: +1 leader epoch
for any leader named, and on an ISR shrink below metadata version 3.6 (KAFKA-15021), decided by
the run's metadata version as the contract says; +1 partition epoch per change record.

Every node's log is decoded too, as it printed, for the control-plane checker: one JSON line per
record in `control-plane/metadata/<alias>.jsonl` (`node_logs_request`, `write_node_logs`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kafka_chaos.harness.logdump import DumpRequest, decoded, records, segment_files
from kafka_chaos.harness.quorum_state import METADATA_DIR
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.history.evidence import record_line
from kafka_chaos.history.metadata_replay import PARTITION, PARTITION_CHANGE, Replay, bumps_on_isr_shrink
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.run_dir import RunDir


def metadata_source(run_dir: Path) -> Path | None:
    """The longest metadata log among the nodes (a controller's; a wiped broker has a short one)."""
    candidates = [p / METADATA_DIR for p in RunDir(run_dir).node_data_dirs() if segment_files(p / METADATA_DIR)]
    controllers = [p for p in candidates if p.parts[-3].startswith("controller")] or candidates
    return max(controllers, key=lambda p: sum(f.stat().st_size for f in p.glob("*.log")), default=None)


def replay(entries: list[dict[str, Any]], topic: str, bump_on_shrink: bool, t0_ms: float) -> list[dict[str, Any]]:
    """Timeline events from decoded metadata records (pure: unit-tested on hand-made records);
    `bump_on_shrink`: whether an ISR shrink bumps the leader epoch (bumps_on_isr_shrink)."""
    log = Replay(bump_on_shrink)
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
        if kind not in (PARTITION, PARTITION_CHANGE):
            log.step(entry["offset"], kind, data)
            continue
        step = log.step(entry["offset"], kind, data)
        if step.after is None or step.partition is None or step.partition.rsplit("/", 1)[0] != topic:
            continue
        if kind == PARTITION:
            event(entry, "partition", key=step.partition, change="created", **step.after.facts())
            continue
        assert step.before is not None
        event(
            entry,
            "partition",
            key=step.partition,
            change="+".join(step.changes) or "other",
            previous_leader=step.before.leader,
            previous_isr=list(step.before.isr),
            unclean=data.get("leaderRecoveryState") == 1,
            **step.after.facts(),
        )
    return events


def log_request(run_dir: Path, logs: list[Path]) -> DumpRequest | None:
    """The tool's run that decodes these nodes' metadata logs (each one's __cluster_metadata-0
    folder), on paths inside the run's cluster folder (harness/logdump.py); None when they hold
    no segment. One run for several nodes: the tool's JVM starting is most of the time it takes
    on a run's small logs (docs/measurements.md, 2026-11-26)."""
    cluster = RunDir(run_dir).cluster
    files = tuple(f"{log.relative_to(cluster)}/{name}" for log in logs for name in segment_files(log))
    return DumpRequest(files, ("--cluster-metadata-decoder",)) if files else None


def timeline_request(run_dir: Path) -> DumpRequest | None:
    """The tool's run that decodes the longest metadata log; None when no node left one."""
    source = metadata_source(run_dir)
    return None if source is None else log_request(run_dir, [source])


def node_logs_request(run_dir: Path) -> DumpRequest | None:
    """The tool's run that decodes every node's metadata log; None when no node left one."""
    return log_request(run_dir, [data / METADATA_DIR for data in RunDir(run_dir).node_data_dirs()])


def by_node(output: str) -> dict[str, str]:
    """Each node's part of the tool's output: every "Dumping /logs/<alias>/data/<log>/<segment>"
    line starts a segment of that node's."""
    parts: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines(keepends=True):
        if line.startswith("Dumping "):
            current = parts.setdefault(Path(line[len("Dumping ") :].strip()).parts[-4], [])
        if current is not None:
            current.append(line)
    return {alias: "".join(lines) for alias, lines in parts.items()}


def node_log_lines(output: str, t0_ms: float | None) -> list[dict[str, Any]]:
    """One node's records from the tool's output, in offset order, each with its time on the
    history's clock (`time`, ns since the history's time 0; None when the history never began)."""
    lines = []
    for entry in sorted(decoded(output), key=lambda e: e["offset"]):
        offset, batch_epoch, created = entry.pop("offset"), entry.pop("batch_epoch"), entry.pop("create_time_ms")
        time = None if t0_ms is None else round((created - t0_ms) * 1e6)
        head = {"offset": offset, "batch_epoch": batch_epoch, "create_time_ms": created, "time": time}
        lines.append(head | entry)
    return lines


def write_node_logs(run_dir: Path, output: str | None, config: RunConfig) -> list[Path]:
    """control-plane/metadata/<alias>.jsonl for every node, from the tool's output for
    node_logs_request(run_dir) (None: no node left a log); a node that left none (wiped and not
    started again) gets an empty file."""
    run = RunDir(run_dir)
    t0 = config.history_started_unix_ms
    parts = by_node(output or "")
    paths = []
    for data in run.node_data_dirs():
        alias = data.parent.name
        lines = node_log_lines(parts.get(alias, ""), None if t0 is None else float(t0))
        path = run.metadata_log(alias)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(record_line(**line) for line in lines))
        paths.append(path)
    return paths


def write_timeline(run_dir: Path, version: KafkaVersion, output: str, config: RunConfig) -> Path:
    """metadata-timeline.json from the tool's output for timeline_request(run_dir), or for
    node_logs_request(run_dir): the longest log's part of it."""
    source = metadata_source(run_dir)
    assert source is not None, "write_timeline() after a timeline_request() that found the log"
    topic = config.topic
    t0 = float(config.history_started_unix_ms or 0)
    bump = bumps_on_isr_shrink(config.metadata_version, str(version))
    events = replay(list(records(by_node(output).get(source.parent.parent.name, ""))), topic, bump, t0)
    path = RunDir(run_dir).timeline
    path.write_text(
        json.dumps({"source": str(source.relative_to(run_dir)), "topic": topic, "events": events}, indent=1) + "\n"
    )
    return path
