"""Admin look-ups the harness needs, working around kafka-python where it falls short."""

from __future__ import annotations

import time
from typing import Any

import kafka.errors as Errors
from kafka import KafkaAdminClient
from kafka.admin.client import CoordinatorType
from kafka.protocol.admin import DescribeQuorumRequest
from kafka.protocol.consumer.offsets import ListOffsetsRequest
from kafka.protocol.metadata import MetadataRequest
from kafka.protocol.producer.transaction import InitProducerIdRequest

METADATA_TOPIC = "__cluster_metadata"


def live_brokers(admin: KafkaAdminClient) -> set[int]:
    """Ids of the brokers that are registered and unfenced.

    kafka-python 3.0.12's describe_cluster() raises KeyError('endpoint_type') against brokers
    that only speak DescribeCluster v0 (Kafka 3.4 to 3.6): the field exists from v1 on. Then the
    same answer is taken from a Metadata request, which lists only unfenced brokers.
    """
    try:
        brokers = admin.describe_cluster().get("brokers", [])
        return {b["broker_id"] for b in brokers if not b.get("is_fenced", False)}
    except KeyError:
        metadata = admin._manager.run(admin._get_cluster_metadata, [])
        return {b["node_id"] for b in metadata.get("brokers", [])}


def topic_metadata_from(admin: KafkaAdminClient, node_id: int, topic: str) -> dict:
    """The Metadata answer for one topic from one chosen broker.

    describe_topics() asks whichever broker is least loaded, and a broker cut off from the
    controller answers from a stale metadata image; a scenario that waits for the controller's
    decision asks a broker it knows is connected. kafka-python 3.0 (pinned) has no public way to
    pick the broker, so this goes through its connection manager.
    """

    async def ask() -> dict:
        request = MetadataRequest(
            topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
            allow_auto_topic_creation=False,
            include_cluster_authorized_operations=False,
            include_topic_authorized_operations=False,
        )
        response = await admin._manager.send(request, node_id=node_id)
        return response.to_dict()

    metadata = admin._manager.run(ask)
    for t in metadata.get("topics", []):
        if t.get("name") == topic:
            return t
    raise KeyError(topic)


def describe_quorum(admin: KafkaAdminClient) -> dict[str, Any]:
    """DescribeQuorum's answer, as describe_metadata_quorum() gives it (each partition's error a
    string, or None).

    kafka-python 3.0.12's describe_metadata_quorum() raises KeyError('error_message') against
    brokers that speak DescribeQuorum v0 or v1 only (Kafka 3.4 to 3.6): the field exists from v2
    on. Then the same request goes through its connection manager, and the answer is read here.
    """
    try:
        return admin.describe_metadata_quorum()
    except KeyError:
        pass

    async def ask() -> dict[str, Any]:
        topic = DescribeQuorumRequest.TopicData
        request = DescribeQuorumRequest(
            topics=[topic(topic_name=METADATA_TOPIC, partitions=[topic.PartitionData(partition_index=0)])]
        )
        response = await admin._manager.send(request)
        return response.to_dict()

    answer = admin._manager.run(ask)
    if answer.get("error_code"):
        raise RuntimeError(f"DescribeQuorum failed: error code {answer['error_code']}")
    for t in answer.get("topics", []):
        for p in t.get("partitions", []):
            code = p.pop("error_code", 0)
            p["error"] = f"error code {code}" if code else None
    return answer


#: ListOffsets' replica id that lets a follower answer for its own copy (Kafka's
#: ListOffsetsRequest.DEBUGGING_REPLICA_ID); a consumer's -1 is answered by the leader only.
DEBUGGING_REPLICA_ID = -2
#: ListOffsets' timestamps for the log start offset, and (tiered storage, v8+) the local log's start.
EARLIEST, EARLIEST_LOCAL = -2, -4


def log_starts_from(admin: KafkaAdminClient, node_id: int, partitions: dict[str, list[int]]) -> dict[str, Any]:
    """One broker's own replicas' log start offsets: per `topic/partition`, `log_start` (the
    partition's start, remote storage included) and `local_log_start` (its local log's), each None
    when that broker answered with an error (its code in `error`).

    A follower's copy is asked for with the debugging replica id, so the answer is that broker's
    own view, not its leader's; kafka-python 3.0 has no public way to ask one broker, so this goes
    through its connection manager like `topic_metadata_from`."""

    async def ask(timestamp: int) -> dict:
        topic = ListOffsetsRequest.ListOffsetsTopic
        request = ListOffsetsRequest(
            replica_id=DEBUGGING_REPLICA_ID,
            isolation_level=0,
            topics=[
                topic(
                    name=name,
                    partitions=[topic.ListOffsetsPartition(partition_index=p, timestamp=timestamp) for p in ps],
                )
                for name, ps in partitions.items()
            ],
        )
        response = await admin._manager.send(request, node_id=node_id)
        return response.to_dict()

    out: dict[str, dict[str, Any]] = {}
    for field, timestamp in (("log_start", EARLIEST), ("local_log_start", EARLIEST_LOCAL)):
        answer = admin._manager.run(ask, timestamp)
        for t in answer.get("topics", []):
            for p in t.get("partitions", []):
                key = f"{t['name']}/{p['partition_index']}"
                entry = out.setdefault(key, {"log_start": None, "local_log_start": None})
                if p.get("error_code"):
                    entry.setdefault("error", {})[field] = p["error_code"]
                else:
                    entry[field] = p["offset"]
    return out


def raise_producer_epoch(admin: KafkaAdminClient, transactional_id: str, epoch: int, timeout_s: float = 600.0) -> int:
    """InitProducerId for `transactional_id` with no producer id, as Admin.fenceProducers sends
    it, until its producer epoch is `epoch`: the coordinator bumps the epoch by one for each (a
    new id starts at 0). The epoch reached. Each is one write to __transaction_state: some
    thousands a second on one machine. kafka-python 3.0 (pinned) has no fence_producers."""

    async def bump() -> int:
        deadline = time.monotonic() + timeout_s
        coordinator = await admin._find_coordinator_id(transactional_id, key_type=CoordinatorType.TRANSACTION)
        reached = -1
        while reached < epoch:
            request = InitProducerIdRequest(
                transactional_id=transactional_id, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1
            )
            response = await admin._manager.send(request, node_id=coordinator)
            error = Errors.for_code(response.error_code)
            if error is Errors.NoError:
                reached = response.producer_epoch
            elif not error.retriable or time.monotonic() >= deadline:
                raise error(f"InitProducerId for {transactional_id} at epoch {reached}")
            elif error in (Errors.NotCoordinatorError, Errors.CoordinatorNotAvailableError):
                coordinator = await admin._find_coordinator_id(transactional_id, key_type=CoordinatorType.TRANSACTION)
            else:
                await admin._net.sleep(0.05)  # a pending write of the same id, a coordinator loading
        return reached

    return admin._manager.run(bump)
