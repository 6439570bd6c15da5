"""What a scenario's script can do to a live cluster: faults through the nemesis (so each is in
the history), questions about partitions and brokers, and waits with deadlines.

A script is a function `script(s: Script) -> None`; it runs in the nemesis thread beside the
workload. Roles (which broker leads, which follows) are read from the cluster when the script
needs them and then named, never guessed from node numbers. A condition that does not come
true in time raises StepTimeout: the run goes on (the workload and the final read still
happen) and the outcome says where the script stopped, so a scenario that could not set up
its fault is told apart from one whose fault did no harm.
"""

from __future__ import annotations

import random
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka import TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.errors import KafkaError

from kafka_chaos.harness.admin import topic_metadata_from
from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.logdump import has_class
from kafka_chaos.harness.maven import resolve_tools_jars
from kafka_chaos.harness.names import group_id, transactional_id
from kafka_chaos.harness.quorum_state import path_of, read_view
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.faults import BY_NAME, PARTITION
from kafka_chaos.nemesis.targets import TargetError, partition_in, resolve
from kafka_chaos.nemesis.unflushed import CHECKPOINT, read_checkpoint
from kafka_chaos.workloads.options import WorkloadOptions

#: The release's `kafka-features` tool (kafka-tools, 3.5 on).
FEATURE_COMMAND = "org.apache.kafka.tools.FeatureCommand"


def altered(admin: Any, resource: ConfigResource) -> None:
    """IncrementalAlterConfigs of one resource; RuntimeError with Kafka's answer unless it took it
    (kafka-python returns a refusal instead of raising it)."""
    answer = admin.alter_configs([resource], raise_on_unknown=False, incremental=True)
    said = [result for results in answer.values() for result in results.values()]
    if said != ["OK"]:
        raise RuntimeError(f"{resource.name}: {'; '.join(map(str, said)) or 'no answer'}")


class StepTimeout(Exception):
    """A condition the script waited for did not come true in time."""


class PartitionUnknown(KafkaError):
    """The broker asked does not know the partition (yet): a retriable answer."""


class ScriptStopped(Exception):
    """The run is ending (time limit or Ctrl-C): the script must stop."""


@dataclass
class PartitionState:
    leader: int  # -1: none
    isr: list[int]
    replicas: list[int]
    leader_epoch: int | None = None


