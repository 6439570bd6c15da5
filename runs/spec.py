"""A run described once: what the CLI's `run`, the pytest plugin's `chaos_run` and a scenario
each build, validated in one place before any container starts (runs/run.py runs it).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.nemesis.faults import check_tiered
from kafka_chaos.nemesis.plan import NemesisPlan
from kafka_chaos.scenarios.base import Scenario
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.registry import check_workload


@dataclass
class RunSpec:
    """Everything a run needs: the cluster, the workload, the nemesis, the check, and where the run
    goes. The CLI, the pytest plugin, scenarios, `reproduce` and `bisect` each fill one in and
    hand it to `run()` (runs/run.py)."""

    cluster: ClusterSpec
    workload: WorkloadOptions = field(default_factory=WorkloadOptions)
    nemesis: NemesisPlan | None = None
    #: The seed of every random choice (the workload's pacing, the nemesis's schedule and targets);
    #: None: drawn when the run starts (`with_seed`) and recorded in config.json, so that any run
    #: can be replayed from it.
    seed: int | None = None
    #: The run's directory is store/<name>/<time>/; default: the workload's name.
    name: str | None = None
    store: Path = Path("store")
    #: Host ports from here on (harness/cluster.py); None: any free ones.
    port_base: int | None = None
    #: Read the metadata timeline and the replicas' logs into the run directory afterwards (scenarios).
    evidence: bool = False
    #: Sample the quorum while the history is open and decode every node's metadata log afterwards
    #: (control-plane/, harness/control_plane.py). A run on a shared cluster takes none: `run`
    #: turns it off there, as the nodes' data is not the run's own.
    control_plane: bool = True
    #: Check the history when the workload ends (results.json; report.html unless `report` is off).
    check: bool = False
    #: The check's Spark master; None: local mode, embedded (checkers/spark.py).
    spark_master: str | None = None
    report: bool = True
    #: The library scenario this run plays: what it expects of the version, and which anomalies
    #: show its bug (the version table's terms: RunResult.table_row).
    scenario: Scenario | None = None

    @property
    def run_name(self) -> str:
        return self.name or self.workload.workload

    def with_seed(self) -> RunSpec:
        """The same run with a concrete seed (its own, or one drawn now) and what that seed draws
        before the run: an overlapping mix's timeline (NemesisPlan.drawn), which config.json
        records, so that the same seed and options play the same timeline again."""
        spec = self if self.seed is not None else replace(self, seed=random.randrange(2**32))
        if spec.nemesis is None:
            return spec
        w = spec.workload
        plan = spec.nemesis.drawn(
            spec.seed,
            key=w.key_names[0],
            workload=w.workload,
            grouped=w.grouped,
            shares=w.shares,
            duration=w.time_limit,
            nodes=len(spec.build_cluster().shape.nodes()),
        )
        return spec if plan is spec.nemesis else replace(spec, nemesis=plan)

    def with_broker_config(self, config: dict[str, str] | None) -> RunSpec:
        """The same run with broker settings on top of the cluster spec's."""
        return replace(self, cluster=replace(self.cluster, config={**self.cluster.config, **(config or {})}))

    def validate(self) -> RunSpec:
        """UsageError naming the first problem: bad workload options, a workload the cluster cannot
        hold, a client version the cluster's cannot stand in for."""
        check_workload(self.workload)
        brokers = self.cluster.brokers if self.cluster.controllers else self.cluster.nodes
        if self.workload.replication_factor > brokers:
            raise UsageError(
                f"replication factor {self.workload.replication_factor} needs at least as many brokers ({brokers})"
            )
        if self.workload.min_insync_replicas > self.workload.replication_factor:
            raise UsageError("min.insync.replicas cannot exceed the replication factor")
        version = KafkaVersion.parse(self.cluster.version)
        if self.workload.client == "java":
            self.workload.java_version(version)
        self.workload.check_group_protocol(version)
        self.workload.check_share(version)
        since = self.scenario.since if self.scenario is not None else None
        if since is not None and version < KafkaVersion.parse(since):
            raise UsageError(f"scenario {self.scenario.name} needs Kafka {since} or later, not {version}")
        if self.nemesis is not None:
            self.nemesis.check_targets(self.build_cluster().shape.nodes())
            check_tiered(self.nemesis.fault_names(), self.cluster.tiered)
        return self

    def build_cluster(self) -> KafkaCluster:
        """The cluster, not started: the spec's, with the workload's and the nemesis plan's broker
        defaults under the user's settings."""
        cluster = self.cluster.build()
        defaults = {**self.workload.broker_defaults(), **(self.nemesis.broker_defaults() if self.nemesis else {})}
        for key, value in defaults.items():
            cluster.config.setdefault(key, value)
        if self.port_base:
            cluster.with_port_base(self.port_base)
        return cluster

    def check_shared(self, cluster: KafkaCluster) -> None:
        """UsageError unless this run can use `cluster`, started by its caller for several runs:
        the cluster this spec would build (version, shape, broker config, metadata version), no
        faults (a kill, a wipe or a lost page cache changes the cluster the next run finds),
        no evidence (it reads the nodes' data, which a shared cluster keeps in its own folder), and
        a topic of its own. Its control-plane evidence is not an error but is not taken either
        (`run` turns it off: the default is on, and the nodes' data is not the run's own)."""
        if self.nemesis is not None:
            raise UsageError("a run on a shared cluster cannot have faults: they would change it for the next run")
        if self.evidence:
            raise UsageError("a run on a shared cluster cannot read evidence: the nodes' data is not the run's own")
        if not cluster.nodes:
            raise UsageError("the shared cluster is not started")
        wanted = self.build_cluster()
        for what, asked, there in (
            ("Kafka", str(wanted.version), str(cluster.version)),
            ("the shape", wanted.shape, cluster.shape),
            ("the broker config", wanted.config, cluster.config),
            ("the metadata version", wanted.metadata_version, cluster.metadata_version),
            ("the quorum", wanted.quorum, cluster.quorum),
            ("the disk", wanted.disk, cluster.disk),
            ("tiered storage", wanted.tiered, cluster.tiered),
        ):
            if asked != there:
                raise UsageError(f"the run asks for {what} {asked}, the shared cluster has {there}")
        if self.workload.topic in cluster.topics():
            raise UsageError(f"topic {self.workload.topic!r} is on the shared cluster already: each run needs its own")

    def describe(self, cluster: KafkaCluster) -> dict[str, Any]:
        """config.json's description of the run (the run adds what it learned: runs/run.py)."""
        return {
            "name": self.run_name,
            "kafka_version": str(cluster.version),
            "shape": asdict(cluster.shape),
            "broker_config": cluster.config,
            "metadata_version": cluster.metadata_version,
            "quorum": cluster.quorum,
            "disk": cluster.disk,
            "workload": self.workload.to_dict(),
            "nemesis": self.nemesis.describe() if self.nemesis else {},
            "seed": self.seed,
            "control_plane": self.control_plane,
        } | ({"tiered": _tiered(cluster)} if cluster.tiered else {})


def _tiered(cluster: KafkaCluster) -> dict[str, Any]:
    """config.json's `tiered`: which remote storage, from what release; both None when the
    cluster did not get as far as choosing it (harness/tiered.py resolve_plugin)."""
    plugin = cluster.tiered_plugin
    return plugin.describe() if plugin is not None else {"storage": None, "release": None}
