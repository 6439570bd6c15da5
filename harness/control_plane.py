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
- nodes.json: every node's id and roles, the voters, and the timing settings the rules use; once
  sampling ended, also `sampling`: until when it went on and from which heal it counted (below),
  and `host_stall`: the stall the probe measured over the whole run.
- host-stall.jsonl: when the host stall probe woke (harness/stall_probe.py, a process of its own
  at the default priority, started and stopped with the samplers): the checker lengthens each
  timing bound by the stall inside its window (history/stall.py).

Sampling goes on after the history's last event when a fault was applied: until
`stuck_window_s()` (history/kraft.py) after the nemesis's last operation completed (its final
heal), so that `stuck-broker-metadata` can be checked; the final read overlaps that wait. Samples
then lie after the history's last event, on its clock. Evidence that could not be collected whole
(a sampler that did not start or died) is recorded in gaps.json (harness/evidence_gaps.py).

The views have their process, so that neither a DescribeQuorum waiting on a faulted cluster nor
the workload's threads delay a view. Nothing here may fail a run, nor slow it but by the window's
hold: a read that fails is a line with `error`, and each round costs a few small file reads. One
thing does: a gap that gaps.json could not take (harness/evidence_gaps.py `GapNotRecorded`) is
raised by `stop`, once both samplers have stopped, so that it cannot vanish.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from kafka_chaos.harness import quorum_state
from kafka_chaos.harness.admin import describe_quorum
from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.config import NodeSpec
from kafka_chaos.harness.evidence_gaps import GapNotRecorded, record_gap
from kafka_chaos.history.events import FAIL, INVOKE, NEMESIS
from kafka_chaos.history.evidence import member, sample_line
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.history.kraft import KAFKA_TIMING_DEFAULTS, STATIC, caught_up, stuck_window_s
from kafka_chaos.history.nodes import HostStall, Node, NodesFile, Sampling
from kafka_chaos.history.reporter import Reporter, silent
from kafka_chaos.history.run_dir import GAP_REPLICATION, GAP_VIEWS, RunDir
from kafka_chaos.history.stall import OVER_NS, read_wakes, stall_within

#: How often each node's quorum view is read; the contract asks for at least every 500 ms, and
#: half of it keeps that under a loaded machine's scheduling delays.
VIEW_PERIOD_S = 0.25
#: How often the quorum is described ("about once a second").
QUORUM_PERIOD_S = 1.0
#: DescribeQuorum's timeout: a faulted cluster's answer is a line with `error`, not a stalled sampler.
QUORUM_TIMEOUT_MS = 2000


def describe_nodes(nodes: list[NodeSpec], config: Mapping[str, str], quorum: str = STATIC) -> NodesFile:
    """nodes.json (history/nodes.py): each node by alias, the voters' ids (the first voters, in a
    dynamic quorum), the quorum's kind, and the timing settings in effect (the run's broker config
    over Kafka's defaults), as integers."""
    return NodesFile(
        {n.alias: Node(n.node_id, tuple(n.roles)) for n in nodes},
        sorted(n.node_id for n in nodes if n.is_controller),
        quorum,
        {key: int(config.get(key, default)) for key, default in KAFKA_TIMING_DEFAULTS.items()},
    )


