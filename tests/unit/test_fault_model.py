"""The one model of the nemesis's operations (history/faults.py): what each effect means, the
pairing of invokes with completions, and the windows every reader reads. Each rule has a case that
shows it and a near miss that does not."""

from __future__ import annotations

from kafka_chaos.checkers.measures.states import read_faults
from kafka_chaos.history import events as ev
from kafka_chaos.history import faults as model
from kafka_chaos.history.evidence import ENDS_PROCESS
from kafka_chaos.history.faults import AFTER_RESTART_NS, Op, meaning, pair, windows

S = 1_000_000_000
END = 100 * S


def op(i: int, f: str, at: float, done: float | None, nodes=("kafka-1",), type: str = "ok", **value) -> Op:
    return Op(i, f, type, int(at * S), None if done is None else int(done * S), list(nodes), **value)


def event(index: int, t: float, type: str, f: str, **value) -> dict:
    return {"index": index, "time": int(t * S), "process": ev.NEMESIS, "type": type, "f": f, "value": value}


def test_each_effect_means_what_the_table_says():
    assert meaning(ev.DOWN).down and meaning(ev.DOWN).ends_process and not meaning(ev.DOWN).freezes
    paused = meaning(ev.PAUSED)
    assert paused.down and paused.freezes and not paused.ends_process  # resumes as it was, claims and all
    lost = meaning(ev.RESTARTED)
    assert lost.restarts and lost.loses_unflushed and lost.ends_process and not lost.empties
    wiped = meaning(ev.WIPED)
    assert wiped.restarts and wiped.empties and wiped.loses_unflushed and wiped.ends_process
    assert meaning(ev.CUT).network and meaning(ev.HELD).network and not meaning(ev.CUT).down
    assert meaning(ev.IMPAIRED).outside and not meaning(ev.IMPAIRED).down
    assert all(meaning(e).undo for e in (ev.STARTED, ev.RESUMED, ev.HEALED, ev.RESTORED))
    assert meaning(None) == meaning("a-new-effect") == model.NOTHING  # a history that does not say
    assert set(model.MEANINGS) == set(ev.EFFECTS)  # every effect the history names has a meaning


def test_an_operators_request_says_it_touches_no_node_and_leaves_the_check_complete():
    from kafka_chaos.nemesis.core import Nemesis

    class Written(list):
        def write(self, process, type, f, value, error=None):
            self.append({"index": len(self), "time": len(self) * S, "process": process, "type": type, "f": f})
            self[-1]["value"] = value

    written = Written()
    nemesis = Nemesis(cluster=None, history=written)  # type: ignore[arg-type] (act needs no cluster)
    nemesis.act("upgrade-metadata", {"target": "3.7-IV0"}, lambda: None)
    (done,) = pair(written)
    assert done.effect == ev.OPERATOR and meaning(done.effect) == model.NOTHING and done.nodes == []
    assert model.faultless([done]) == []  # known to do nothing: the control plane is checked in full
    assert windows([done], END) == []
    # The near miss: the same operation as a history written before it said its effect.
    unsaid = op(1, "upgrade-metadata", 1.0, 1.2, nodes=())
    assert model.faultless([unsaid]) == [unsaid]


def test_the_readers_sets_derive_from_the_table():
    assert model.DOWN == (ev.DOWN, ev.PAUSED, ev.EXITED)
    assert model.RESTARTS == (ev.RESTARTED, ev.WIPED)
    assert model.EMPTIES == (ev.WIPED,)
    assert ENDS_PROCESS == model.ENDS_PROCESS == (ev.DOWN, ev.RESTARTED, ev.WIPED, ev.EXITED)
    assert model.DISRUPTS == (ev.DOWN, ev.PAUSED, ev.RESTARTED, ev.WIPED, ev.CUT, ev.HELD, ev.EXITED)
    assert ev.IMPAIRED not in model.DISRUPTS


