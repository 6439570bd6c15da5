"""KafkaCluster: a real multi-node KRaft cluster of a named Kafka version, as a context manager.

    with KafkaCluster("3.9.1").with_nodes(3).with_config({"min.insync.replicas": "2"}) as cluster:
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")

Ready means every broker registered and unfenced, and a topic with replication factor = broker
count accepted an acks=all write. Every wait has a deadline; a node that exits during start-up
fails the start with its log tail. Containers and the network carry the run's label and are
removed on exit, on exceptions and on Ctrl-C.
"""

from __future__ import annotations

import atexit
import base64
import logging
import shutil
import time
import uuid
from contextlib import closing
from pathlib import Path
from types import TracebackType

from kafka import KafkaAdminClient, KafkaProducer
from kafka.errors import KafkaError, TopicAlreadyExistsError
from testcontainers.core.network import Network

from kafka_chaos.harness.admin import live_brokers
from kafka_chaos.harness.cleanup import labels_for, reap, remove_by_label, temporary_workdir
from kafka_chaos.harness.config import ClusterShape, check_quorum, initial_controllers
from kafka_chaos.harness.engine import docker_client
from kafka_chaos.harness.errors import ClusterStartError
from kafka_chaos.harness.fsync_disk import PAGE_CACHE, check_disk, check_mountable
from kafka_chaos.harness.fuse_layer import check_fuse
from kafka_chaos.harness.images import ensure_image
from kafka_chaos.harness.interrupts import held_interrupts
from kafka_chaos.harness.names import new_run_id
from kafka_chaos.harness.node import KafkaNode
from kafka_chaos.harness.ports import allocate
from kafka_chaos.harness.tiered import Plugin, check_tiered, resolve_plugin
from kafka_chaos.harness.versions import DEFAULT_VERSION, KafkaVersion
from kafka_chaos.history.kraft import DYNAMIC, STATIC
from kafka_chaos.history.reporter import Reporter

logger = logging.getLogger(__name__)
READY_TOPIC = "__kafka_chaos_ready"
#: The nodes' JIT: C1 only. A node's JVM lives seconds to minutes here (started by the dozen,
#: restarted by every kill), and C2's compilations cost more CPU than they pay back in that time
#: (docs/measurements.md, 2026-11-25). Compiled code's speed, not Kafka's behaviour, is what changes;
#: `with_jvm_options("")` gives the JVM's default (tiered C1 + C2).
NODE_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"


