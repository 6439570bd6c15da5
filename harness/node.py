"""One Kafka node as a Testcontainers container: its config, data and logs on host folders.

The data directory lives on the host so that a disk can be wiped (or a log truncated) from
outside while the node is down; the logs live there too so a run keeps them for its report.
Each node has the NET_ADMIN capability for the iptables faults of the nemesis.

Like testcontainers' own containers, the constructor only records settings; `start()` creates
the node's folders, renders its server.properties and starts the container.

The image's entrypoint formats an empty data directory (first start, or a wiped disk). A voter
of a dynamic quorum is formatted here instead, on its first start only, by the format tool in a
throwaway container (`--initial-controllers`: the voters and each one's directory id go into its
log); a wiped one comes back formatted by the entrypoint as a replaced disk is
(`--no-initial-controllers`: a new directory id and no voters), so it rejoins as an observer.

With an fsync-tracked disk (harness/fsync_disk.py) the container's data folder is a FUSE layer
over the data directory, started before the container and unmounted after it is removed. A
tiered cluster's broker sees the shared remote storage through a FUSE gate of its own
(harness/remote_gate.py), started and unmounted the same way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from testcontainers.core.container import DockerContainer
from testcontainers.core.exceptions import ContainerStartException
from testcontainers.core.network import Network

from kafka_chaos.harness.cleanup import labels_for, remove_by_label
from kafka_chaos.harness.config import (
    CONFIG_DIR,
    DATA_DIR,
    EXTERNAL_PORT,
    LOG_DIR,
    NodeSpec,
    render_server_properties,
)
from kafka_chaos.harness.engine import docker_client
from kafka_chaos.harness.fsync_disk import FSYNC_TRACKED, PAGE_CACHE, FsyncDisk
from kafka_chaos.harness.interrupts import held_interrupts
from kafka_chaos.harness.remote_gate import RemoteGate
from kafka_chaos.harness.tiered import CONTROLLER_CONFIG as TIERED_CONTROLLER_CONFIG
from kafka_chaos.harness.tiered import PLUGIN_DIR, REMOTE_DIR, Plugin
from kafka_chaos.harness.tiered import broker_config as tiered_broker_config
from kafka_chaos.history.kraft import DYNAMIC, STATIC


class KafkaNode(DockerContainer):
    """A KRaft node (combined, broker or controller) of one cluster."""

    def __init__(
        self,
        image: str,
        spec: NodeSpec,
        *,
        run_id: str,
        cluster_id: str,
        node_dir: Path,
        peers: Sequence[NodeSpec],
        config: Mapping[str, str],
        network: Network,
        external_port: int | None,
        heap: str,
        metadata_version: str | None = None,
        jvm_options: str = "",
        quorum: str = STATIC,
        initial_controllers: str | None = None,
        disk: str = PAGE_CACHE,
        tiered: tuple[Path, Plugin] | None = None,
    ) -> None:
        """`tiered`: the remote storage's folder and the RemoteStorageManager over it
        (harness/tiered.py), mounted into a broker with the settings that use them (the folder
        through the broker's gate, `gate`)."""
        super().__init__(image)
        self.spec = spec
        self.run_id = run_id
        self.cluster_id = cluster_id
        self.quorum = quorum
        self.initial_controllers = initial_controllers  # a dynamic quorum's voters, for the format tool
        self.node_dir = node_dir
        # With an fsync-tracked disk the container's data folder is the FUSE layer over data_dir.
        self.disk = None
        if disk == FSYNC_TRACKED:
            self.disk = FsyncDisk(self.data_dir, node_dir / "disk", node_dir / "disk.sock")
        self.external_port = external_port
        self.peers = tuple(peers)  # every node of the cluster, this one included
        self.config = dict(config)  # broker settings over the harness's defaults
        #: A tiered cluster's broker reaches the remote storage through its gate (the faults' handle).
        self.gate: RemoteGate | None = None
        if tiered is not None and spec.is_broker:
            remote, plugin = tiered
            brokers = sum(1 for p in peers if p.is_broker)
            self.config = {**tiered_broker_config(brokers, plugin), **self.config}
            self.gate = RemoteGate.of(remote, spec.alias)
            self.with_volume_mapping(str(self.gate.mount), REMOTE_DIR, "rw")
            self.with_volume_mapping(str(plugin.folder), PLUGIN_DIR, "ro")
        elif tiered is not None:
            self.config = {**TIERED_CONTROLLER_CONFIG, **self.config}
        self.metadata_version = metadata_version
        env = {"KAFKA_CLUSTER_ID": cluster_id, "KAFKA_HEAP_OPTS": heap}
        if metadata_version:
            env["KAFKA_RELEASE_VERSION"] = metadata_version
        if quorum == DYNAMIC and spec.is_controller:
            # What the entrypoint's format tool needs after a wipe (its template, the same output, does not).
            env["KAFKA_FORMAT_OPTS"] = "--no-initial-controllers"
        if jvm_options:
            # Read by every JVM of the container, the storage format tool's and the server's,
            # without a new image; the JVM echoes it on stderr ("Picked up JAVA_TOOL_OPTIONS").
            env["JAVA_TOOL_OPTIONS"] = jvm_options
        self.with_envs(**env)
        self.with_name(f"kafka-chaos-{run_id}-{spec.alias}")
        self.with_network(network).with_network_aliases(spec.alias)
        self.with_volume_mapping(str(self.disk.mount if self.disk else self.data_dir), DATA_DIR, "rw")
        self.with_volume_mapping(str(self.logs_dir), LOG_DIR, "rw")
        self.with_volume_mapping(str(node_dir / "config"), CONFIG_DIR, "ro")
        if external_port is not None:
            # Host clients only: published on loopback, never on every interface.
            # (testcontainers' with_bind_ports has no host-address form, so set docker-py's directly.)
            self.ports[f"{EXTERNAL_PORT}/tcp"] = ("127.0.0.1", external_port)
        self.with_kwargs(
            hostname=spec.alias,
            cap_add=["NET_ADMIN"],
            user=f"{os.getuid()}:{os.getgid()}",
            labels=labels_for(run_id, node=spec.alias, role=",".join(spec.roles)),
        )

    def start(self) -> KafkaNode:
        """Create the node's folders, render its server.properties, start its container."""
        for sub in ("data", "logs", "config"):
            (self.node_dir / sub).mkdir(parents=True, exist_ok=True)
        properties = render_server_properties(
            self.spec, list(self.peers), self.external_port, self.config, quorum=self.quorum
        )
        (self.node_dir / "config" / "server.properties").write_text(properties)
        if self.quorum == DYNAMIC and self.spec.is_controller and not (self.data_dir / "meta.properties").exists():
            self._format_initial_voter()
        if self.disk is not None:
            self.disk.start()
        if self.gate is not None:
            self.gate.start()
        with held_interrupts():  # the container exists when a Ctrl-C comes: the clean-up finds it
            super().start()
        return self

    def release_mounts(self) -> None:
        """Unmount an fsync-tracked disk and a remote storage's gate (after the container is gone);
        data_dir and the remote folder keep the data."""
        if self.disk is not None:
            self.disk.stop()
        if self.gate is not None:
            self.gate.stop()

    def _format_initial_voter(self) -> None:
        """Format this controller's storage as one of the dynamic quorum's first voters."""
        if not self.initial_controllers:
            raise ValueError(f"{self.alias}: a dynamic quorum's controller needs the initial controllers")
        client = docker_client()
        label = f"{self.run_id}-format-{self.alias}"
        command = ["-Xmx256m", "-cp", "/opt/kafka/libs/*", "kafka.tools.StorageTool", "format"]
        command += ["-t", self.cluster_id, "-c", f"{CONFIG_DIR}/server.properties"]
        command += ["--initial-controllers", self.initial_controllers]
        if self.metadata_version:
            command += ["--release-version", self.metadata_version]
        try:
            container = client.containers.run(
                self.image,
                command,
                entrypoint="java",
                detach=True,
                network_mode="none",
                user=f"{os.getuid()}:{os.getgid()}",
                volumes={
                    str(self.data_dir): {"bind": DATA_DIR, "mode": "rw"},
                    str(self.node_dir / "config"): {"bind": CONFIG_DIR, "mode": "ro"},
                },
                labels=labels_for(label, role="format"),
            )
            status = container.wait(timeout=120)
            output = container.logs().decode(errors="replace").strip()
        finally:
            remove_by_label(client, label)
        if status.get("StatusCode") != 0:
            raise RuntimeError(f"{self.alias}: formatting as a dynamic voter failed: {output[-500:]}")

    @property
    def alias(self) -> str:
        return self.spec.alias

    @property
    def node_id(self) -> int:
        return self.spec.node_id

    @property
    def data_dir(self) -> Path:
        return self.node_dir / "data"

    @property
    def logs_dir(self) -> Path:
        return self.node_dir / "logs"

    @property
    def bootstrap_server(self) -> str | None:
        return f"127.0.0.1:{self.external_port}" if self.external_port else None

    def state(self) -> str:
        """Docker's view now: running, paused, exited, ... ('absent' before start or after removal).
        Not testcontainers' `status`, which is the last state docker-py fetched."""
        try:
            container = self.get_wrapped_container()
            container.reload()
        except Exception:  # not started (ContainerStartException), or removed underneath us
            return "absent"
        return str(container.status)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return self.get_wrapped_container().logs(tail=lines).decode(errors="replace").rstrip()
        except ContainerStartException:
            return ""
        except Exception:
            log = self.logs_dir / "server.log"
            return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else ""

    def save_container_log(self) -> None:
        """Keep the container's stdout (format output included) beside server.log."""
        try:
            (self.logs_dir / "container.log").write_bytes(self.get_wrapped_container().logs())
        except Exception:
            pass  # never started, or already removed: there is nothing to keep