def test_a_completion_pairs_with_the_first_open_invoke_of_its_fault_and_target():
    history = [
        event(0, 1.0, "invoke", "kill", target="kafka-1"),
        event(1, 2.0, "invoke", "kill", target="kafka-2"),
        event(2, 2.5, "ok", "kill", target="kafka-2", nodes=["kafka-2"], effect="down", undone_by="start"),
        event(3, 3.0, "ok", "kill", target="kafka-1", nodes=["kafka-1"], effect="down", undone_by="start"),
        {"index": 4, "time": 3 * S, "process": 0, "type": "invoke", "f": "send", "value": []},
        event(5, 4.0, "invoke", "partition", target="majorities-ring", shape="majorities-ring"),
    ]
    kill1, kill2, open_ = pair(history)
    assert (kill1.op, kill1.itime, kill1.ctime, kill1.nodes) == (3, 1 * S, 3 * S, ["kafka-1"])
    assert (kill2.op, kill2.itime, kill2.ctime, kill2.nodes) == (2, 2 * S, int(2.5 * S), ["kafka-2"])
    assert kill1.effect == ev.DOWN and kill1.undone_by == "start" and kill1.target == "kafka-1"
    # The near miss: an invoke never completed is an `info` operation without a completion time,
    # what its invoke said kept (a partition's shape).
    assert (open_.type, open_.ctime, open_.op, open_.shape) == (ev.INFO, None, 5, "majorities-ring")


def test_a_start_of_the_node_ends_its_pause():
    ops = [
        op(1, "pause", 10, 10.1, effect=ev.PAUSED, undone_by="resume"),
        op(2, "start", 20, 25, effect=ev.STARTED, heals=["kill", "stop"]),
    ]
    (w,) = windows(ops, END)
    assert (w.node, w.invoke, w.effect, w.undone, w.healed, w.undo_op) == (
        "kafka-1",
        10 * S,
        int(10.1 * S),
        20 * S,
        25 * S,
        2,
    )
    # The near miss: a start of another node leaves the pause to the end.
    ops[1] = op(2, "start", 20, 25, nodes=["kafka-2"], effect=ev.STARTED, heals=["kill", "stop"])
    (w,) = windows(ops, END)
    assert (w.undone, w.healed, w.undo_op) == (END, END, None)


def test_a_restart_ends_a_kill_and_a_failed_one_does_not():
    ops = [op(1, "kill", 10, 10.1, effect=ev.DOWN, undone_by="start"), op(2, "wipe", 20, 25, effect=ev.WIPED)]
    kill, wipe = windows(ops, END)
    assert (kill.undone, kill.healed) == (20 * S, 25 * S)
    assert (wipe.does, wipe.invoke, wipe.undone, wipe.healed) == (ev.WIPED, 20 * S, 25 * S, 25 * S)
    ops[1] = op(2, "wipe", 20, 25, type=ev.FAIL, effect=ev.WIPED)
    (kill,) = windows(ops, END)
    assert kill.undone == END


def test_a_network_heal_undoes_every_cut():
    grudge = {"kafka-1": ["kafka-2", "kafka-3"]}
    ops = [
        op(1, "partition", 10, 10.1, nodes=["kafka-1"], grudge=grudge, effect=ev.CUT, undone_by="heal"),
        op(2, "heal", 30, 31, nodes=["kafka-2", "kafka-3"], effect=ev.HEALED, heals=["partition", "stall"]),
    ]
    (w,) = windows(ops, END)
    assert (w.node, w.undone, w.healed) == (None, 30 * S, 31 * S) and w.cuts("kafka-2", "kafka-1")
    # The near miss: a resume heals pauses, not cuts.
    ops[1] = op(2, "resume", 30, 31, nodes=["kafka-1"], effect=ev.RESUMED, heals=["pause"])
    (w,) = windows(ops, END)
    assert w.undone == END


def test_a_later_partition_replaces_the_earlier():
    first, second = {"kafka-1": ["kafka-2"]}, {"kafka-3": ["kafka-2"]}
    ops = [
        op(1, "partition", 10, 10.1, grudge=first, effect=ev.CUT, undone_by="heal", shape="isolate"),
        op(2, "partition", 20, 20.1, grudge=second, effect=ev.CUT, undone_by="heal", shape="isolate"),
    ]
    a, b = windows(ops, END)
    assert (a.undone, a.healed, a.undo_op, a.shape) == (20 * S, int(20.1 * S), 2, "isolate")
    assert b.undone == END
    # The near miss: a node fault between them replaces nothing.
    ops[1] = op(2, "kill", 20, 20.1, nodes=["kafka-2"], effect=ev.DOWN, undone_by="start")
    a, _ = windows(ops, END)
    assert a.undone == END