def new_cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, URL-safe base64 without padding (22 characters).

    Never one that starts with '-': the storage tool's argument parser would take it for an
    option (Kafka's own Uuid.randomUuid() skips those too).
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not cluster_id.startswith("-"):
            return cluster_id


class KafkaCluster:
    """A KRaft cluster in Docker containers, driven by Testcontainers."""

    def __init__(self, version: str = DEFAULT_VERSION, nodes: int = 3, controllers: int = 0) -> None:
        self.version = KafkaVersion.parse(version)
        self.shape = ClusterShape(brokers=nodes, controllers=controllers)
        self.run_id = new_run_id()
        self.cluster_id = new_cluster_id()
        self.config: dict[str, str] = {}
        self.metadata_version: str | None = None
        self.quorum = STATIC
        self.disk = PAGE_CACHE
        self.tiered = False
        #: A tiered cluster's RemoteStorageManager, once started: which, from what release (harness/tiered.py).
        self.tiered_plugin: Plugin | None = None
        self.heap = "-Xms512m -Xmx512m"
        self.jvm_options = NODE_JVM_OPTIONS
        self.port_base: int | None = None
        self.startup_timeout_s = 120.0
        self.workdir: Path | None = None
        self._own_workdir = False
        self.log: Reporter = logger.info
        self.image: str | None = None
        self.network: Network | None = None
        self.nodes: list[KafkaNode] = []
        self._client = None

    # Fluent options, in the style of testcontainers.
    def with_nodes(self, count: int) -> KafkaCluster:
        """`count` combined broker+controller nodes."""
        self.shape = ClusterShape(brokers=count, controllers=0)
        return self

    def with_dedicated_controllers(self, controllers: int, brokers: int) -> KafkaCluster:
        self.shape = ClusterShape(brokers=brokers, controllers=controllers)
        return self

    def with_config(self, config: dict[str, str] | None = None, **more: str) -> KafkaCluster:
        """Broker configuration overrides (dotted keys in the dict, or underscores as keywords)."""
        self.config.update({str(k): str(v) for k, v in (config or {}).items()})
        self.config.update({k.replace("_", "."): str(v) for k, v in more.items()})
        return self

    def with_metadata_version(self, release_version: str) -> KafkaCluster:
        """Format the storage at this metadata version (`--release-version`, e.g. "3.4-IV0")."""
        self.metadata_version = release_version
        return self

    def with_quorum(self, quorum: str) -> KafkaCluster:
        """ "static" (`controller.quorum.voters`, the default) or "dynamic" (KIP-853, 3.9.0 on: the
        controllers formatted with `--initial-controllers`, every node given the controllers as
        `controller.quorum.bootstrap.servers`)."""
        check_quorum(quorum, str(self.version), self.metadata_version)
        self.quorum = quorum
        return self

    def with_disk(self, disk: str) -> KafkaCluster:
        """The nodes' disks: page-cache (the host's folder, the default) or fsync-tracked (a FUSE layer that
        knows what was fsynced, so `lose-unflushed` drops exactly the rest: harness/fsync_disk.py)."""
        check_disk(disk)
        self.disk = disk
        return self

    def with_tiered(self, tiered: bool = True) -> KafkaCluster:
        """Tiered storage (KIP-405, 3.6.0 on): the brokers share one remote storage, a folder of
        the workdir (`remote_dir`), through Kafka's LocalTieredStorage or ours (harness/tiered.py), each
        broker through a gate of its own that the remote-storage faults close (harness/remote_gate.py)."""
        if tiered:
            check_tiered(self.version)
        self.tiered = tiered
        return self

    @property
    def remote_dir(self) -> Path | None:
        """A tiered cluster's remote storage on the host (kept with the workdir)."""
        return self.workdir / "remote" if self.tiered and self.workdir is not None else None

    def with_heap(self, heap_opts: str) -> KafkaCluster:
        self.heap = heap_opts
        return self

    def with_jvm_options(self, options: str) -> KafkaCluster:
        """Options for every JVM of every node (JAVA_TOOL_OPTIONS); "" for none."""
        self.jvm_options = options
        return self

    def with_port_base(self, port: int) -> KafkaCluster:
        """Publish the brokers on 127.0.0.1:port, port+1, ... instead of free ports."""
        self.port_base = port
        return self

    def with_workdir(self, path: str | Path) -> KafkaCluster:
        """Keep configs, data and logs under this folder (kept after stop)."""
        self.workdir = Path(path).resolve()
        return self

    def with_startup_timeout(self, seconds: float) -> KafkaCluster:
        self.startup_timeout_s = seconds
        return self

    def with_log(self, log: Reporter) -> KafkaCluster:
        self.log = log
        return self

    # Views.
    @property
    def brokers(self) -> list[KafkaNode]:
        return [n for n in self.nodes if n.spec.is_broker]

    @property
    def controllers(self) -> list[KafkaNode]:
        return [n for n in self.nodes if n.spec.is_controller]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(n.bootstrap_server for n in self.brokers if n.bootstrap_server)

    def node(self, alias_or_id: str | int) -> KafkaNode:
        for n in self.nodes:
            if alias_or_id in (n.alias, n.node_id):
                return n
        raise KeyError(f"no node {alias_or_id!r} in this cluster ({', '.join(n.alias for n in self.nodes)})")

    def admin(self, **kwargs) -> KafkaAdminClient:
        """A kafka-python admin client for this cluster (the caller closes it); `bootstrap_servers`
        narrows whom it first asks (default: every broker)."""
        return KafkaAdminClient(
            bootstrap_servers=kwargs.pop("bootstrap_servers", self.bootstrap_servers),
            client_id="kafka-chaos-admin",
            request_timeout_ms=kwargs.pop("request_timeout_ms", 10000),
            **kwargs,
        )

    def create_topic(
        self,
        name: str,
        partitions: int,
        replication_factor: int,
        configs: dict[str, str] | None = None,
        *,
        timeout_ms: int = 10000,
        exist_ok: bool = True,
    ) -> None:
        """Create a topic and wait until every partition has a leader, with a fresh admin client
        (kafka-python's keeps the broker list it bootstrapped with: a broker registered later is
        UnknownBrokerIdError when KRaft names it)."""
        spec = {"num_partitions": partitions, "replication_factor": replication_factor, "configs": configs or {}}
        with closing(self.admin(request_timeout_ms=timeout_ms + 5000)) as admin:
            try:
                admin.create_topics({name: spec}, timeout_ms=timeout_ms, wait_for_metadata=True)
            except TopicAlreadyExistsError:
                if not exist_ok:
                    raise

    def topics(self) -> set[str]:
        """The names of the cluster's topics, internal ones included."""
        with closing(self.admin()) as admin:
            return set(admin.list_topics())

    # Life cycle.
    def start(self) -> KafkaCluster:
        """Start every node and wait until the cluster is ready; on any failure, remove it all."""
        # A script that exits without stop() (or a with-block) still leaves nothing behind.
        atexit.register(self.stop)
        try:
            self._start()
            self.wait_ready(self.startup_timeout_s)
            for node in self.nodes:
                if node.disk is not None:
                    node.disk.sync()  # provisioned: a power loss from now on loses the run's writes only
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        check_mountable(self.disk)  # before any image or container
        if self.tiered:
            check_fuse("--tiered (each broker's gate to the remote storage)")
        client = docker_client()
        self._client = client
        reaped = reap(client)  # first what dead owners left, as Testcontainers' reaper would
        if reaped:
            self.log(reaped.describe())
        self.image = ensure_image(client, self.version, self.log)
        if self.tiered:
            self.tiered_plugin = resolve_plugin(self.version, self.log)
        if self.workdir is None:
            self.workdir = temporary_workdir(self.run_id)
            self._own_workdir = True
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.remote_dir is not None:
            self.remote_dir.mkdir(exist_ok=True)
        specs = self.shape.nodes()
        broker_specs = [s for s in specs if s.is_broker]
        ports = dict(zip((s.node_id for s in broker_specs), allocate(len(broker_specs), self.port_base), strict=True))
        self.network = Network(docker_network_kw={"labels": labels_for(self.run_id), "driver": "bridge"})
        self.network.name = f"kafka-chaos-{self.run_id}"
        with held_interrupts():
            self.network.create()
        voters = None  # the format tool's --initial-controllers: a dynamic quorum's first voters
        if self.quorum == DYNAMIC:
            voters = initial_controllers(specs, {s.node_id: new_cluster_id() for s in specs if s.is_controller})
        for spec in specs:
            port = ports.get(spec.node_id)
            self.nodes.append(
                KafkaNode(
                    self.image,
                    spec,
                    run_id=self.run_id,
                    cluster_id=self.cluster_id,
                    node_dir=self.workdir / spec.alias,
                    peers=specs,
                    config=self.config,
                    network=self.network,
                    external_port=port,
                    heap=self.heap,
                    metadata_version=self.metadata_version,
                    jvm_options=self.jvm_options,
                    quorum=self.quorum,
                    initial_controllers=voters,
                    disk=self.disk,
                    tiered=(self.remote_dir, self.tiered_plugin) if self.tiered_plugin is not None else None,
                )
            )
        quorum = ", a dynamic quorum" if self.quorum != STATIC else ""
        disk = f", {self.disk} disks" if self.disk != PAGE_CACHE else ""
        tiered = f", tiered storage ({self.tiered_plugin})" if self.tiered_plugin is not None else ""
        self.log(f"starting Kafka {self.version}: {self.shape.describe()}{quorum}{disk}{tiered} (run {self.run_id})")
        for node in self.nodes:
            node.start()

    def check_nodes_running(self) -> None:
        """ClusterStartError with the log tail of any node that is no longer running."""
        for node in self.nodes:
            status = node.state()
            if status != "running":
                raise ClusterStartError(
                    f"node {node.alias} is {status} during start-up of Kafka {self.version}; "
                    f"last log lines:\n{node.log_tail(40)}"
                )

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        """Every broker registered and unfenced, then an acks=all write to an RF=all topic."""
        deadline = time.monotonic() + timeout_s
        expected = {n.node_id for n in self.brokers}
        seen: set[int] = set()
        while not expected <= seen:
            self.check_nodes_running()
            try:
                with closing(self.admin(request_timeout_ms=5000, reconnect_backoff_max_ms=500)) as admin:
                    seen = live_brokers(admin)
            except (KafkaError, OSError, ValueError) as exc:
                logger.debug("cluster not answering yet: %r", exc)
            if not expected <= seen:
                self._until(deadline, f"brokers {sorted(expected - seen)} to register and unfence")
        self._ready_write(deadline)

    def _until(self, deadline: float, what: str) -> None:
        if time.monotonic() >= deadline:
            tails = "\n".join(f"--- {n.alias}\n{n.log_tail(15)}" for n in self.nodes)
            raise ClusterStartError(f"Kafka {self.version} not ready: timed out waiting for {what}\n{tails}")
        time.sleep(0.25)

    def _ready_write(self, deadline: float) -> None:
        rf = len(self.brokers)
        while True:
            try:
                self.create_topic(READY_TOPIC, 1, rf, timeout_ms=5000)
                break
            except (KafkaError, OSError) as exc:
                logger.debug("ready topic not created yet: %r", exc)
            self._until(deadline, f"topic {READY_TOPIC} (RF {rf}) to be created")
        producer = KafkaProducer(
            bootstrap_servers=self.bootstrap_servers,
            acks="all",
            enable_idempotence=True,
            request_timeout_ms=5000,
            max_block_ms=5000,
            client_id="kafka-chaos-ready",
        )
        try:
            while True:
                try:
                    producer.send(READY_TOPIC, b"ready").get(timeout=10)
                    break
                except KafkaError as exc:
                    logger.debug("ready write failed: %s", exc)
                self._until(deadline, f"an acks=all write to {READY_TOPIC}")
        finally:
            producer.close(timeout=5)
        try:
            with closing(self.admin(request_timeout_ms=5000)) as admin:
                admin.delete_topics([READY_TOPIC], timeout_ms=5000)
        except (KafkaError, OSError) as exc:
            logger.debug("ready topic not deleted: %s", exc)

    def stop(self) -> None:
        """Remove every container and the network of this run; keep logs when the workdir is the user's."""
        for node in self.nodes:
            if not self._own_workdir:
                node.save_container_log()
        atexit.unregister(self.stop)
        client = self._client
        if client is not None:
            remove_by_label(client, self.run_id)
        for node in self.nodes:
            node.release_mounts()
        self.nodes = []
        self.network = None
        if self._own_workdir and self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
            self._own_workdir = False

    def __enter__(self) -> KafkaCluster:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
