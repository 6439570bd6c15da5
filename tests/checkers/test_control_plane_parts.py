"""The control plane's pure parts, without Spark: the metadata replay's rules, the fault windows,
and the fault names the checker reads from the history."""

from __future__ import annotations

from kafka_chaos.checkers.control_plane import fault_timing, node_faults, quorum_rules
from kafka_chaos.history.events import EFFECTS
from kafka_chaos.history.metadata_replay import Replay, bumps_on_isr_shrink
from kafka_chaos.nemesis.faults import BY_NAME, FAULTS, HEALS
from tests.checkers.cp_builder import S


def _partition(replay: Replay, offset: int, kind: str, **data) -> tuple[int, int]:
    step = replay.step(offset, kind, {"topicId": "T", "partitionId": 0, **data})
    return step.after.leader_epoch, step.after.partition_epoch


def test_a_leader_named_bumps_the_leader_epoch_even_when_it_stays():
    r = Replay(bump_on_shrink=False)
    r.step(0, "TOPIC_RECORD", {"topicId": "T", "name": "chaos"})
    assert _partition(r, 1, "PARTITION_RECORD", leader=1, isr=[1, 2], leaderEpoch=4, partitionEpoch=7) == (4, 7)
    assert _partition(r, 2, "PARTITION_CHANGE_RECORD", leader=-2, isr=[1]) == (4, 8)  # a shrink, 3.6+
    assert _partition(r, 3, "PARTITION_CHANGE_RECORD", leader=1) == (5, 9)  # the same leader, bumped
    assert _partition(r, 4, "PARTITION_CHANGE_RECORD", leader=-1) == (6, 10)  # no leader
    assert r.step(5, "PARTITION_CHANGE_RECORD", {"topicId": "T", "partitionId": 0, "leader": -2}).partition == "chaos/0"


def test_a_removed_topic_takes_its_partitions_with_it():
    r = Replay(bump_on_shrink=False)
    r.step(0, "TOPIC_RECORD", {"topicId": "T", "name": "chaos"})
    _partition(r, 1, "PARTITION_RECORD", leader=1, isr=[1, 2])
    assert r.step(2, "REMOVE_TOPIC_RECORD", {"topicId": "T"}).removed == ["chaos/0"] and r.partitions == {}
    assert r.step(3, "PARTITION_CHANGE_RECORD", {"topicId": "T", "partitionId": 0, "isr": [1]}).after is None


def test_before_3_6_an_isr_shrink_bumps_the_leader_epoch_once():
    r = Replay(bump_on_shrink=True)
    _partition(r, 1, "PARTITION_RECORD", leader=1, isr=[1, 2, 3])
    assert _partition(r, 2, "PARTITION_CHANGE_RECORD", leader=-2, isr=[1, 2]) == (1, 1)
    # as the controllers of those versions wrote it: the shrink carries its leader
    assert _partition(r, 3, "PARTITION_CHANGE_RECORD", leader=1, isr=[1]) == (2, 2)
    assert _partition(r, 4, "PARTITION_CHANGE_RECORD", leader=-2, isr=[1, 2]) == (2, 3)  # growth: none


def test_metadata_version_decides_the_shrink_bump():
    assert bumps_on_isr_shrink("3.5-IV2", "3.9.1") and not bumps_on_isr_shrink("3.6-IV0", "3.5.2")
    assert bumps_on_isr_shrink(None, "3.5.2") and not bumps_on_isr_shrink(None, "3.6.2")


def test_brokers_epochs_and_fencing():
    r = Replay(bump_on_shrink=False)
    r.step(10, "REGISTER_BROKER_RECORD", {"brokerId": 1, "fenced": True})
    assert r.brokers[1].epoch == 10 and r.brokers[1].fenced
    r.step(11, "UNFENCE_BROKER_RECORD", {"id": 1, "epoch": 10})
    assert r.brokers[1].active
    r.step(12, "BROKER_REGISTRATION_CHANGE_RECORD", {"brokerId": 1, "inControlledShutdown": 1})
    assert not r.brokers[1].active and not r.brokers[1].fenced
    r.step(13, "BROKER_REGISTRATION_CHANGE_RECORD", {"brokerId": 1, "fenced": 1})
    assert r.brokers[1].fenced
    r.step(14, "REGISTER_BROKER_RECORD", {"brokerId": 1, "fenced": False})
    assert r.brokers[1].active and r.brokers[1].epoch == 14


def _op(op, f, t, nodes, **value):
    row = {"op": op, "f": f, "type": "ok", "itime": int(t * S), "ctime": int((t + 0.01) * S), "nodes": nodes}
    return {**row, "effect": BY_NAME[f].effect, **value}


