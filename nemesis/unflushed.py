"""`lose-unflushed`: kill the node, then drop what Kafka had not fsynced, then start it.

Kafka does not fsync by default, and SIGKILL keeps the page cache, so a kill alone loses
nothing. A power loss does: whatever was written after the last flush is gone. Kafka records
per partition how far the log is known flushed, its recovery point, in
`recovery-point-offset-checkpoint`; this fault cuts each partition's log back to it (whole
segments at or after it are removed; the segment holding it is cut at the first batch at or
after it, and its indexes dropped so Kafka rebuilds them). That is the "last replica standing"
loss of KIP-966.

The checkpoint is what Kafka last wrote down (every log.flush.offset.checkpoint.interval.ms,
60 s by default, first after log.initial.task.delay.ms), so the cut is at the recovery point
as of the last checkpoint: what a power loss at that moment is sure to have destroyed, or more.

The metadata log (`__cluster_metadata`) is left alone: KRaft's log flushes on every append,
so it has nothing unflushed to lose.

On a node with an fsync-tracked disk (harness/fsync_disk.py) there is no guess: every file,
checkpoints included, goes back to its content at its last fsync. The completion lists those
files under `reverted` (file, size, durable size), beside the partitions cut under `truncated`.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from kafka_chaos.harness.node import KafkaNode
from kafka_chaos.nemesis.fault import Aim, Fault, Stage
from kafka_chaos.nemesis.kill import kill, start, wait_stopped

T = TypeVar("T")
CHECKPOINT = "recovery-point-offset-checkpoint"
_BATCH_HEADER = struct.Struct(">qi")  # baseOffset, batchLength
_INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")


@dataclass
class Truncation:
    partition: str  # directory name, topic-partition
    recovery_point: int
    bytes_removed: int
    segments_removed: int

    def as_json(self) -> dict:
        return {
            "partition": self.partition,
            "recovery_point": self.recovery_point,
            "bytes_removed": self.bytes_removed,
            "segments_removed": self.segments_removed,
        }


def read_checkpoint(path: Path) -> dict[str, int]:
    """{"topic-partition": offset} from a Kafka offset checkpoint file (version 0)."""
    lines = path.read_text().splitlines()
    if not lines:  # Kafka creates it empty; the first write comes log.initial.task.delay.ms later
        return {}
    if lines[0].strip() != "0":
        raise ValueError(f"{path}: not a version-0 offset checkpoint")
    points = {}
    for line in lines[2:]:
        if line.strip():
            topic, partition, offset = line.rsplit(" ", 2)
            points[f"{topic}-{partition}"] = int(offset)
    return points


def cut_segment(log: Path, recovery_point: int) -> int:
    """Truncate a segment at its first batch with base offset >= recovery_point; bytes removed."""
    data = log.read_bytes()
    pos = 0
    while pos + _BATCH_HEADER.size <= len(data):
        base_offset, length = _BATCH_HEADER.unpack_from(data, pos)
        if base_offset >= recovery_point or length <= 0:
            break
        pos += _BATCH_HEADER.size + length
    pos = min(pos, len(data))
    if pos < len(data):
        with open(log, "r+b") as f:
            f.truncate(pos)
    return len(data) - pos


def truncate_partition(directory: Path, recovery_point: int) -> Truncation:
    removed_bytes, removed_segments = 0, 0
    for log in sorted(directory.glob("*.log")):
        base = int(log.stem)
        if base >= recovery_point:
            removed_bytes += log.stat().st_size
            removed_segments += 1
            log.unlink()
            for suffix in _INDEX_SUFFIXES:
                log.with_suffix(suffix).unlink(missing_ok=True)
        else:
            cut = cut_segment(log, recovery_point)
            if cut:
                removed_bytes += cut
                for suffix in _INDEX_SUFFIXES:
                    log.with_suffix(suffix).unlink(missing_ok=True)
    for snapshot in directory.glob("*.snapshot"):
        if re.fullmatch(r"\d+", snapshot.stem) and int(snapshot.stem) > recovery_point:
            snapshot.unlink()
    return Truncation(directory.name, recovery_point, removed_bytes, removed_segments)


def drop_unflushed(data_dir: Path) -> list[Truncation]:
    """Cut every partition in a (stopped) node's data directory back to its recovery point."""
    checkpoint = data_dir / CHECKPOINT
    points = read_checkpoint(checkpoint) if checkpoint.exists() else {}
    truncations = []
    for directory in sorted(p for p in data_dir.iterdir() if p.is_dir()):
        if directory.name.startswith("__cluster_metadata") or not re.search(r"-\d+$", directory.name):
            continue
        truncations.append(truncate_partition(directory, points.get(directory.name, 0)))
    return truncations


def _power_loss(node: KafkaNode, drop: Callable[[], T]) -> T:
    """Kill the node, drop what its disk loses while it is down, start it; what `drop` returned."""
    kill(node)
    wait_stopped(node)
    dropped = drop()
    start(node)
    return dropped


def lose_unflushed(node: KafkaNode) -> list[Truncation]:
    return _power_loss(node, lambda: drop_unflushed(node.data_dir))


def lose_unsynced(node: KafkaNode) -> list[dict]:
    """The same power loss on an fsync-tracked disk: every file back to its last fsync."""
    return _power_loss(node, node.disk.crash)


@dataclass(frozen=True)
class LoseUnflushed(Fault):
    """lose_unflushed on each target node; the completion says what it cut, per partition (or,
    on an fsync-tracked disk, per file)."""

    def apply(self, stage: Stage, aim: Aim, args: Mapping[str, Any]) -> dict[str, Any]:
        cuts, reverted = [], []
        for node in aim.nodes:
            if node.disk is not None:
                reverted += [{"node": node.alias, **r} for r in lose_unsynced(node)]
            else:
                cuts += [{"node": node.alias, **t.as_json()} for t in lose_unflushed(node) if t.bytes_removed]
            stage.book(self, [node.alias])
        done: dict[str, Any] = {"nodes": [n.alias for n in aim.nodes], "truncated": cuts}
        if any(node.disk is not None for node in aim.nodes):
            done["reverted"] = reverted
        return done
