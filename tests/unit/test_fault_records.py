"""The fault records (nemesis/faults.py): the one place a fault kind is described, and what is
derived from them: the docs' table, the random mix, the heals, and the loop of timed steps; and
each fault kind's own logic (targets, options, draws, what it leaves open) on pure inputs."""

import random
from dataclasses import replace
from pathlib import Path

import pytest

from kafka_chaos.checkers.measures.faults import SPARE_COLOURS, colours_of, fault_windows
from kafka_chaos.frontends.cli import build_parser
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.history.events import EFFECTS
from kafka_chaos.history.faults import Op, from_rows
from kafka_chaos.nemesis import core, faults, partition, remote, stall
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.plan import NemesisPlan, nemesis_plan
from kafka_chaos.nemesis.schedule import Step, play
from kafka_chaos.nemesis.targets import TargetError

DOCS = Path(__file__).resolve().parents[2] / "docs" / "nemesis.md"


def test_the_docs_table_is_the_records():
    assert faults.markdown_table() in DOCS.read_text(), (
        "docs/nemesis.md's fault table differs from nemesis/faults.py: "
        "paste the output of `python -m kafka_chaos.nemesis.faults`"
    )


def test_every_heal_is_a_fault_and_every_fault_left_in_place_is_healed_at_the_end():
    final = {f.name for f in faults.FINAL}
    for record in faults.FAULTS:
        assert record.undone_by is None or record.undone_by in faults.BY_NAME, record.name
        assert record.undone_by is None or record.undone_by in final, record.name  # heal_all runs it
        assert set(record.closes) <= final, record.name
    assert final == set(faults.HEALS.values())  # heal_all runs nothing that heals nothing
    assert set(faults.RANDOM) <= set(faults.NAMES)
    assert not set(faults.RANDOM) & set(faults.HEALS.values())  # a random mix never picks a bare heal


class _Nemesis:
    """Records what was applied; `fails` are faults whose application fails."""

    def __init__(self, fails: tuple[str, ...] = ()):
        self.applied: list[tuple[str, str]] = []
        self.fails = fails

    def apply(self, fault: str, target: str, **options) -> dict:
        self.applied.append((fault, target))
        if fault in self.fails:
            return {"target": target, "error": "no such node"}
        return {"target": target, "nodes": ["kafka-2"]}


@pytest.mark.parametrize(
    "steps, fails, applied",
    [
        # a held fault is healed by its record's heal, on the nodes it hit
        ([Step(0, "kill", "leader:t/0", hold=5)], (), [("kill", "leader:t/0"), ("start", "kafka-2")]),
        (
            [Step(0, "pause", hold=1), Step(2, "partition", hold=1)],
            (),
            [("pause", "random"), ("resume", "kafka-2"), ("partition", "random"), ("heal", "kafka-2")],
        ),
        # a fault that heals itself, or is not held, gets no heal; nor does one that failed
        ([Step(0, "wipe", hold=5)], (), [("wipe", "random")]),
        ([Step(0, "kill")], (), [("kill", "random")]),
        ([Step(0, "kill", hold=5)], ("kill",), [("kill", "random")]),
    ],
)
def test_play_heals_what_its_record_says(steps, fails, applied):
    nemesis, times = _Nemesis(fails), []
    assert play(steps, lambda at: times.append(at) or True, nemesis.apply)
    assert nemesis.applied == applied


def test_play_stops_when_asked():
    nemesis = _Nemesis()
    steps = [Step(0, "kill", hold=5), Step(10, "pause")]
    assert not play(steps, lambda at: at < 5, nemesis.apply)  # stopped while the kill was held
    assert nemesis.applied == [("kill", "random")]


def test_the_nemesis_flags_help_is_made_from_the_records_when_shown():
    run = next(a for a in build_parser()._subparsers._group_actions[0].choices.items() if a[0] == "run")[1]
    (nemesis_flag,) = [a for a in run._actions if "--nemesis" in a.option_strings]
    assert nemesis_flag.help.strip().rpartition(": ")[2].split(",") == list(faults.RANDOM)
    assert "wipe,lose-" in run.format_help()  # argparse renders it (and wraps it) like any help text


