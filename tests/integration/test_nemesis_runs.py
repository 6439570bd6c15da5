"""Ctrl-C during a fault. (The safe configuration under faults is tests/chaos/test_safe_configuration.py.)"""

import json
import time

import pytest

from kafka_chaos.harness.cleanup import find_by_label
from kafka_chaos.history.file import read_history
from tests.integration.processes import cli, interrupt, kill_and_clean

pytestmark = pytest.mark.cluster


def test_ctrl_c_during_a_fault_heals_and_cleans_up(tmp_path, docker_api):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"at": 1, "fault": "partition", "shape": "halves", "for": 300}]))
    proc = cli(["run", "--time-limit", "300", "--store", str(tmp_path), "--nemesis-script", str(script), "--quiet"])
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
    try:
        code, _, err = interrupt(proc, 180)
    finally:
        kill_and_clean(docker_api, proc)
    assert code == 130, err
    nemesis = [(e["f"], e["type"]) for e in read_history(history) if e["process"] == "nemesis"]
    assert ("partition", "ok") in nemesis and nemesis[-1] == ("heal", "ok"), nemesis
    run_id = json.loads((history.parent / "config.json").read_text())["run_id"]
    assert find_by_label(docker_api, run_id) == ([], [])
