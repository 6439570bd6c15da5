"""The names a run gives the Kafka things its clients share, and where Kafka keeps them.

One place, because two sides need them without knowing each other: the workload that uses a
consumer group or a transactional id (workloads/group.py, txn.py) and the nemesis that aims at
the broker coordinating it (nemesis/targets.py `group-coordinator`, `txn-coordinator`).
"""

from __future__ import annotations

import uuid

#: Kafka's defaults for the partitions of __consumer_offsets and __transaction_state.
OFFSETS_PARTITIONS = ("offsets.topic.num.partitions", 50)
TXN_STATE_PARTITIONS = ("transaction.state.log.num.partitions", 50)
SHARE_STATE_PARTITIONS = ("share.coordinator.state.topic.num.partitions", 50)


def new_run_id() -> str:
    """A run's id: its containers' label and the stem of its names (ten hex digits)."""
    return uuid.uuid4().hex[:10]


def group_id(run_id: str) -> str:
    """The consumer group of a run's subscribed consumers (config.json's `group_id`)."""
    return f"kafka-chaos-{run_id}"


def transactional_id(run_id: str, process: int) -> str:
    """The transactional id of a txn workload process."""
    return f"kafka-chaos-{run_id}-{process}"


def java_hash(text: str) -> int:
    """Java's String.hashCode(), which Kafka uses to place a group or a transactional id."""
    h = 0
    units = text.encode("utf-16-be")  # Java hashes UTF-16 code units
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def coordinator_partition(name: str, partitions: int) -> int:
    """The partition of __consumer_offsets (a group id) or __transaction_state (a transactional
    id) whose leader coordinates `name`: Utils.abs(name.hashCode()) % partitions, as Kafka's
    GroupCoordinator and TransactionCoordinator place them (Utils.abs maps MIN_VALUE to 0)."""
    h = java_hash(name)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def share_state_key(group: str, topic_id: bytes, partition: int) -> str:
    """The key a share group's state of one partition is kept under (KIP-932's
    SharePartitionKey, "groupId:topicId:partition"), the topic id as Kafka prints a Uuid: its 16
    bytes in URL-safe base64, unpadded. `coordinator_partition(key, ...)` places it in
    __share_group_state."""
    import base64

    return f"{group}:{base64.urlsafe_b64encode(topic_id).rstrip(b'=').decode()}:{partition}"