def test_every_drawn_fault_has_its_colour_in_its_record_and_every_plan_writes_them():
    applied = {f.name for f in faults.FAULTS if f.name not in faults.HEALS.values()}
    # the faults that undo others are not drawn; a node's own exit is, as the faults are
    assert set(faults.COLOURS) == applied | {faults.EXIT}
    assert len(set(faults.COLOURS.values())) == len(faults.COLOURS)
    plans = [
        nemesis_plan("kill", 5, None),
        nemesis_plan(None, 5, [{"at": 1, "fault": "pause"}]),
        NemesisPlan(custom=lambda nemesis: None, label="s"),
    ]
    for plan in plans:
        assert colours_of({"nemesis": plan.describe()}) == faults.COLOURS
    assert NemesisPlan().describe() == {}  # no nemesis, nothing to draw


def test_a_window_is_shaded_with_its_runs_colour_else_a_spare_one():
    ops = [_op("kill", 1, 1.1), _op("start", 2, 2.2), _op("elect-unclean", 3, 3.1), _op("pause", 4, 4.1)]
    given = fault_windows(ops, 9.0, {"kill": "#d62728", "pause": "#ff7f0e"})
    assert [(w["f"], w["colour"]) for w in given] == [
        ("kill", "#d62728"),
        ("elect-unclean", SPARE_COLOURS[0]),
        ("pause", "#ff7f0e"),
    ]
    # The near miss: the same history checked without its config.json gets the spares, in order.
    bare = fault_windows(ops, 9.0)
    assert [w["colour"] for w in bare] == list(SPARE_COLOURS[:3])
    assert colours_of({}) == {} == colours_of({"nemesis": {"faults": ["kill"]}})  # an older run's config


def test_every_nemesis_event_says_how_its_fault_ends():
    assert faults.named_ends("kill") == {"effect": "down", "undone_by": "start"}
    assert faults.named_ends("pause") == {"effect": "paused", "undone_by": "resume"}
    assert faults.named_ends("start") == {"effect": "started", "heals": ["kill", "stop", "exit"]}
    healed = ["partition", "stall", "hold-endtxn", "hold-markers", "block-connect"]
    assert faults.named_ends("heal") == {"effect": "healed", "heals": healed}
    assert faults.named_ends("wipe") == {"effect": "wiped"}  # over when done
    assert faults.named_ends("lose-unflushed") == {"effect": "restarted"}
    for record in faults.FAULTS:
        ends = faults.named_ends(record.name)
        assert ends["effect"] in EFFECTS, record.name  # what the control-plane rules read, never a name list
        assert ("undone_by" in ends) == (record.undone_by is not None), record.name
        for healed in ends.get("heals", []):
            assert faults.HEALS[healed] == record.name


def _op(f: str, start: float, end: float, type: str = "ok", value=None, nodes=("kafka-1",)) -> Op:
    value = {**faults.named_ends(f), "nodes": list(nodes)} if value is None else value
    row = {"op": int(start * 10), "f": f, "type": type, "itime": int(start * 1e9), "ctime": int(end * 1e9), **value}
    (op,) = from_rows([row])
    return op


def test_a_fault_lasts_until_the_operation_that_names_it_heals_it():
    ops = [_op("kill", 1, 1.1), _op("wipe", 2, 2.5, nodes=["kafka-2"]), _op("start", 5, 5.2), _op("pause", 6, 6.1)]
    windows = [(w["f"], w["start"], w["end"]) for w in fault_windows(ops, 20.0)]
    # The kill to its start's completion, the wipe over when done, the unhealed pause to the end.
    assert windows == [("kill", 1, 5.2), ("wipe", 2, 2.5), ("pause", 6, 20.0)]


def test_an_operation_that_heals_something_else_does_not_end_the_fault():
    # The near miss: a resume (it heals pauses) leaves the kill in place; a failed kill opens nothing.
    ops = [_op("kill", 1, 1.1), _op("resume", 5, 5.2), _op("kill", 6, 6.1, type="fail")]
    assert [(w["f"], w["end"]) for w in fault_windows(ops, 20.0)] == [("kill", 20.0)]


def test_a_history_that_does_not_say_how_faults_end_draws_them_as_instants():
    ops = [_op("kill", 1, 1.1, value={}), _op("start", 5, 5.2, value={"nodes": []})]
    assert [(w["f"], w["start"], w["end"]) for w in fault_windows(ops, 20.0)] == [("kill", 1, 1.1), ("start", 5, 5.2)]


class _Node:
    def __init__(self, node_id: int):
        self.alias, self.node_id = f"kafka-{node_id}", node_id

    def state(self) -> str:
        return "running"


