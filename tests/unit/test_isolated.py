"""A run in a process of its own (runs/isolated.py): what its process says back, and the status
line it draws for the campaign's terminal. A real child process, no cluster: the spec is refused
before any container starts."""

from __future__ import annotations

import io
import os

from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.progress import LiveProgress
from kafka_chaos.runs import isolated
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions
from tests.integration.processes import parent_pid


def test_a_run_that_fails_in_its_process_says_why_and_leaves_no_process(tmp_path):
    spec = RunSpec(ClusterSpec(nodes=1), WorkloadOptions(replication_factor=3, min_insync_replicas=1), store=tmp_path)
    before = _children()  # a worker may hold others already, e.g. an earlier test's Spark JVM
    executed = isolated.execute(spec)
    assert executed.run_dir is None
    assert executed.error is not None and "replication factor 3 needs at least as many brokers (1)" in executed.error
    new = _children() - before
    assert all("forkserver" in _cmdline(p) or "resource_tracker" in _cmdline(p) for p in new), new
    assert list(tmp_path.iterdir()) == []


def test_a_run_draws_the_campaigns_status_line_or_none():
    progress = LiveProgress(stream=io.StringIO(), every=7.0, tty=False, prefix="kafka-chaos: ")
    assert isolated.status_line_of(progress) == isolated.StatusLine(tty=False, every=7.0, prefix="kafka-chaos: ")
    assert isolated.status_line_of(print) is None


def _children() -> set[int]:
    return {int(p) for p in os.listdir("/proc") if p.isdigit() and parent_pid(int(p)) == os.getpid()}


def _cmdline(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
    except OSError:
        return ""
