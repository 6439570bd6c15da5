"""Runs with the nemesis: the safe configuration under faults, and Ctrl-C during a fault."""

import json
import signal
import subprocess
import sys
import time

import pytest

from checkers.check import check_history
from harness.cleanup import find_by_label
from harness.cluster import KafkaCluster
from harness.history import read_history
from harness.run import NemesisPlan, run
from harness.versions import DEFAULT_VERSION
from tests.integration.history_facts import sent_and_read
from tests.integration.test_nemesis import FAST
from workloads.options import WorkloadOptions

pytestmark = pytest.mark.cluster


def test_safe_configuration_survives_kill_pause_partition(tmp_path):
    opts = WorkloadOptions(time_limit=40, concurrency=8, rate=300, final_time_limit=90)
    plan = NemesisPlan(faults=["kill", "pause", "partition"], interval=5)
    cluster = KafkaCluster(DEFAULT_VERSION).with_nodes(3).with_config(FAST)
    run_dir, summary = run(cluster, opts, tmp_path / "store", log=lambda m: None, seed=5, plan=plan)
    events = list(read_history(run_dir / "history.jsonl"))
    faults = [e for e in events if e["process"] == "nemesis" and e["type"] != "invoke"]
    assert {e["f"] for e in faults} >= {"kill", "start", "pause", "resume", "partition", "heal"}, faults
    assert all(e["type"] == "ok" for e in faults), [e for e in faults if e["type"] != "ok"]
    ok_sent, _, read, _ = sent_and_read(events)
    assert ok_sent and ok_sent <= read, f"acknowledged but never read: {sorted(ok_sent - read)[:10]}"
    assert summary.final_read_complete
    assert json.loads((run_dir / "config.json").read_text())["nemesis"]["faults"] == ["kill", "pause", "partition"]
    result = check_history(run_dir)
    assert result.valid is True, result.anomalies
    assert 'class="fault fault-kill"' in result.report_path.read_text()


def test_ctrl_c_during_a_fault_heals_and_cleans_up(tmp_path, docker_api):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"at": 1, "fault": "partition", "shape": "halves", "for": 300}]))
    cmd = [sys.executable, "-m", "harness.cli", "run", "--time-limit", "300", "--store", str(tmp_path),
           "--nemesis-script", str(script), "--quiet"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    history = tmp_path / "queue" / "latest" / "history.jsonl"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if (
            history.exists()
            and '"f":"partition","value"' in history.read_text()
            and '"type":"ok","f":"partition"' in history.read_text()
        ):
            break
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=120) == 130, proc.stderr.read()
    nemesis = [(e["f"], e["type"]) for e in read_history(history) if e["process"] == "nemesis"]
    assert ("partition", "ok") in nemesis and nemesis[-1] == ("heal", "ok"), nemesis
    run_id = json.loads((history.parent / "config.json").read_text())["run_id"]
    assert find_by_label(docker_api, run_id) == ([], [])
