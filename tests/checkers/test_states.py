"""The states a run reached (checkers/measures/states.py), read from a real run directory's files
and from evidence written by hand with the evidence writers' own line constructors."""

from __future__ import annotations

import json
from pathlib import Path

from kafka_chaos.checkers.measures.states import Faults, read_faults, run_states, state_text
from kafka_chaos.history.evidence import record_line, view_line
from kafka_chaos.history.run_dir import RunDir

REAL = Path(__file__).parent / "data" / "kraft-4.3.1-kill-leader"
S = 1_000_000_000


def test_a_real_run_of_a_killed_quorum_leader():
    """kafka-1, the quorum leader, killed at 4 s and started at 8 s (test_control_plane_real.py
    tells the run): the quorum elects kafka-2 while kafka-1 is down, kafka-1 is fenced after it
    had handed its leadership over, and registers again once back."""
    states = {state_text(s) for s in run_states(REAL).features}
    assert {
        "quorum-election steady | process",
        "quorum-epoch-change | process",
        "leader-elected isr steady | process",
        "fenced follower | process",
        "registered restarted | quiet",
    } <= states
    assert not any(s.startswith(("isr-one", "acked-isr-one", "leaderless")) for s in states)


def nemesis(index: int, t: float, type_: str, f: str, **value) -> dict:
    return {"index": index, "time": int(t * S), "process": "nemesis", "type": type_, "f": f, "value": value}


def write_run(path: Path) -> RunDir:
    """Three nodes; kafka-3 isolated 5-15 s, kafka-2 wiped at 6 s; chaos/0's ISR shrinks to [1] at
    7 s while kafka-1 leads, a write is acknowledged at 8 s, then kafka-1 is fenced while it leads
    and kafka-2, back empty, is elected uncleanly at 9 s; the quorum's epoch moves at 7 s."""
    run = RunDir(path)
    (run.control_plane / "metadata").mkdir(parents=True)
    run.config.write_text(json.dumps({"kafka_version": "4.3.1", "workload": {"topic": "chaos", "keys": 1}}))
    nodes = {f"kafka-{i}": {"id": i, "roles": ["broker", "controller"]} for i in (1, 2, 3)}
    run.control_plane_nodes.write_text(json.dumps({"nodes": nodes, "voters": [1, 2, 3]}))
    cut = {"target": "kafka-3", "shape": "isolate", "effect": "cut", "undone_by": "heal"}
    wiped = {"target": "follower:chaos/0", "effect": "wiped"}
    healed = {"target": "random", "effect": "healed", "heals": ["partition", "stall"]}
    events = [
        nemesis(0, 5.0, "invoke", "partition", **cut),
        nemesis(1, 5.1, "ok", "partition", **cut, nodes=["kafka-3"]),
        nemesis(2, 6.0, "invoke", "wipe", **wiped),
        nemesis(3, 6.5, "ok", "wipe", **wiped, nodes=["kafka-2"]),
        {"index": 4, "time": 7 * S, "process": 0, "type": "invoke", "f": "send", "value": [["send", "chaos/0", 1]]},
        {"index": 5, "time": 8 * S, "process": 0, "type": "ok", "f": "send", "value": [["send", "chaos/0", [0, 1]]]},
        nemesis(6, 15.0, "invoke", "heal", **healed),
        nemesis(7, 15.2, "ok", "heal", **healed, nodes=["kafka-1", "kafka-2", "kafka-3"]),
    ]
    run.history.write_text("".join(json.dumps(e) + "\n" for e in events))
    topic = {"name": "chaos", "topicId": "T"}
    part = {"topicId": "T", "partitionId": 0}
    records = [
        (0, 0.0, "TOPIC_RECORD", topic),
        (1, 0.0, "PARTITION_RECORD", {**part, "replicas": [1, 2, 3], "isr": [1, 2, 3], "leader": 1}),
        (2, 1.0, "REGISTER_BROKER_RECORD", {"brokerId": 1, "fenced": False}),
        (3, 7.0, "PARTITION_CHANGE_RECORD", {**part, "isr": [1]}),
        (4, 7.0, "LeaderChange", {"leaderId": 2}),
        (5, 8.5, "FENCE_BROKER_RECORD", {"id": 1}),
        (6, 9.0, "REGISTER_BROKER_RECORD", {"brokerId": 2, "fenced": False}),
        (7, 9.0, "PARTITION_CHANGE_RECORD", {**part, "isr": [2], "leader": 2, "leaderRecoveryState": 1}),
    ]
    log = "".join(
        record_line(offset=o, batch_epoch=1, time=int(t * S), type=k, version=0, data=d) for o, t, k, d in records
    )
    run.metadata_log("kafka-1").write_text(log)
    views = [
        view_line(time=int(t * S), node="kafka-1", node_id=1, leader_id=1, leader_epoch=e)
        for t, e in ((1, 1), (7.5, 2))
    ]
    run.quorum_views.write_text("".join(views))
    return run