class _Cluster:
    """Five nodes, found by alias or id, as nemesis/targets.py asks for them."""

    def __init__(self):
        self.nodes = [_Node(i) for i in range(1, 6)]
        self.controllers = self.nodes[:1]
        self.network = type("Network", (), {"name": "net"})()

    def node(self, key):
        for n in self.nodes:
            if key in (n.alias, n.node_id):
                return n
        raise KeyError(key)


class _Stage:
    """What a fault sees of the nemesis, from pure inputs: `open` is what each undoing fault owes."""

    def __init__(self, open: dict[str, set[str]] | None = None):
        self.cluster, self.rng, self.open = _Cluster(), random.Random(1), open or {}

    def book(self, fault, aliases):
        raise AssertionError("aiming books nothing")


def _aliases(aim) -> list[str]:
    return [n.alias for n in aim.nodes]


def test_an_undoing_fault_at_random_acts_on_every_node_it_owes():
    stage = _Stage({"start": {"kafka-3", "kafka-1"}, "resume": set()})
    assert _aliases(faults.START.aim(stage, "random", {})) == ["kafka-1", "kafka-3"]
    with pytest.raises(TargetError, match="^resume: no node is paused$"):
        faults.RESUME.aim(stage, "random", {})
    with pytest.raises(TargetError, match="^start: no node is down$"):
        faults.START.aim(_Stage(), "random", {})
    assert _aliases(faults.START.aim(stage, "kafka-2", {})) == ["kafka-2"]  # a named node, owed or not
    assert len(faults.BY_NAME["kill"].aim(stage, "random", {}).nodes) == 1  # a fault that undoes none: one at random


def test_a_partition_reads_its_shape_as_its_own_option_and_no_other_fault_does():
    p, kill = faults.PARTITION, faults.BY_NAME["kill"]
    assert p.args({}) == {"shape": "isolate"}
    assert p.args({"shape": "cut", "unread": 1}) == {"shape": "cut"}
    assert kill.args({"shape": "halves"}) == {}  # a script may give any step a shape; only partition reads it
    assert p.asked("kafka-1", p.args({})) == {"target": "kafka-1", "shape": "isolate"}
    assert kill.asked("kafka-1", {}) == {"target": "kafka-1"}
    assert faults.HEAL.asked("random", {}) == {}  # it heals every node, whatever the target
    assert (p.label("a|b", {"shape": "cut"}), kill.label("kafka-1", {})) == ("partition a|b (cut)", "kill kafka-1")
    with pytest.raises(ValueError, match="unknown partition shape 'star'"):
        faults.check_options({"shape": "star"})
    faults.check_options({"shape": "cut"})
    assert faults.STEP_OPTIONS == {"shape": "isolate", "delay_ms": 200}  # and remote-slow's delay


def test_a_random_schedule_draws_every_random_shape_of_a_partition_and_no_cut():
    drawn = [faults.PARTITION.draw(random.Random(seed)) for seed in range(100)]
    assert {d["shape"] for d in drawn} == set(partition.RANDOM_SHAPES) and "cut" not in partition.RANDOM_SHAPES
    assert all(set(d) == {"shape"} for d in drawn)
    slow = faults.BY_NAME["remote-slow"]
    assert {d["delay_ms"] for d in (slow.draw(random.Random(seed)) for seed in range(100))} == set(remote.DELAYS_MS)
    assert {f.name: f.draw(random.Random(1)) for f in faults.FAULTS if f not in (faults.PARTITION, slow)} == {
        f.name: {} for f in faults.FAULTS if f not in (faults.PARTITION, slow)
    }


def test_a_cut_aims_at_the_nodes_of_its_pairs_and_other_shapes_at_the_target():
    stage = _Stage()
    aim = faults.PARTITION.aim(stage, "kafka-1|kafka-2; kafka-3|2", {"shape": "cut"})
    assert _aliases(aim) == ["kafka-1", "kafka-2", "kafka-3"]
    assert aim.detail == ({"kafka-1": {"kafka-2"}, "kafka-2": {"kafka-1", "kafka-3"}, "kafka-3": {"kafka-2"}}, None)
    with pytest.raises(TargetError, match="malformed cut 'kafka-1'"):
        faults.PARTITION.aim(stage, "kafka-1", {"shape": "cut"})
    isolate = faults.PARTITION.aim(stage, "kafka-4", {"shape": "isolate"})
    assert (_aliases(isolate), isolate.detail) == (["kafka-4"], None)  # its grudge is drawn when applied


