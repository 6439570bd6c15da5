"""Admin look-ups the harness needs, working around kafka-python where it falls short."""

from __future__ import annotations

from kafka import KafkaAdminClient


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
