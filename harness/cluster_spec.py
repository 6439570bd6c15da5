"""A cluster described before it exists: what a chaos test, a scenario or the CLI asks for.

Kept apart from the runs that use it so that the cluster layer owns it: a scenario's run and a
chaos run both build their cluster from one, and neither has to import the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.config import check_quorum
from kafka_chaos.harness.fsync_disk import PAGE_CACHE, check_disk
from kafka_chaos.harness.tiered import check_tiered
from kafka_chaos.harness.versions import DEFAULT_VERSION, KafkaVersion
from kafka_chaos.history.kraft import STATIC


@dataclass
class ClusterSpec:
    """The cluster a chaos test runs on: version, shape, broker config, metadata version."""

    version: str = DEFAULT_VERSION
    nodes: int = 3
    controllers: int = 0  # dedicated controllers; with them, `brokers` brokers
    brokers: int = 3
    config: dict[str, str] = field(default_factory=dict)
    metadata_version: str | None = None
    quorum: str = STATIC  # or "dynamic" (KIP-853)
    disk: str = PAGE_CACHE  # or "fsync-tracked" (harness/fsync_disk.py)
    tiered: bool = False  # tiered storage, one remote storage for every broker (harness/tiered.py)

    def __post_init__(self) -> None:
        version = KafkaVersion.parse(self.version)  # a malformed version is a UsageError here, not in a container
        check_quorum(self.quorum, self.version, self.metadata_version)
        check_disk(self.disk)
        if self.tiered:
            check_tiered(version)

    def build(self, extra_config: dict[str, str] | None = None) -> KafkaCluster:
        cluster = KafkaCluster(self.version)
        if self.controllers:
            cluster.with_dedicated_controllers(self.controllers, self.brokers)
        else:
            cluster.with_nodes(self.nodes)
        cluster.with_config({**self.config, **(extra_config or {})})
        if self.metadata_version:
            cluster.with_metadata_version(self.metadata_version)
        return cluster.with_quorum(self.quorum).with_disk(self.disk).with_tiered(self.tiered)

    def describe(self) -> str:
        shape = (
            f"{self.controllers} controllers + {self.brokers} brokers" if self.controllers else f"{self.nodes} nodes"
        )
        return (
            f"Kafka {self.version}, {shape}"
            + (f", metadata {self.metadata_version}" if self.metadata_version else "")
            + (f", a {self.quorum} quorum" if self.quorum != STATIC else "")
            + (f", {self.disk} disks" if self.disk != PAGE_CACHE else "")
            + (", tiered storage" if self.tiered else "")
        )