class _History:
    def __init__(self):
        self.events: list[tuple] = []

    def write(self, process, type, f, value, error=None):
        self.events.append((type, f, value, error))


@pytest.fixture
def acted(monkeypatch) -> list[tuple[str, str]]:
    """The nemesis's faults with their actions recorded instead of done; kafka-5 cannot be killed."""
    acted: list[tuple[str, str]] = []

    def act(name):
        def on(node):
            if (name, node.alias) == ("kill", "kafka-5"):
                raise RuntimeError("no such process")
            acted.append((name, node.alias))

        return on

    for f in faults.FAULTS:
        if hasattr(f, "act"):
            monkeypatch.setitem(core.BY_NAME, f.name, replace(f, act=act(f.name)))
    monkeypatch.setattr(partition, "apply", lambda nodes, grudge, network, port=None: acted.append(("partition", "")))
    monkeypatch.setattr(partition, "heal", lambda nodes: [n.alias for n in nodes])
    monkeypatch.setattr(stall, "stall", lambda nodes, api, port: {n.alias: 1 for n in nodes})
    return acted


def test_the_nemesis_heals_at_the_end_what_its_faults_left_open(acted):
    history = _History()
    nemesis = Nemesis(_Cluster(), history, seed=1)  # type: ignore[arg-type]
    nemesis.run("kill", "kafka-1,kafka-2")
    nemesis.run("pause", "kafka-3")
    nemesis.run("wipe", "kafka-2")  # started again: nothing left for `start` there
    nemesis.run("kill", "kafka-4,kafka-5")  # broke half way: kafka-4 is down
    nemesis.run("partition", "kafka-4", shape="halves")
    everyone = {f"kafka-{i}" for i in range(1, 6)}
    assert nemesis.open == {"start": {"kafka-1", "kafka-4"}, "resume": {"kafka-3"}, "heal": everyone}
    assert nemesis.out_of_reach() == {"kafka-1", "kafka-3", "kafka-4"}  # down or paused; a cut still answers
    assert history.events[-3][:2] == ("info", "kill") and history.events[-3][2]["nodes"] == ["kafka-4", "kafka-5"]
    del acted[:], history.events[:]
    nemesis.heal_all()
    assert [(t, f) for t, f, _, _ in history.events] == [
        ("invoke", "resume"),
        ("ok", "resume"),
        ("invoke", "start"),
        ("ok", "start"),
        ("invoke", "heal"),
        ("ok", "heal"),
    ]
    assert acted == [("resume", "kafka-3"), ("start", "kafka-1"), ("start", "kafka-4")]
    assert not any(nemesis.open.values())
    nemesis.heal_all()  # nothing left open: nothing more to do
    assert len(history.events) == 6


def test_a_node_started_while_a_partition_is_held_is_cut_off_again(acted):
    nemesis = Nemesis(_Cluster(), _History(), seed=1)  # type: ignore[arg-type]
    nemesis.run("kill", "kafka-1")
    nemesis.run("start")  # no partition held: nothing to install again
    nemesis.run("kill", "kafka-1")
    nemesis.run("partition", "kafka-1", shape="isolate")
    nemesis.run("start")
    nemesis.run("wipe", "kafka-2")
    nemesis.run("heal")
    nemesis.run("kill", "kafka-1")
    nemesis.run("start")  # healed: nothing to install
    assert acted == [
        ("kill", "kafka-1"),
        ("start", "kafka-1"),
        ("kill", "kafka-1"),
        ("partition", ""),
        ("start", "kafka-1"),
        ("partition", ""),
        ("wipe", "kafka-2"),
        ("partition", ""),
        ("kill", "kafka-1"),
        ("start", "kafka-1"),
    ]


def test_a_network_fault_leaves_the_heal_open_and_a_heal_closes_it(acted):
    nemesis = Nemesis(_Cluster(), _History(), seed=1)  # type: ignore[arg-type]
    done = nemesis.run("hold-markers", "kafka-2")
    assert done == {
        "target": "kafka-2",
        "effect": "held",
        "undone_by": "heal",
        "nodes": ["kafka-2"],
        "connections": {"kafka-2": 1},
    }
    assert nemesis.open["heal"] == {f"kafka-{i}" for i in range(1, 6)}
    assert nemesis.run("heal")["nodes"] == [f"kafka-{i}" for i in range(1, 6)]
    assert nemesis.open["heal"] == set()
    assert nemesis.run("start")["error"] == "start: no node is down"  # nothing owed: a recorded fail