def test_each_node_fault_ends_at_the_first_undo_that_names_it():
    ops = node_faults.nemesis_ops(
        [
            _op(1, "kill", 10, '["a", "b"]', undone_by="start"),
            _op(2, "start", 20, '["b"]', heals='["kill", "stop"]'),
            _op(3, "start", 30, '["a"]', heals='["kill", "stop"]'),
        ]
    )
    ws = {w.node: w for w in node_faults.windows(ops, int(60 * S))}
    assert ws["b"].stayed == (int(10.01 * S), int(20 * S)) and ws["a"].undone == int(30 * S)
    down = node_faults.down(list(ws.values()))
    assert node_faults.is_down(down, "a", int(30.005 * S)) and not node_faults.is_down(down, "b", int(25 * S))
    # two of three voters down: no majority until b starts again
    voters = ["a", "b", "c"]
    assert node_faults.majority_back(list(ws.values()), voters, int(12 * S), int(40 * S)) == int(20.01 * S)


def test_a_cut_leaves_a_majority_that_can_meet():
    ops = node_faults.nemesis_ops(
        [
            _op(1, "partition", 5, '["a"]', undone_by="heal", grudge='{"a": ["b", "c"], "b": ["a"], "c": ["a"]}'),
            _op(2, "heal", 15, '["a", "b", "c"]', heals='["partition"]'),
        ]
    )
    ws = node_faults.windows(ops, int(60 * S))
    assert node_faults.majority_reachable(ws, ["a", "b", "c"], int(10 * S))
    assert not node_faults.majority_reachable(ws, ["a", "b"], int(10 * S))
    assert node_faults.cut_between(ws, "b", "a", int(10 * S)) and not node_faults.cut_between(ws, "b", "c", int(10 * S))


def test_the_effects_read_from_the_history_are_the_nemesis_own():
    """Every fault that takes a node down stays until undone; every one that restarts it is over
    when done; and a fault the nemesis adds is read by what it says it does, not by its name."""
    for name in (*node_faults.DOWN, *node_faults.RESTARTS, node_faults.WIPE):
        assert name in EFFECTS
    assert all(f.name in HEALS for f in FAULTS if f.effect in node_faults.DOWN)
    assert all(f.name not in HEALS for f in FAULTS if f.effect in node_faults.RESTARTS)
    new = _op(1, "kill", 10, '["b"]', undone_by="start")
    ws = node_faults.windows(node_faults.nemesis_ops([{**new, "f": "freeze"}]), int(60 * S))
    assert [(w.f, w.node) for w in ws] == [("freeze", "b")]
    assert node_faults.is_down(node_faults.down(ws), "b", int(20 * S))
    unsaid = node_faults.nemesis_ops([{**new, "effect": None}])
    assert node_faults.faultless(unsaid) == unsaid
    assert node_faults.down(node_faults.windows(unsaid, int(60 * S))) == {}


def test_a_restart_ends_the_stop_before_it():
    """A wipe starts the node it empties (the kafka-14139 scenario stops B, then wipes it): B is
    down only until the wipe began, not for the rest of the run."""
    ops = node_faults.nemesis_ops(
        [
            _op(1, "stop", 10, '["b"]', undone_by="start"),
            _op(2, "wipe", 11, '["b"]'),
            _op(3, "stop", 12, '["a"]', undone_by="start"),
            _op(4, "wipe", 13, '["b"]'),
        ]
    )
    ws = node_faults.windows(ops, int(60 * S))
    stops = {w.node: w for w in ws if w.f == "stop"}
    assert stops["b"].stayed == (int(10.01 * S), int(11 * S)) and stops["b"].undo_op == 2
    assert stops["a"].undone == int(60 * S)  # a wipe of another node starts only that one


def test_the_first_send_after_a_fault_is_read_within_its_second_or_from_a_later_one():
    sends = fault_timing.FirstSends(
        exact={("chaos/0", int(5.01 * S)): int(5.5 * S)}, seconds={"chaos/0": [(3, int(3.2 * S)), (9, int(9.1 * S))]}
    )
    assert sends.after("chaos/0", int(5.01 * S)) == int(5.5 * S)
    assert sends.after("chaos/0", int(6.3 * S)) == int(9.1 * S)  # nothing asked in its own second: the next
    assert sends.after("chaos/0", int(9.5 * S)) is None
    assert sends.after("t/0", int(1 * S)) is None


def test_a_restarted_node_holds_no_claim_to_the_epoch_it_held_before():
    def view(t: float, epoch: int) -> dict:
        held = {"leader_id": 1, "leader_epoch": epoch, "error": None}
        return {"time": int(t * S), "node": "kafka-1", "node_id": 1, **held}

    views = [view(1, 1), view(2, 1), view(20.5, 1), view(30, 3)]
    ends = {"kafka-1": [int(10 * S)]}
    first = quorum_rules.first_claims(views)
    assert [quorum_rules.restarted_claim(v, ends, first) for v in views] == [False, False, True, False]