def test_an_impaired_gate_survives_a_restart_of_its_node():
    ops = [
        op(1, "remote-unavailable", 10, 10.1, effect=ev.IMPAIRED, undone_by="remote-heal"),
        op(2, "wipe", 20, 25, effect=ev.WIPED),
        op(3, "remote-heal", 40, 41, effect=ev.RESTORED, heals=["remote-unavailable"]),
    ]
    gate = windows(ops, END)[0]
    assert (gate.undone, gate.healed) == (40 * S, 41 * S)
    # The near miss: a pause of the node is ended by the same restart.
    ops[0] = op(1, "pause", 10, 10.1, effect=ev.PAUSED, undone_by="resume")
    assert windows(ops, END)[0].undone == 20 * S


def test_a_restart_is_in_place_until_after_restart_past_its_completion():
    history = [
        event(0, 20.0, "invoke", "wipe", target="kafka-1"),
        event(1, 25.0, "ok", "wipe", target="kafka-1", nodes=["kafka-1"], effect="wiped"),
    ]
    (w,) = windows(pair(history), END)
    assert w.in_place == (20 * S, 25 * S + AFTER_RESTART_NS)
    faults = read_faults(iter(history))
    last = 25 * S + AFTER_RESTART_NS
    assert faults.context(last - S) == "disk"  # a second inside
    assert faults.context(last + S) == "quiet"  # a second past
    assert faults.down("kafka-1", 22 * S) and not faults.down("kafka-1", 26 * S)  # restarting, then running


def test_a_paused_node_is_not_running_for_explore_as_for_the_split_brain_rule():
    history = [
        event(0, 10.0, "invoke", "pause", target="kafka-1"),
        event(1, 10.1, "ok", "pause", target="kafka-1", nodes=["kafka-1"], effect="paused", undone_by="resume"),
        event(2, 20.0, "invoke", "resume", target="kafka-1"),
        event(3, 20.1, "ok", "resume", target="kafka-1", nodes=["kafka-1"], effect="resumed", heals=["pause"]),
    ]
    faults = read_faults(iter(history))
    assert faults.down("kafka-1", 15 * S)
    assert not faults.down("kafka-1", 21 * S) and not faults.down("kafka-2", 15 * S)  # near misses


def test_a_nodes_own_exit_is_down_and_no_fault_of_the_nemesis():
    """An exit (nemesis/exits.py) takes its node down for every rule that asks whether it ran; the
    rules of a node the nemesis killed, stopped or paused judge a kill and never an exit."""
    exited = model.meaning(ev.EXITED)
    assert exited.down and exited.ends_process and exited.own
    assert ev.EXITED in model.DOWN and ev.EXITED in model.ENDS_PROCESS
    assert ev.EXITED not in model.FAULTED_DOWN
    assert ev.DOWN in model.FAULTED_DOWN and ev.PAUSED in model.FAULTED_DOWN


def test_down_spans_are_read_once_for_every_reader():
    """A kill undone by a start is down until the start completed; one never undone until the
    end (or `unhealed`); a power loss until its own operation completed; a cut is no node's down."""
    ops = [
        op(0, "kill", 10, 10.2, effect=ev.DOWN, undone_by="start"),
        op(1, "start", 20, 21, heals=["kill", "stop"], effect=ev.STARTED),
        op(2, "kill", 30, 30.1, nodes=("kafka-2",), effect=ev.DOWN, undone_by="start"),
        op(3, "lose-unflushed", 40, 44, nodes=("kafka-3",), effect=ev.RESTARTED),
        op(4, "partition", 50, 50.1, nodes=(), effect=ev.CUT, undone_by="heal", grudge={"kafka-1": ["kafka-2"]}),
    ]
    ws = windows(ops, END)
    spans = model.down_spans(ws)
    assert spans == {"kafka-1": [(10 * S, 21 * S)], "kafka-2": [(30 * S, END)], "kafka-3": [(40 * S, 44 * S)]}
    forever = model.down_spans(ws, unhealed=float("inf"))
    assert forever["kafka-2"] == [(30 * S, float("inf"))] and forever["kafka-1"] == spans["kafka-1"]
    assert forever["kafka-3"] == spans["kafka-3"]  # a restart is over when its operation is