def test_hand_made_evidence_names_each_state_with_the_faults_in_place(tmp_path):
    states = {state_text(s) for s in run_states(write_run(tmp_path).path).features}
    during = "several"  # a partition and a wipe (in place for 10 s after it completed): two kinds
    assert states == {
        f"isr-one | {during}",
        f"acked-isr-one | {during}",
        f"quorum-election emptied | {during}",
        f"quorum-epoch-change | {during}",
        f"fenced leader | {during}",
        f"registered emptied | {during}",
        f"leader-elected unclean emptied | {during}",
    }


def test_fault_windows_close_on_their_heals():
    events = [
        nemesis(0, 1.0, "invoke", "kill", target="leader:chaos/0", effect="down", undone_by="start"),
        nemesis(1, 1.2, "ok", "kill", target="leader:chaos/0", effect="down", undone_by="start", nodes=["kafka-1"]),
        nemesis(2, 2.0, "invoke", "pause", target="kafka-2", effect="paused", undone_by="resume"),
        nemesis(3, 2.1, "fail", "pause", target="kafka-2", effect="paused", undone_by="resume"),
        nemesis(4, 5.0, "invoke", "start", target="kafka-1", effect="started", heals=["kill", "stop"]),
        nemesis(5, 6.0, "ok", "start", target="kafka-1", effect="started", heals=["kill", "stop"], nodes=["kafka-1"]),
    ]
    faults: Faults = read_faults(iter(events))
    assert [(w.name, w.start, w.end) for w in faults.windows] == [("kill", 1 * S, 6 * S)]
    assert faults.context(3 * S) == "process" and faults.context(7 * S) == "quiet"
    assert faults.origin("kafka-1", 7 * S, None) == "restarted"
    assert faults.origin("kafka-1", 7 * S, 6.5 * S) == "steady"  # it has led since
    assert faults.origin("kafka-2", 7 * S, None) == "steady"


def test_a_run_without_evidence_reached_nothing(tmp_path):
    assert run_states(tmp_path).features == set()


def test_two_leaders_claimed_at_once_while_the_old_one_is_cut_off(tmp_path):
    """kafka-1 leads in epoch 1 and is cut off from its voters at 5 s; kafka-2 claims epoch 2 at
    7 s while kafka-1's claim stands: a step towards a split brain. The near miss: the same views
    with kafka-1 killed instead (a down node's file keeps its last claim)."""
    run = RunDir(tmp_path / "cut")
    run.control_plane.mkdir(parents=True)
    run.config.write_text(json.dumps({"kafka_version": "3.6.2", "workload": {"topic": "chaos", "keys": 1}}))
    cut = {"target": "controller", "shape": "quorum-leader", "effect": "cut", "undone_by": "heal"}
    run.history.write_text(
        json.dumps(nemesis(0, 5.0, "invoke", "partition", **cut))
        + "\n"
        + json.dumps(nemesis(1, 5.1, "ok", "partition", **cut, nodes=["kafka-1"]))
        + "\n"
    )
    views = [
        view_line(time=int(t * S), node=n, node_id=i, leader_id=leader, leader_epoch=e)
        for t, n, i, leader, e in ((1, "kafka-1", 1, 1, 1), (1, "kafka-2", 2, 1, 1), (7, "kafka-2", 2, 2, 2))
    ]
    run.quorum_views.write_text("".join(views))
    assert "quorum-two-claims | network" in {state_text(s) for s in run_states(run.path).features}

    killed = RunDir(tmp_path / "killed")
    killed.control_plane.mkdir(parents=True)
    killed.config.write_text(run.config.read_text())
    kill = {"target": "controller", "effect": "down", "undone_by": "start"}
    killed.history.write_text(
        json.dumps(nemesis(0, 5.0, "invoke", "kill", **kill))
        + "\n"
        + json.dumps(nemesis(1, 5.1, "ok", "kill", **kill, nodes=["kafka-1"]))
        + "\n"
    )
    killed.quorum_views.write_text("".join(views))
    states = {state_text(s) for s in run_states(killed.path).features}
    assert "quorum-epoch-change | process" in states and not any(s.startswith("quorum-two-claims") for s in states)

    # Started again at 7.2 s: kafka-1's file names it leader of epoch 1 at 8 s. Left by the process the
    # kill ended (written at 0.5 s), it is no claim; written again by the new process (at 7.7 s), it is.
    start = {"target": "kafka-1", "effect": "started", "heals": ["kill", "stop"]}
    for written, claims in ((0.5, False), (7.7, True)):
        again = RunDir(tmp_path / f"restarted-{written}")
        again.control_plane.mkdir(parents=True)
        again.config.write_text(run.config.read_text())
        again.history.write_text(
            killed.history.read_text()
            + json.dumps(nemesis(2, 7.2, "invoke", "start", **start))
            + "\n"
            + json.dumps(nemesis(3, 7.3, "ok", "start", **start, nodes=["kafka-1"]))
            + "\n"
        )
        late = view_line(
            time=int(8 * S), node="kafka-1", node_id=1, leader_id=1, leader_epoch=1, written=int(written * S)
        )
        again.quorum_views.write_text("".join(views) + late)
        states = {state_text(s) for s in run_states(again.path).features}
        assert any(s.startswith("quorum-two-claims") for s in states) == claims, (written, states)
