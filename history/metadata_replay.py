"""The KRaft metadata log replayed: each partition's leader, ISR and epochs, each broker's
registration and fencing, record by record, by the replay rules of ../shared/anomalies.md
("Control plane").

Pure Python over decoded records (DumpLogSegments `--cluster-metadata-decoder`: `type`, `data`),
so that the checker's per-node replay (checkers/control_plane/metadata_rules.py) and the scenarios' metadata
timeline (harness/metadata_log.py) read the log one way: it lives on the history's floor, below
both.

- `PartitionRecord` sets a partition's leader, ISR and both epochs; `RemoveTopicRecord` deletes
  its topic's partitions (the harness deletes its readiness topic before every run).
- `PartitionChangeRecord` adds one to the partition epoch; a `leader` other than -2 (no change)
  sets the leader (-1: none) and adds one to the leader epoch, even when it names the same
  leader. Below metadata version 3.6 an ISR shrink bumps the leader epoch too (KAFKA-15021); the
  controllers of those versions wrote that bump as the record's own `leader` field
  (PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded), so a record bumps it once at most.
- A broker's epoch is the offset of its `RegisterBrokerRecord`. It is fenced from its
  registration when the record says so (`fenced`, true when absent: older metadata versions
  unfence with `UnfenceBrokerRecord`), by `FenceBrokerRecord` and by
  `BrokerRegistrationChangeRecord.fenced` 1; unfenced by `UnfenceBrokerRecord` or `fenced` -1;
  in controlled shutdown by `inControlledShutdown` 1 (until it registers again).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from kafka_chaos.history.versions import feature_key

NO_CHANGE = -2  # PartitionChangeRecord.leader when the leader stays
NO_LEADER = -1

REGISTER = "REGISTER_BROKER_RECORD"
UNREGISTER = "UNREGISTER_BROKER_RECORD"
FENCE = "FENCE_BROKER_RECORD"
UNFENCE = "UNFENCE_BROKER_RECORD"
REGISTRATION_CHANGE = "BROKER_REGISTRATION_CHANGE_RECORD"
TOPIC = "TOPIC_RECORD"
REMOVE_TOPIC = "REMOVE_TOPIC_RECORD"
PARTITION = "PARTITION_RECORD"
PARTITION_CHANGE = "PARTITION_CHANGE_RECORD"
BROKER_TYPES = (REGISTER, UNREGISTER, FENCE, UNFENCE, REGISTRATION_CHANGE)


def bumps_on_isr_shrink(metadata_version: str | None, kafka_version: str | None) -> bool:
    """Whether an ISR shrink bumps the leader epoch: metadata versions below 3.6 (KAFKA-15021). A
    run that set none runs its release's newest metadata version, so the release decides."""
    given = metadata_version or kafka_version
    return given is not None and feature_key(given) < (3, 6)


@dataclass(frozen=True)
class PartitionState:
    leader: int = NO_LEADER
    isr: tuple[int, ...] = ()
    replicas: tuple[int, ...] = ()
    leader_epoch: int = 0
    partition_epoch: int = 0
    elr: tuple[int, ...] = ()

    def facts(self) -> dict[str, Any]:
        return {
            "leader": self.leader,
            "isr": list(self.isr),
            "replicas": list(self.replicas),
            "leader_epoch": self.leader_epoch,
            "partition_epoch": self.partition_epoch,
            "elr": list(self.elr),
        }


def created(data: dict[str, Any]) -> PartitionState:
    """A partition as a PartitionRecord sets it."""
    return PartitionState(
        leader=int(data.get("leader", NO_LEADER)),
        isr=tuple(data.get("isr") or ()),
        replicas=tuple(data.get("replicas") or ()),
        leader_epoch=int(data.get("leaderEpoch", 0)),
        partition_epoch=int(data.get("partitionEpoch", 0)),
        elr=tuple(data.get("eligibleLeaderReplicas") or ()),
    )