def _replica(state: Mapping[str, Any]) -> dict[str, Any]:
    return member(
        id=state["replica_id"],
        log_end_offset=state["log_end_offset"],
        last_fetch_unix_ms=state.get("last_fetch_timestamp", -1),
        last_caught_up_unix_ms=state.get("last_caught_up_timestamp", -1),
    )


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
    `with sampler.running(history):` around the workload phase, `saw` as the history's tap.
    Leaving the block normally holds sampling until the window after the last heal (`hold_until`)."""

    def __init__(
        self,
        cluster: KafkaCluster,
        run_dir: RunDir,
        reporter: Reporter = silent,
        view_period_s: float = VIEW_PERIOD_S,
        quorum_period_s: float = QUORUM_PERIOD_S,
        window_s: float | None = None,
    ) -> None:
        """`window_s`: how long after the last heal sampling goes on (default: the window of
        `stuck-broker-metadata`, history/kraft.py)."""
        self.cluster, self.run_dir, self.reporter = cluster, run_dir, reporter
        self.view_period_s, self.quorum_period_s = view_period_s, quorum_period_s
        self.window_s = stuck_window_s() if window_s is None else window_s
        self._stop = threading.Event()
        self._views: subprocess.Popen[bytes] | None = None
        self._probe: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._now: Callable[[], int] = lambda: 0
        #: The history's time of the nemesis's last completion, once one of them did something.
        self._last_heal: int | None = None
        self._faulted = False
        #: When the latest DescribeQuorum that was answered was asked (the history's time).
        self._answered: int | None = None
        #: Each answered sample since the nemesis's last completion: (time, id -> (log end offset,
        #: high watermark)), for `caught_up` (history/kraft.py); guarded by `_lock`.
        self._since_heal: list[tuple[int, dict[int, tuple[Any, Any]]]] = []
        self._lock = threading.Lock()
        #: When every broker had been seen fetching since the last heal (the history's time), if so.
        self._caught_up: int | None = None
        #: Gaps that gaps.json could not take (`_gap`), raised by `stop`.
        self._unrecorded: list[GapNotRecorded] = []

    def saw(self, event: Mapping[str, Any]) -> None:
        """The history's tap: a nemesis operation that completed asks the view sampler for a view,
        and moves the window that sampling is held for."""
        if event.get("process") != NEMESIS or event.get("type") == INVOKE:
            return
        self._faulted = self._faulted or event.get("type") != FAIL
        if isinstance(event.get("time"), int):
            with self._lock:
                self._last_heal = event["time"]
                self._since_heal = [row for row in self._since_heal if row[0] >= event["time"]]
        views = self._views
        if views is not None:
            try:
                assert views.stdin is not None
                views.stdin.write(f"{event['index']}\n".encode())
                views.stdin.flush()
            except (OSError, ValueError):  # its process gone, or stopping: stop() records the gap
                pass

    @property
    def hold_until(self) -> int | None:
        """The history's time until which sampling goes on: `window_s` after the nemesis's last
        operation completed (its final heal), once a fault was applied; None: no fault, no hold."""
        if not self._faulted or self._last_heal is None:
            return None
        return self._last_heal + round(self.window_s * 1e9)

    @contextmanager
    def running(self, history: HistoryWriter) -> Iterator[ControlPlaneSampler]:
        """Sampling around a block; a block that raised (an interrupt, a crash) stops it at once,
        and its exception, not a gap that could not be recorded (reported), ends the run."""
        self.start(history.start_ns)
        try:
            yield self
        except BaseException:
            try:
                self.stop(hold=False)
            except GapNotRecorded:
                pass  # said by `_gap`; the run ends with the block's own exception and no verdict
            raise
        self.stop()

    def start(self, start_ns: int) -> None:
        """The host stall probe's process, nodes.json, then the view sampler's process and the
        quorum sampler's thread, on the history's clock (time 0 at `start_ns` of
        time.monotonic_ns()); a failure here is reported and recorded (gaps.json), never raised."""
        self._now = lambda: time.monotonic_ns() - start_ns
        self._start_probe(start_ns)
        try:
            self.run_dir.control_plane.mkdir(parents=True, exist_ok=True)
            nodes = describe_nodes([n.spec for n in self.cluster.nodes], self.cluster.config, self.cluster.quorum)
            nodes.write(self.run_dir.control_plane_nodes)
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
            why = f"control-plane sampling did not start: {type(exc).__name__}: {exc}"
            self.reporter(f"warning: {why}")
            for kind, running in ((GAP_VIEWS, self._views), (GAP_REPLICATION, self._thread)):
                if running is None:
                    self._gap(kind, why)

    def stop(self, hold: bool = True) -> None:
        """Stop both samplers (the view sampler takes one last view), after holding them until
        `hold_until` when `hold`; waits for a DescribeQuorum in flight at most its timeout. Then
        nodes.json says until when sampling went on, and gaps.json what a sampler left out; last,
        GapNotRecorded if gaps.json could not take a gap (the first, naming how many)."""
        try:
            if hold:
                self._hold()
        finally:
            self._stop.set()
            ended = self._now()
            self._stop_probe()
            self._stop_views()
            if self._thread is not None:
                self._thread.join(timeout=QUORUM_TIMEOUT_MS / 1000 + 1)
                if self._thread.is_alive():
                    self._gap(GAP_REPLICATION, "the DescribeQuorum sampler did not stop: a request hung")
            self._record_sampling(ended)
        if self._unrecorded:
            first, more = self._unrecorded[0], len(self._unrecorded) - 1
            raise GapNotRecorded(f"{first}" + (f" (and {more} more)" if more else "")) from first

    def _gap(self, kind: str, why: str) -> None:
        """gaps.json's `kind` gets `why` (harness/evidence_gaps.py); one it could not take is
        reported now and kept for `stop` to raise: the samplers' threads must not end on it."""
        try:
            record_gap(self.run_dir, kind, why)
        except GapNotRecorded as exc:
            self.reporter(f"error: {exc}")
            self._unrecorded.append(exc)

    def _hold(self) -> None:
        """Wait, sampling, until `hold_until` (the final read has taken part of the window), and
        then until the quorum has been described once from then on (the rule reads up to the last
        answered sample), for a few periods at most: a quorum that no longer answers is what the
        samples then show."""
        until = self.hold_until
        if until is None or (self._thread is None and self._views is None):
            return
        left = (until - self._now()) / 1e9
        if left > 0:
            self.reporter(
                f"control plane: sampling {self.window_s:g} s after the last heal for stuck-broker-metadata"
                f" ({left:.0f} s more)"
            )
        while (left := (until - self._now()) / 1e9) > 0:
            if self._every_broker_caught_up():
                self.reporter(
                    "control plane: every broker fetching since the last heal, stuck-broker-metadata decided"
                    f" ({left:.0f} s of the window left unsampled)"
                )
                return
            time.sleep(min(0.25, left))  # a Ctrl-C here stops the run (stop() stops the samplers)
        last_call = self._now() + round((2 * self.quorum_period_s + QUORUM_TIMEOUT_MS / 1000) * 1e9)
        while self._thread is not None and self._thread.is_alive() and self._now() < last_call:
            if self._answered is not None and self._answered >= until:
                return
            time.sleep(min(0.05, self.quorum_period_s))

    def _keep(self, asked: int, line: Mapping[str, Any]) -> None:
        """An answered sample, kept when it was asked after the nemesis's last completion."""
        hw = line.get("high_watermark")
        offsets = {m["id"]: (m["log_end_offset"], hw) for m in [*line.get("voters", []), *line.get("observers", [])]}
        with self._lock:
            if self._last_heal is not None and asked >= self._last_heal:
                self._since_heal.append((asked, offsets))

    def _every_broker_caught_up(self) -> bool:
        """Whether the samples since the last heal show every broker fetching (history/kraft.py
        `caught_up`): then `stuck-broker-metadata`'s answer is known, and the window need not be
        sampled to its end (its rule reads the same samples the same way)."""
        with self._lock:
            if self._last_heal is None:
                return False
            rows = list(self._since_heal)
        brokers = [n.spec.node_id for n in self.cluster.nodes if n.spec.is_broker]
        done = bool(brokers) and all(caught_up(offsets.get(b, (None, None)) for _, offsets in rows) for b in brokers)
        if done and self._caught_up is None:
            self._caught_up = rows[-1][0]
        return done

    def _stop_views(self) -> None:
        if self._views is None:
            return
        views, self._views = self._views, None
        died = views.poll()
        if died is not None:
            why = f"the view sampler exited {died} before the run's end{self._last_view()}"
            self.reporter(f"warning: control-plane {why}")
            self._gap(GAP_VIEWS, why)
            return
        try:
            assert views.stdin is not None
            views.stdin.close()  # its signal to take the last view and exit
            if views.wait(timeout=5) != 0:
                why = f"the view sampler exited {views.returncode} as it stopped"
                self.reporter(f"warning: control-plane {why}")
                self._gap(GAP_VIEWS, why)
        except (OSError, subprocess.TimeoutExpired) as exc:
            views.kill()
            views.wait()
            why = f"the view sampler did not stop: {type(exc).__name__}: {exc}"
            self.reporter(f"warning: control-plane {why}")
            self._gap(GAP_VIEWS, why)

    def _start_probe(self, start_ns: int) -> None:
        """The host stall probe's process, on the history's clock; one that did not start is said,
        and the run is judged with the slack alone (no host-stall.jsonl)."""
        try:
            self.run_dir.control_plane.mkdir(parents=True, exist_ok=True)
            command = [sys.executable, "-m", "kafka_chaos.harness.stall_probe", "--start-ns", str(start_ns)]
            self._probe = subprocess.Popen(
                [*command, "--out", str(self.run_dir.host_stall)],
                stdin=subprocess.PIPE,
                start_new_session=True,  # a Ctrl-C stops the run, which then closes its input
            )
        except Exception as exc:
            self.reporter(f"warning: the host stall probe did not start: {type(exc).__name__}: {exc}")

    def _stop_probe(self) -> None:
        """Close the probe's input (it writes the wakes it holds and exits) and reap it; one that
        does not exit is killed. Then nodes.json's `host_stall` says what it measured."""
        if self._probe is None:
            return
        probe, self._probe = self._probe, None
        died = probe.poll()
        code: int | str
        try:
            assert probe.stdin is not None
            probe.stdin.close()
            code = probe.wait(timeout=5) if died is None else died
        except (OSError, subprocess.TimeoutExpired) as exc:
            probe.kill()
            probe.wait()
            code = f"did not stop ({type(exc).__name__}: {exc})"
        if died is not None or code != 0:
            last = _last_time(self.run_dir.host_stall)
            until = "" if last is None else f", its last wake at {last / 1e9:.1f} s: the stall past it is not known"
            when = "before the run's end" if died is not None else "as it stopped"
            self.reporter(f"warning: the host stall probe exited {code} {when}{until}")
        self._record_host_stall()

    def _record_host_stall(self) -> None:
        """nodes.json's `host_stall`: the stall the probe measured from its first wake to its last
        (history/stall.py, `stall_s`), its longest interval between two wakes (`longest_s`), and its
        last wake (`until`, on the history's clock); absent without a wake. Said when the host stalled."""
        wakes = read_wakes(self.run_dir)
        if not wakes:
            return
        stall = stall_within(wakes, wakes[0], wakes[-1])
        longest = max((b - a for a, b in zip(wakes, wakes[1:], strict=False)), default=0)
        self._add_to_nodes(host_stall=HostStall(round(stall / 1e9, 3), round(longest / 1e9, 3), wakes[-1]))
        if longest > OVER_NS:
            self.reporter(
                f"control plane: the host stalled {stall / 1e9:.1f} s in all (the longest wait {longest / 1e9:.2f} s),"
                " added to the timing bounds it falls in"
            )

    def _last_view(self) -> str:
        """ ", its last view at 12.3 s" from quorum-views.jsonl's last line, when it has one."""
        last = _last_time(self.run_dir.quorum_views)
        return "" if last is None else f", its last view at {last / 1e9:.1f} s"

    def _record_sampling(self, ended: int) -> None:
        """nodes.json's `sampling`: `ended`, when both samplers were told to stop, and `last_heal`,
        the nemesis's last completion that the window counts from (None: no fault was applied),
        on the history's clock (ns); `window_s`, the window held."""
        last = self._last_heal if self._faulted else None
        self._add_to_nodes(sampling=Sampling(ended, last, self.window_s, self._caught_up if self._faulted else None))

    def _add_to_nodes(self, **entries: Sampling | HostStall) -> None:
        """One more top-level entry of nodes.json, written once sampling ended."""
        path = self.run_dir.control_plane_nodes
        try:
            NodesFile.read(path).adding(**entries).write(path)
        except (OSError, ValueError):  # no nodes.json: sampling never started, and gaps.json says so
            pass

    def _guarded(self, out: TextIO) -> None:
        try:
            with out:
                self._sample_quorum(out)
        except Exception as exc:  # a sampler's own bug ends its samples, not the run
            why = f"the DescribeQuorum sampler stopped at {self._now() / 1e9:.1f} s: {type(exc).__name__}: {exc}"
            self.reporter(f"warning: control-plane {why}")
            self._gap(GAP_REPLICATION, why)

    def _sample_quorum(self, out: TextIO) -> None:
        admin = None
        try:
            while True:
                # Stamped as asked: the answer is of a moment after this, so a sample taken at or
                # after a deadline has at least what was committed by then (checkers/control_plane/fault_timing.py).
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
                out.write(sample_line(time=asked, **line))
                out.flush()
                if line["error"] is None:
                    self._answered = asked
                    self._keep(asked, line)
                if self._stop.wait(self.quorum_period_s):
                    return
        finally:
            if admin is not None:
                admin.close()


def _last_time(path: Path) -> int | None:
    """The `time` of a JSON-lines file's last complete line (its tail only is read)."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, 2) - 4096))
            tail = f.read().decode(errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(tail):
        try:
            value = json.loads(line).get("time")
        except (ValueError, AttributeError):
            continue
        if isinstance(value, int):
            return value
    return None
