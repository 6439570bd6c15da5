"""The control plane's evidence, sampled while a run's history is open: each node's own quorum
view and the quorum's replication state, on the history's clock, in the run directory's
control-plane/ folder (history/run_dir.py names the files; the format is the checker's input).

- quorum-views.jsonl: each node's `__cluster_metadata-0/quorum-state`, read from its data folder
  on the host every VIEW_PERIOD_S and right after every nemesis operation completes (the history
  tells the sampler: `saw`, a HistoryWriter tap), by a process of its own (harness/view_sampler.py).
  The file is what the node itself holds: the leader and epoch it knows, and its vote; KRaft
  rewrites it on every change of its state.
- quorum-replication.jsonl: DescribeQuorum every QUORUM_PERIOD_S, through one admin client kept
  open (the active controller's view: voters' and observers' log end offsets, fetch times;
  harness/admin.py reads it on Kafka 3.4 to 3.6 too).
- nodes.json: every node's id and roles, the voters, and the timing settings the rules use.

The views have their process, so that neither a DescribeQuorum waiting on a faulted cluster nor
the workload's threads delay a view. Nothing here may fail or slow a run: a read that fails is a line with `error`, and
each round costs a few small file reads.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TextIO

from kafka_chaos.harness import quorum_state
from kafka_chaos.harness.admin import describe_quorum
from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.config import NodeSpec
from kafka_chaos.history.events import INVOKE, NEMESIS
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.history.kraft import KAFKA_TIMING_DEFAULTS, STATIC
from kafka_chaos.history.reporter import Reporter, silent
from kafka_chaos.history.run_dir import RunDir

#: How often each node's quorum view is read; the contract asks for at least every 500 ms, and
#: half of it keeps that under a loaded machine's scheduling delays.
VIEW_PERIOD_S = 0.25
#: How often the quorum is described ("about once a second").
QUORUM_PERIOD_S = 1.0
#: DescribeQuorum's timeout: a faulted cluster's answer is a line with `error`, not a stalled sampler.
QUORUM_TIMEOUT_MS = 2000


def describe_nodes(nodes: list[NodeSpec], config: Mapping[str, str], quorum: str = STATIC) -> dict[str, Any]:
    """nodes.json: each node by alias, the voters' ids (the first voters, in a dynamic quorum),
    the quorum's kind, and the timing settings in effect (the run's broker config over Kafka's
    defaults), as integers."""
    return {
        "nodes": {n.alias: {"id": n.node_id, "roles": list(n.roles)} for n in nodes},
        "voters": sorted(n.node_id for n in nodes if n.is_controller),
        "quorum": quorum,
        "settings": {key: int(config.get(key, default)) for key, default in KAFKA_TIMING_DEFAULTS.items()},
    }


def _replica(state: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": state["replica_id"],
        "log_end_offset": state["log_end_offset"],
        "last_fetch_unix_ms": state.get("last_fetch_timestamp", -1),
        "last_caught_up_unix_ms": state.get("last_caught_up_timestamp", -1),
    }


def replication(answer: Mapping[str, Any]) -> dict[str, Any]:
    """A quorum-replication line (without its time) from kafka-python's describe_metadata_quorum()."""
    part = answer["topics"][0]["partitions"][0]
    if part.get("error"):
        return {"error": str(part["error"])}
    return {
        "leader_id": part["leader_id"],
        "leader_epoch": part["leader_epoch"],
        "high_watermark": part["high_watermark"],
        "voters": [_replica(r) for r in part["current_voters"]],
        "observers": [_replica(r) for r in part["observers"]],
        "error": None,
    }