class Script:
    """The handle a scenario script gets."""

    def __init__(
        self,
        cluster: KafkaCluster,
        nemesis: Nemesis,
        stop: threading.Event,
        topic: str,
        workload: WorkloadOptions | None = None,
    ) -> None:
        self.cluster = cluster
        self.nemesis = nemesis
        self.stop = stop
        self.topic = topic
        #: The run's workload options, the very object its producers read their keys from.
        self.workload = workload
        self.started = time.monotonic()
        self.steps: list[dict[str, Any]] = []  # what the script did, for the run directory
        self.roles: dict[str, str] = {}
        self.observed: list[dict[str, Any]] = []  # the scenario's own findings (Scenario.shows)

    # Bookkeeping.
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def note(self, text: str, **facts: Any) -> None:
        """A line of the scenario's own log (scenario.json in the run directory)."""
        self.steps.append({"at_s": round(self.elapsed(), 3), "step": text, **facts})

    def observe(self, finding: str, **facts: Any) -> None:
        """The scenario's own finding, where no anomaly of the contract applies (a controller that
        never registered): counted by Scenario.shows as the checker's anomalies are, and written
        into scenario.json with the evidence that shows it."""
        self.observed.append({"at_s": round(self.elapsed(), 3), "finding": finding, **facts})
        self.note(f"observed {finding}", **facts)

    def name(self, role: str, alias: str) -> str:
        """Remember which node plays a role (A, B, controller...)."""
        self.roles[role] = alias
        self.note(f"{role} is {alias}")
        return alias

    # Time.
    def sleep(self, seconds: float) -> None:
        if self.stop.wait(seconds):
            raise ScriptStopped

    def wait_for(self, what: str, condition: Callable[[], bool], timeout_s: float, every_s: float = 0.25) -> float:
        """Poll `condition` until true; seconds waited. StepTimeout naming `what` otherwise."""
        started = time.monotonic()
        deadline = started + timeout_s
        while True:
            try:
                if condition():
                    waited = time.monotonic() - started
                    self.note(f"{what} (after {waited:.1f} s)")
                    return waited
            except (KafkaError, OSError, TargetError):
                pass  # mid-fault some brokers do not answer, or the quorum has no leader: ask again
            if time.monotonic() >= deadline:
                self.note(f"gave up waiting: {what}")
                raise StepTimeout(f"{what}: not within {timeout_s:g} s")
            self.sleep(every_s)

    # Faults (recorded in the history by the nemesis).
    def fault(self, fault: str, target: str = "random", **options: Any) -> dict[str, Any]:
        """Apply a fault with its own options (a partition's `shape`); StepTimeout when it failed."""
        value = self.nemesis.run(fault, target, **options)
        kind = BY_NAME[fault]
        self.note(kind.label(target, kind.args(options)), result=value)
        if "error" in value:
            raise StepTimeout(f"{fault} {target} failed: {value['error']}")
        return value

    def cut(self, *pairs: tuple[str, str]) -> dict[str, Any]:
        """Replace the network faults by these cuts (each pair of targets cut both ways)."""
        return self.fault(PARTITION.name, ";".join(f"{a}|{b}" for a, b in pairs), shape="cut")

    def elect_unclean(self, key: str) -> None:
        """An operator's forced unclean election of `topic/partition` (ElectLeaders, UNCLEAN),
        recorded in the history as nemesis operation `elect-unclean`."""
        topic, _, part = key.rpartition("/")

        def elect() -> None:
            with self.cluster.admin(request_timeout_ms=15000) as admin:
                admin.elect_leaders(1, {topic: [int(part)]}, timeout_ms=10000, raise_errors=False)

        result = self.nemesis.act("elect-unclean", {"target": key}, elect)
        self.note(f"forced an unclean election of {key}", result=result)

    def delete_records(self, key: str, before: int, leader: str) -> dict[str, Any]:
        """An operator's DeleteRecords of `topic/partition` below offset `before`, sent to `leader`
        alone (recorded as nemesis operation `delete-records`): the log start offset moves, as
        retention moves it, and the leader-epoch cache is truncated from its start."""
        topic, _, part = key.rpartition("/")
        node = self.cluster.node(leader)

        def delete() -> None:
            with self.cluster.admin(request_timeout_ms=15000, bootstrap_servers=node.bootstrap_server) as admin:
                admin.delete_records(
                    {TopicPartition(topic, int(part)): before}, timeout_ms=10000, partition_leader_id=node.node_id
                )

        result = self.nemesis.act("delete-records", {"target": key, "before": before, "node": leader}, delete)
        self.note(f"deleted the records of {key} below offset {before}, asked of {leader}", result=result)
        if "error" in result:
            raise StepTimeout(f"delete-records {key} failed: {result['error']}")
        return result

    def upgrade_metadata(self, level: str) -> dict[str, Any]:
        """An operator's `kafka-features upgrade --metadata LEVEL`, the release's own tool run on the
        host against a running broker (recorded as nemesis operation `upgrade-metadata`). The
        tool's refusal is an outcome, not a failed step: the result carries it as `error`."""
        version = self.cluster.version
        jars = resolve_tools_jars(version)
        server = next(n.bootstrap_server for n in self.cluster.brokers if n.state() == "running")

        def upgrade() -> None:
            if not has_class(jars, FEATURE_COMMAND.replace(".", "/") + ".class"):
                raise RuntimeError(f"kafka-tools {version} as Maven Central serves it holds no {FEATURE_COMMAND}")
            done = subprocess.run(
                ["java", "-Xmx256m", "-cp", f"{jars}/*", FEATURE_COMMAND, "--bootstrap-server", server]
                + ["upgrade", "--metadata", level],
                capture_output=True,
                text=True,
                timeout=120,
            )
            if done.returncode != 0:
                said = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
                raise RuntimeError(" | ".join(said)[-600:] if said else f"exit {done.returncode}")

        result = self.nemesis.act("upgrade-metadata", {"target": level}, upgrade)
        self.note(f"upgrade metadata.version to {level}", result=result)
        return result

    def add_partitions(self, total: int) -> dict[str, Any]:
        """An operator's CreatePartitions of the run's topic up to `total` partitions (recorded as
        nemesis operation `add-partitions`); once Kafka has them, the workload's producers write to
        every partition, the new ones too (its options' `keys` grows to `total`)."""
        if self.workload is None or total <= self.workload.keys:
            have = self.workload.keys if self.workload is not None else "unknown"
            raise StepTimeout(f"add-partitions to {total}: the run's topic has {have} partitions")

        def create() -> None:
            with self.cluster.admin(request_timeout_ms=15000) as admin:
                admin.create_partitions({self.topic: total}, timeout_ms=10000)

        result = self.nemesis.act("add-partitions", {"target": self.topic, "partitions": total}, create)
        self.note(f"added partitions to {self.topic}: {total} in all", result=result)
        if "error" in result:
            raise StepTimeout(f"add-partitions {self.topic} failed: {result['error']}")
        self.wait_for(
            "every broker knows the new partitions",
            lambda: all(
                self._describe(self.key(total - 1), b.alias) is not None
                for b in self.cluster.brokers
                if b.state() == "running"
            ),
            30,
        )
        self.workload.keys = total
        return result

    def set_group_config(self, configs: dict[str, str]) -> dict[str, Any]:
        """An operator's change of the run's group's own settings (IncrementalAlterConfigs of the
        GROUP resource, KIP-848 and KIP-932's `share.auto.offset.reset`, ...), recorded as nemesis
        operation `set-group-config`."""
        group = group_id(self.cluster.run_id)

        def alter() -> None:
            with self.cluster.admin(request_timeout_ms=15000) as admin:
                altered(admin, ConfigResource(ConfigResourceType.GROUP, group, configs=dict(configs)))

        result = self.nemesis.act("set-group-config", {"target": group, "configs": dict(configs)}, alter)
        self.note(f"set {group}'s {configs}", result=result)
        if "error" in result:
            raise StepTimeout(f"set-group-config {group} failed: {result['error']}")
        return result

    def pause_client(self, seconds: float, within_s: float = 30.0) -> dict[str, Any]:
        """Hold one of the txn workload's processes still for `seconds` inside its next transaction
        with two sends, once the first is acknowledged (recorded as nemesis operation
        `pause-client`); the result names the process and what that transaction came to
        (`txn_outcome`, `txn_error`). StepTimeout when no process took the hold."""
        result = self.nemesis.hold_client(seconds, within_s)
        self.note(f"held a workload process still for {seconds:g} s", result=result)
        if "error" in result:
            raise StepTimeout(f"pause-client failed: {result['error']}")
        return result

    def log_level(self, logger: str, level: str, alias: str) -> None:
        """Set one of a broker's log4j loggers (IncrementalAlterConfigs of its BROKER_LOGGER, as
        `kafka-configs --entity-type broker-loggers` does), to read what Kafka decided in its own
        words. Kafka refuses a logger that does not exist yet (its class not loaded): RuntimeError
        with Kafka's answer, for the script to ask again later. Kafka's behaviour does not change:
        noted in scenario.json, not recorded in the history."""
        node = self.cluster.node(alias)
        with self.cluster.admin(request_timeout_ms=15000, bootstrap_servers=node.bootstrap_server) as admin:
            altered(admin, ConfigResource(ConfigResourceType.BROKER_LOGGER, str(node.node_id), configs={logger: level}))
        self.note(f"logger {logger} at {level} on {alias}")

    def transaction_state(self, process: int) -> dict[str, Any]:
        """What the coordinator holds of a txn workload process's transactional id
        (DescribeTransactions): its state, producer id and epoch."""
        tid = transactional_id(self.cluster.run_id, process)
        with self.cluster.admin(request_timeout_ms=10000) as admin:
            described = admin.describe_transactions([tid])[tid]
        return {
            "transactional_id": tid,
            "state": described.state.name,
            "producer_id": described.producer_id,
            "producer_epoch": described.producer_epoch,
        }

    def server_log(self, alias: str) -> str:
        """A node's server.log as it stands (the broker's or controller's own log4j file)."""
        path = self.cluster.node(alias).logs_dir / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    # Questions.
    def partition(self, key: str, ask: str | None = None, patience_s: float = 10.0) -> PartitionState:
        """Leader, ISR and replicas of `topic/partition`, as broker `ask` sees them (any broker
        when None; name one that is connected to the controller when its view matters).

        A broker that does not know the partition yet (its metadata a moment behind) is asked
        again for up to `patience_s`; then PartitionUnknown, which wait_for takes as "not yet"."""
        deadline = time.monotonic() + patience_s
        while True:
            state = self._describe(key, ask)
            if state is not None:
                return state
            if time.monotonic() >= deadline:
                raise PartitionUnknown(f"{ask or 'the cluster'} does not know partition {key}")
            self.sleep(0.25)

    def _describe(self, key: str, ask: str | None) -> PartitionState | None:
        topic, _, part = key.rpartition("/")
        # Asked of one broker, bootstrapped from it alone: a frozen or cut-off broker that the
        # admin client happened to ask first would hold the answer up for its whole timeout.
        only = {}
        if ask is not None:
            server = self.cluster.node(ask).bootstrap_server
            if server is None:
                raise ValueError(f"{ask} is no broker: it cannot be asked for a partition")  # a bug of the script
            only = {"bootstrap_servers": server}
        with self.cluster.admin(request_timeout_ms=5000, **only) as admin:
            if ask is None:
                described = admin.describe_topics([topic])
            else:
                described = [topic_metadata_from(admin, self.node_id(ask), topic)]
        p = partition_in(described, int(part))
        if p is None:
            return None
        leader = p.get("leader_id")
        return PartitionState(
            leader=leader if leader is not None else -1,
            isr=sorted(p["isr_nodes"]),
            replicas=list(p["replica_nodes"]),
            leader_epoch=p.get("leader_epoch"),
        )

    def pair(self, key: str, leader_role: str, follower_role: str) -> tuple[str, str]:
        """A partition of two replicas, once both are in sync: its leader and its follower, named by
        their roles (A and B, L and F, ...)."""
        self.wait_for(
            "the partition has a leader and both replicas in sync", lambda: len(self.partition(key).isr) == 2, 30
        )
        state = self.partition(key)
        follower = next(r for r in state.replicas if r != state.leader)
        return self.name(leader_role, self.alias(state.leader)), self.name(follower_role, self.alias(follower))

    def alias(self, node_id: int) -> str:
        return self.cluster.node(node_id).alias

    def node_id(self, alias: str) -> int:
        return self.cluster.node(alias).node_id

    def active_controller(self) -> str:
        return resolve(self.cluster, "controller", random.Random())[0].alias

    def controllers_agree(self) -> bool:
        """Every controller's own quorum-state file names one leader (harness/quorum_state.py)."""
        leaders = {read_view(path_of(n))["leader_id"] for n in self.cluster.controllers}
        return len(leaders) == 1 and next(iter(leaders)) not in (None, -1)

    def log_bytes(self, alias: str, key: str) -> int:
        """Bytes in a replica's log segments on disk (the page cache: what the broker wrote)."""
        directory = self._replica_dir(alias, key)
        return sum(f.stat().st_size for f in directory.glob("*.log")) if directory.is_dir() else 0

    def epoch_checkpoint(self, alias: str, key: str) -> str | None:
        """A replica's `leader-epoch-checkpoint` as on its disk (None: no such file)."""
        path = self._replica_dir(alias, key) / "leader-epoch-checkpoint"
        return path.read_text(errors="replace") if path.exists() else None

    def recovery_point(self, alias: str, key: str) -> int:
        """A replica's recovery point as its broker last wrote it down (0: not yet), the offset a
        restart after a crash recovers from."""
        path = self.cluster.node(alias).data_dir / CHECKPOINT
        return read_checkpoint(path).get(self._replica_dir(alias, key).name, 0) if path.exists() else 0

    def segments(self, alias: str, key: str) -> list[int]:
        """The base offsets of a replica's log segments on disk."""
        return sorted(int(p.stem) for p in self._replica_dir(alias, key).glob("*.log"))

    def _replica_dir(self, alias: str, key: str) -> Path:
        topic, _, part = key.rpartition("/")
        return self.cluster.node(alias).data_dir / f"{topic}-{part}"

    def key(self, partition: int = 0) -> str:
        return f"{self.topic}/{partition}"
