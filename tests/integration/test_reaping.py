"""A run killed with SIGKILL leaves its cluster behind; the next cluster's start reaps it, as
Testcontainers' reaper would, and leaves a live run's alone (harness/cleanup.py `reap`)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from kafka_chaos.harness.cleanup import RUN, owned_by
from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.fsync_disk import FSYNC_TRACKED, check_mountable, mounted_under
from tests.integration.leftovers import docker_lock
from tests.integration.processes import (
    assert_a_live_owner_keeps_its_own,
    cli,
    kill_and_clean,
    library_owner,
    ready_line,
)

pytestmark = pytest.mark.cluster
LAYER = "kafka_chaos.harness.fsync_disk"


def _layers(under: Path) -> dict[int, int]:
    """The fsync-tracked disk layers serving a folder under `under`: pid -> parent pid."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if LAYER.encode() in cmdline and any(str(under).encode() in a for a in cmdline):
            found[int(entry.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    return found


def _host_chains() -> str:
    return subprocess.run(["iptables", "-S"], capture_output=True, text=True, check=False).stdout


def test_a_new_cluster_reaps_what_a_sigkilled_run_left_and_not_a_live_runs(docker_api, tmp_path):
    try:
        check_mountable(FSYNC_TRACKED)
    except UsageError as exc:
        pytest.skip(str(exc))
    # a cluster given no workdir (so in a temporary folder of its own), on fsync-tracked disks
    killed = library_owner(f'KafkaCluster().with_nodes(2).with_disk("{FSYNC_TRACKED}")')
    live = cli(["up", "--nodes", "1", "--workdir", str(tmp_path / "live")])
    said: list[str] = []
    try:
        killed_dir = Path(ready_line(killed))
        assert ready_line(live).startswith("127.0.0.1:")
        (container, *_), _ = owned_by(docker_api, killed.pid)
        run_id = container.labels[RUN]
        # A partition's chain, as nemesis/partition.py makes it: in the node's own network namespace.
        code, out = container.exec_run(["iptables", "-N", "KAFKA-CHAOS"], user="root")
        assert code == 0, out
        assert "KAFKA-CHAOS" not in _host_chains()
        layers = {pid for pid, parent in _layers(killed_dir).items() if parent == killed.pid}
        assert len(layers) == 2
        with docker_lock(exclusive=True):  # no other test's check or start may reap them meanwhile
            os.kill(min(layers), signal.SIGKILL)  # one layer dies with it (a cgroup's kill): its mount stays, dead
            killed.kill()
            killed.wait(timeout=30)
            containers, networks = owned_by(docker_api, killed.pid)
            assert len(containers) == 2 and len(networks) == 1
            deadline = time.monotonic() + 10  # the other layer unmounts itself once orphaned
            while len(mounted_under(killed_dir)) != 1 and time.monotonic() < deadline:
                time.sleep(0.2)
            assert len(mounted_under(killed_dir)) == 1
            cluster = KafkaCluster().with_nodes(1).with_workdir(tmp_path / "new").with_log(said.append)
            try:
                cluster.start()  # its start reaps
            finally:
                cluster.stop()
        assert owned_by(docker_api, killed.pid) == ([], [])
        assert mounted_under(killed_dir) == [] and not killed_dir.exists()
        assert any(run_id in line and "dead FUSE mount" in line for line in said), said
        deadline = time.monotonic() + 15  # the orphaned layer ends once no container holds its disk
        while _layers(killed_dir) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _layers(killed_dir) == {}
        assert "KAFKA-CHAOS" not in _host_chains()
        assert_a_live_owner_keeps_its_own(docker_api, live)  # its owner runs: not a leftover
    finally:
        for proc in (killed, live):
            kill_and_clean(docker_api, proc)