class ControlPlaneSampler:
    """Samples a live cluster's quorum into a run directory while its history is open:
    `with sampler.running(history):` around the workload phase, `saw` as the history's tap."""

    def __init__(
        self,
        cluster: KafkaCluster,
        run_dir: RunDir,
        reporter: Reporter = silent,
        view_period_s: float = VIEW_PERIOD_S,
        quorum_period_s: float = QUORUM_PERIOD_S,
    ) -> None:
        self.cluster, self.run_dir, self.reporter = cluster, run_dir, reporter
        self.view_period_s, self.quorum_period_s = view_period_s, quorum_period_s
        self._stop = threading.Event()
        self._views: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._now: Callable[[], int] = lambda: 0

    def saw(self, event: Mapping[str, Any]) -> None:
        """The history's tap: a nemesis operation that completed asks the view sampler for a view."""
        views = self._views
        if event.get("process") == NEMESIS and event.get("type") != INVOKE and views is not None:
            try:
                assert views.stdin is not None
                views.stdin.write(f"{event['index']}\n".encode())
                views.stdin.flush()
            except (OSError, ValueError):  # its process gone, or stopping: its views end, the run goes on
                pass

    @contextmanager
    def running(self, history: HistoryWriter) -> Iterator[ControlPlaneSampler]:
        self.start(history.start_ns)
        try:
            yield self
        finally:
            self.stop()

    def start(self, start_ns: int) -> None:
        """nodes.json, then the view sampler's process and the quorum sampler's thread, on the
        history's clock (time 0 at `start_ns` of time.monotonic_ns()); a failure here is reported,
        never raised."""
        self._now = lambda: time.monotonic_ns() - start_ns
        try:
            self.run_dir.control_plane.mkdir(parents=True, exist_ok=True)
            nodes = describe_nodes([n.spec for n in self.cluster.nodes], self.cluster.config, self.cluster.quorum)
            self.run_dir.control_plane_nodes.write_text(json.dumps(nodes, indent=1) + "\n")
            paths = [[n.alias, n.node_id, str(quorum_state.path_of(n))] for n in self.cluster.nodes]
            self._views = subprocess.Popen(
                [sys.executable, "-m", "kafka_chaos.harness.view_sampler", "--start-ns", str(start_ns),
                 "--period-s", str(self.view_period_s), "--nodes", json.dumps(paths),
                 "--out", str(self.run_dir.quorum_views)],
                stdin=subprocess.PIPE,
                start_new_session=True,  # a Ctrl-C stops the run, which then closes its input
            )  # fmt: skip
            out = open(self.run_dir.quorum_replication, "a", encoding="utf-8")  # closed by its thread
            self._thread = threading.Thread(target=self._guarded, args=(out,), name="control-plane-quorum")
            self._thread.daemon = True
            self._thread.start()
        except Exception as exc:  # the run goes on without its control-plane evidence
            self.reporter(f"warning: control-plane sampling did not start: {type(exc).__name__}: {exc}")

    def stop(self) -> None:
        """Stop both samplers (the view sampler takes one last view); waits for a DescribeQuorum
        in flight at most its timeout."""
        self._stop.set()
        if self._views is not None:
            views, self._views = self._views, None
            try:
                assert views.stdin is not None
                views.stdin.close()  # its signal to take the last view and exit
                if views.wait(timeout=5) != 0:
                    self.reporter(f"warning: control-plane view sampler exited {views.returncode}")
            except (OSError, subprocess.TimeoutExpired) as exc:
                views.kill()
                views.wait()
                self.reporter(f"warning: control-plane view sampler stopped: {type(exc).__name__}: {exc}")
        if self._thread is not None:
            self._thread.join(timeout=QUORUM_TIMEOUT_MS / 1000 + 1)

    def _guarded(self, out: TextIO) -> None:
        try:
            with out:
                self._sample_quorum(out)
        except Exception as exc:  # a sampler's own bug ends its samples, not the run
            self.reporter(f"warning: control-plane quorum sampler stopped: {type(exc).__name__}: {exc}")

    def _sample_quorum(self, out: TextIO) -> None:
        admin = None
        try:
            while True:
                # Stamped as asked: the answer is of a moment after this, so a sample taken at or
                # after a deadline has at least what was committed by then (checkers/fault_timing.py).
                asked = self._now()
                try:
                    if admin is None:
                        admin = self.cluster.admin(request_timeout_ms=QUORUM_TIMEOUT_MS)
                    line = replication(describe_quorum(admin))
                except Exception as exc:  # a faulted cluster's timeouts, a stopped one's refusals
                    line = {"error": f"{type(exc).__name__}: {exc}"}
                    # A client keeps asking the node it learnt leads the quorum: after that one
                    # is killed, only a new client (bootstrapped again) asks the next leader.
                    if admin is not None:
                        admin.close()
                        admin = None
                out.write(json.dumps({"time": asked, **line}, separators=(",", ":")) + "\n")
                out.flush()
                if self._stop.wait(self.quorum_period_s):
                    return
        finally:
            if admin is not None:
                admin.close()
