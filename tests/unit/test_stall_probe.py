"""The host stall probe (harness/stall_probe.py): a process of its own that wakes every 100 ms on
the history's clock, a stall of it that history/stall.py measures, its end when its input closes
(the run ending or the run's process gone), and the control-plane samplers starting and reaping it
with theirs; without Docker (the samplers on tests/unit/test_control_plane_sampler.py's stand-in
cluster)."""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafka_chaos.harness.control_plane import ControlPlaneSampler
from kafka_chaos.history.events import OK
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.history.stall import PERIOD_NS, read_wakes, stall_within
from tests.unit.test_control_plane_sampler import Admin, Cluster

MS = 1_000_000


@pytest.fixture
def run(tmp_path: Path) -> RunDir:
    r = RunDir(tmp_path / "run")
    r.control_plane.mkdir(parents=True)
    return r


def start_probe(run: RunDir, start_ns: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "kafka_chaos.harness.stall_probe", "--start-ns", str(start_ns)]
        + ["--out", str(run.host_stall)],
        stdin=subprocess.PIPE,
    )


def first_flush(run: RunDir, timeout_s: float = 15) -> None:
    """Until the probe has written its first wakes (it starts slowly on a loaded machine)."""
    deadline = time.monotonic() + timeout_s
    while not (run.host_stall.is_file() and run.host_stall.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert run.host_stall.read_text(), "the probe wrote nothing"


def test_the_probe_wakes_every_100_ms_on_the_historys_clock_and_ends_with_its_input(run):
    start_ns = time.monotonic_ns() - 5_000 * MS  # the history began 5 s before the probe
    probe = start_probe(run, start_ns)
    first_flush(run)
    time.sleep(1.5)
    assert probe.poll() is None
    held = read_wakes(run)
    assert held and held[-1] > time.monotonic_ns() - start_ns - 1_500 * MS  # written as it goes, about once a second
    closed = time.monotonic_ns() - start_ns
    assert probe.stdin is not None
    probe.stdin.close()
    assert probe.wait(timeout=5) == 0

    wakes = read_wakes(run)
    assert wakes is not None and len(wakes) >= 15
    assert 5_000 * MS < wakes[0] < closed - 1_500 * MS  # the history's clock, not the probe's own
    assert closed <= wakes[-1] < closed + 500 * MS  # its last wake: its input closing woke it
    intervals = [b - a for a, b in zip(wakes, wakes[1:], strict=False)]
    assert all(i >= PERIOD_NS - MS for i in intervals[:-1])  # it sleeps 100 ms at a time
    assert PERIOD_NS <= statistics.median(intervals) < PERIOD_NS + 30 * MS


def test_a_probe_held_from_the_cpu_for_1_s_measures_a_stall_of_0_9_s(run):
    start_ns = time.monotonic_ns()
    probe = start_probe(run, start_ns)
    first_flush(run)
    time.sleep(0.3)
    os.kill(probe.pid, signal.SIGSTOP)  # as a loaded machine holds a process from the CPU
    stopped = time.monotonic_ns() - start_ns
    time.sleep(1.0)
    resumed = time.monotonic_ns() - start_ns
    os.kill(probe.pid, signal.SIGCONT)
    time.sleep(0.5)
    assert probe.stdin is not None
    probe.stdin.close()
    assert probe.wait(timeout=5) == 0

    wakes = read_wakes(run)
    assert wakes is not None
    inside = stall_within(wakes, stopped, resumed)
    assert abs(inside - (resumed - stopped - PERIOD_NS)) < 50 * MS, (inside, resumed - stopped)
    assert 850 * MS < stall_within(wakes, 0, wakes[-1]) < 1_500 * MS
    # a window that ends before the stop saw none of it
    assert stall_within(wakes, 0, stopped - 200 * MS) < 100 * MS


def test_a_probe_whose_run_was_killed_ends_on_its_own(run):
    """The run's process killed (SIGKILL: nothing of it runs again) closes the probe's input."""
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            f"p = subprocess.Popen([sys.executable, '-m', 'kafka_chaos.harness.stall_probe', '--start-ns', '0',"
            f" '--out', {str(run.host_stall)!r}], stdin=subprocess.PIPE, start_new_session=True)\n"
            "print(p.pid, flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        first_flush(run)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
    assert read_wakes(run)


def alive(pid: int) -> bool:
    """Whether a process runs (an exited one that its new parent has not reaped yet does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def sampled(run: RunDir, tmp_path: Path, inside, probes: list) -> ControlPlaneSampler:
    """The samplers around a block that calls `inside`; `probes` gets the probe's process they started."""
    sampler = ControlPlaneSampler(Cluster(tmp_path / "c", Admin()), run, view_period_s=0.05, quorum_period_s=0.05)
    with HistoryWriter(run.history, tap=sampler.saw) as history, sampler.running(history):
        history.write(0, OK, "send", [])
        probes.append(sampler._probe)
        first_flush(run)
        inside()
    return sampler


def test_the_samplers_start_the_probe_and_reap_it_and_nodes_json_says_what_it_measured(run, tmp_path):
    probes: list[subprocess.Popen[bytes]] = []
    sampler = sampled(run, tmp_path, lambda: time.sleep(0.3), probes)
    assert probes[0].returncode == 0 and sampler._probe is None  # ended and reaped with the samplers
    wakes = read_wakes(run)
    assert wakes is not None and len(wakes) >= 10
    stall = json.loads(run.control_plane_nodes.read_text())["host_stall"]
    assert set(stall) == {"stall_s", "longest_s", "until"} and stall["until"] == wakes[-1]
    assert stall["stall_s"] == round(stall_within(wakes, wakes[0], wakes[-1]) / 1e9, 3)
    assert stall["longest_s"] == round(max(b - a for a, b in zip(wakes, wakes[1:], strict=False)) / 1e9, 3)
    assert run.quorum_views.read_text()  # beside the views, not instead


def test_a_block_that_raised_stops_the_probe_too(run, tmp_path):
    def interrupted() -> None:
        raise KeyboardInterrupt

    probes: list[subprocess.Popen[bytes]] = []
    with pytest.raises(KeyboardInterrupt):
        sampled(run, tmp_path, interrupted, probes)
    assert probes[0].returncode == 0 and read_wakes(run)


def test_a_probe_that_died_is_said_and_what_it_wrote_kept(run, tmp_path):
    said: list[str] = []

    def kill_probe() -> None:
        os.kill(probes[0].pid, signal.SIGKILL)
        probes[0].wait()

    probes: list[subprocess.Popen[bytes]] = []
    sampler = ControlPlaneSampler(Cluster(tmp_path / "c", Admin()), run, said.append, 0.05, 0.05)
    with HistoryWriter(run.history, tap=sampler.saw) as history, sampler.running(history):
        probes.append(sampler._probe)
        first_flush(run)
        kill_probe()
    [warning] = [m for m in said if "stall probe" in m]
    assert warning.startswith("warning: the host stall probe exited -9 before the run's end, its last wake at ")
    assert "host_stall" in json.loads(run.control_plane_nodes.read_text())
