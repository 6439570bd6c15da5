"""A run's control-plane evidence on a real cluster: the active controller killed and started
again, each node's quorum view sampled periodically from before the fault to the history's end and
right after each nemesis operation, the quorum described through the run, and every node's
metadata log decoded; the run checked valid with a control-plane timeline per node in its report;
its evidence edited as a broken controller would have left it, and flagged by name; and a run with
the control plane off writes none of it.

What this asserts holds on any machine: the order of the samples against the history's events, and
no gap wider than the rules' slack S. How often the views actually come (their 250 ms period, the
gaps a loaded machine stretches) is a measurement: docs/measurements.md, "The quorum views'
sampling gaps in a loaded suite"."""

import json
import shutil
from pathlib import Path

import pytest

from kafka_chaos.checkers.check import check_history
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.events import INVOKE, NEMESIS
from kafka_chaos.history.file import read_history
from kafka_chaos.history.kraft import SLACK_S
from kafka_chaos.history.reporter import silent
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.nemesis.plan import nemesis_plan
from kafka_chaos.runs.result import RunResult
from kafka_chaos.runs.run import run
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions
from tests.checkers.cp_edits import claim_leadership, keep_killed

pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("control-plane-run")]

#: The widest gap the rules allow between two samples: their slack S covers sampling
#: (../shared/anomalies.md, "Control plane"); a wider one would let a fault's effect pass unseen.
SLACK_NS = round(SLACK_S * 1e9)
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
    # On the history's clock: views of every node from before the kill was invoked, through the
    # fault, to after the history's last event (the sampler takes its last view as it stops).
    kill_invoked, start_invoked = (e["time"] for e in history if e["process"] == NEMESIS and e["type"] == INVOKE)
    kill_done = completions[0]["time"]
    views = lines(files.quorum_views)
    for alias in nodes["nodes"]:
        mine = [v for v in views if v["node"] == alias]
        periodic = [v["time"] for v in mine if v["after"] is None]
        assert periodic == sorted(periodic) and periodic[0] >= 0, alias
        assert periodic[0] < kill_invoked, (alias, periodic[0], kill_invoked)
        assert any(kill_done < t < start_invoked for t in periodic), (alias, "no view while the node was down")
        assert periodic[-1] >= history[-1]["time"], (alias, periodic[-1], history[-1]["time"])
        gaps = [b - a for a, b in zip(periodic, periodic[1:], strict=False)]
        assert max(gaps) <= SLACK_NS, (alias, sorted(gaps)[-5:])
        for completion in completions:  # one view each, taken after the completion was written
            after = [v["time"] for v in mine if v["after"] == completion["index"]]
            assert len(after) == 1 and completion["time"] < after[0] <= periodic[-1], (alias, completion, after)
        assert all(v["error"] is None for v in mine), [v for v in mine if v["error"]][:3]
    # The killed leader's successor: the others held a new leader in a higher epoch.
    first = next(v for v in views if v["node"] != killed)
    later = [v for v in views if v["node"] != killed and v["leader_epoch"] > first["leader_epoch"]]
    assert later and all(v["leader_id"] != nodes["nodes"][killed]["id"] for v in later[-2:])

    # The quorum described through the run: answered before the kill and again after the start.
    replicated = lines(files.quorum_replication)
    assert [r["time"] for r in replicated] == sorted(r["time"] for r in replicated)
    answered = [r for r in replicated if r["error"] is None]
    assert answered and answered[0]["time"] < kill_invoked, replicated[:3]
    assert answered[-1]["time"] > completions[-1]["time"], replicated[-3:]
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