def test_a_scripts_steps_are_written_to_config_json_with_every_option():
    steps = [
        {"at": 1, "fault": "kill", "for": 2},
        {"at": 4, "fault": "partition", "target": "kafka-1|kafka-2", "shape": "cut"},
    ]
    plan = nemesis_plan(None, 5, steps)
    assert plan.describe()["script"] == [
        {"at": 1.0, "fault": "kill", "target": "random", "shape": "isolate", "delay_ms": 200, "hold": 2.0},
        {"at": 4.0, "fault": "partition", "target": "kafka-1|kafka-2", "shape": "cut", "delay_ms": 200, "hold": None},
    ]
    assert [s.options for s in plan.script] == [{}, {"shape": "cut"}]


class _Gate:
    def __init__(self) -> None:
        self.mode, self.delay_ms = "open", 0

    def set(self, mode: str, delay_ms: int = 0) -> None:
        self.mode, self.delay_ms = mode, delay_ms


class _GatedNode:
    def __init__(self, alias: str, broker: bool = True) -> None:
        self.alias, self.node_id = alias, int(alias[-1])
        self.gate = _Gate() if broker else None


class _GatedCluster:
    def __init__(self, *nodes: _GatedNode) -> None:
        self.nodes = list(nodes)

    def node(self, key):
        for n in self.nodes:
            if key in (n.alias, n.node_id):
                return n
        raise KeyError(key)


def _remote_nemesis(*nodes: _GatedNode) -> Nemesis:
    return Nemesis(_GatedCluster(*nodes), seed=1)  # type: ignore[arg-type] - a cluster of gates only


def test_the_remote_faults_set_their_brokers_gates_and_remote_heal_opens_what_it_owes():
    k1, k2, c4 = _GatedNode("kafka-1"), _GatedNode("kafka-2"), _GatedNode("kafka-4", broker=False)
    nemesis = _remote_nemesis(k1, k2, c4)
    done = nemesis.run("remote-unavailable", "kafka-1")
    assert done["nodes"] == ["kafka-1"] and done["effect"] == "impaired" and done["undone_by"] == "remote-heal"
    assert (k1.gate.mode, k2.gate.mode) == ("unavailable", "open")
    assert nemesis.run("remote-slow", "kafka-2", delay_ms=500)["delay_ms"] == 500
    assert (k2.gate.mode, k2.gate.delay_ms) == ("slow", 500)
    assert "names no broker" in nemesis.run("remote-unavailable", "kafka-4")["error"]  # a controller has no gate
    assert nemesis.run("remote-heal", "kafka-2")["nodes"] == ["kafka-2"]  # a named target: those nodes only
    assert (k1.gate.mode, k2.gate.mode) == ("unavailable", "open")
    nemesis.heal_all()  # the final heal opens every gate still owed
    assert k1.gate.mode == "open" and not nemesis.open.get("remote-heal")
    assert nemesis.run("remote-slow")["nodes"][0] in ("kafka-1", "kafka-2")  # random: a broker, never kafka-4


def test_a_remote_fault_on_a_cluster_without_remote_storage_does_nothing_and_says_so():
    nemesis = _remote_nemesis(_GatedNode("kafka-1", broker=False))
    assert "not tiered" in nemesis.run("remote-unavailable")["error"]
    with pytest.raises(UsageError, match="fault remote-slow needs a tiered cluster"):
        faults.check_tiered(["kill", "remote-slow"], tiered=False)
    faults.check_tiered(["kill", "remote-slow", "remote-heal"], tiered=True)
    faults.check_tiered(["kill", "wipe"], tiered=False)


def test_a_script_takes_a_slow_gates_delay_and_refuses_a_bad_one():
    plan = nemesis_plan(None, 5, [{"at": 1, "fault": "remote-slow", "target": "kafka-2", "delay_ms": 50, "for": 3}])
    assert plan.script[0].options == {"delay_ms": 50} and plan.fault_names() == ["remote-slow"]
    with pytest.raises(UsageError, match="step 0: delay_ms 0"):
        nemesis_plan(None, 5, [{"at": 1, "fault": "remote-slow", "delay_ms": 0}])