def changed(state: PartitionState, data: dict[str, Any], bump_on_shrink: bool) -> tuple[PartitionState, list[str]]:
    """A partition after a PartitionChangeRecord, and what changed ("leader", "isr", "elr")."""
    changes: list[str] = []
    leader = int(data.get("leader", NO_CHANGE))
    isr = state.isr
    if data.get("isr") is not None:
        isr = tuple(data["isr"])
        if sorted(isr) != sorted(state.isr):
            changes.append("isr")
    if leader != NO_CHANGE and leader != state.leader:
        changes.insert(0, "leader")
    elr = state.elr
    if data.get("eligibleLeaderReplicas") is not None:
        elr = tuple(data["eligibleLeaderReplicas"])
        changes.append("elr")
    shrank = "isr" in changes and not set(state.isr) <= set(isr)
    bump = leader != NO_CHANGE or (bump_on_shrink and shrank)
    after = replace(
        state,
        leader=leader if leader != NO_CHANGE else state.leader,
        isr=isr,
        replicas=tuple(data["replicas"]) if data.get("replicas") is not None else state.replicas,
        leader_epoch=state.leader_epoch + (1 if bump else 0),
        partition_epoch=state.partition_epoch + 1,
        elr=elr,
    )
    return after, changes


@dataclass
class Broker:
    epoch: int  # the offset of its RegisterBrokerRecord
    fenced: bool = True
    shutdown: bool = False
    registered: bool = True

    @property
    def active(self) -> bool:
        """May lead and join an ISR (KIP-631, KIP-841): registered, unfenced, not shutting down."""
        return self.registered and not self.fenced and not self.shutdown


def broker_after(brokers: dict[int, Broker], kind: str, data: dict[str, Any], offset: int) -> int | None:
    """Apply a broker record to `brokers`; the broker it concerns (None for another record)."""
    if kind == REGISTER:
        b = int(data.get("brokerId", -1))
        brokers[b] = Broker(
            epoch=offset, fenced=bool(data.get("fenced", True)), shutdown=bool(data.get("inControlledShutdown", False))
        )
        return b
    b = int(data.get("brokerId", data.get("id", -1)))
    known = brokers.setdefault(b, Broker(epoch=-1))
    if kind == UNREGISTER:
        known.registered = False
    elif kind == FENCE:
        known.fenced = True
    elif kind == UNFENCE:
        known.fenced = False
    elif kind == REGISTRATION_CHANGE:
        fenced = int(data.get("fenced", 0) or 0)
        if fenced:
            known.fenced = fenced == 1
        if int(data.get("inControlledShutdown", 0) or 0) == 1:
            known.shutdown = True
    else:
        return None
    return b


@dataclass
class Replay:
    """One node's log replayed in offset order: `step` returns what each record did."""

    bump_on_shrink: bool
    brokers: dict[int, Broker] = field(default_factory=dict)
    topics: dict[str, str] = field(default_factory=dict)  # topic id -> name
    partitions: dict[tuple[str, int], PartitionState] = field(default_factory=dict)

    def name(self, topic_id: str, partition: int) -> str:
        return f"{self.topics.get(topic_id, topic_id)}/{partition}"

    def step(self, offset: int, kind: str | None, data: dict[str, Any]) -> Step:
        """Apply one record; its partition's state before and after, the broker it concerns."""
        if kind in BROKER_TYPES:
            return Step(broker=broker_after(self.brokers, kind, data, offset))
        if kind == TOPIC:
            self.topics[str(data.get("topicId"))] = str(data.get("name"))
            return Step()
        if kind == REMOVE_TOPIC:
            topic = str(data.get("topicId"))
            gone = sorted(pid for pid in self.partitions if pid[0] == topic)
            for pid in gone:
                del self.partitions[pid]
            return Step(removed=[self.name(*pid) for pid in gone])
        if kind not in (PARTITION, PARTITION_CHANGE):
            return Step()
        pid = (str(data.get("topicId")), int(data.get("partitionId", -1)))
        before = self.partitions.get(pid)
        if kind == PARTITION:
            after, changes = created(data), ["created"]
        elif before is None:  # a change of a partition whose creation this log does not hold
            return Step(partition=self.name(*pid))
        else:
            after, changes = changed(before, data, self.bump_on_shrink)
        self.partitions[pid] = after
        led = kind == PARTITION or int(data.get("leader", NO_CHANGE)) != NO_CHANGE
        return Step(partition=self.name(*pid), before=before, after=after, changes=changes, led=led)


@dataclass(frozen=True)
class Step:
    broker: int | None = None
    partition: str | None = None
    before: PartitionState | None = None
    after: PartitionState | None = None
    changes: list[str] = field(default_factory=list)
    led: bool = False  # the record names a leader (a PartitionRecord, or a change's leader other than -2)
    removed: list[str] = field(default_factory=list)  # the partitions a RemoveTopicRecord deleted
