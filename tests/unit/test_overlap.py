"""The overlapping mix (nemesis/overlap.py) on pure inputs: the generator's properties over many
seeds, the player of overlapping steps on a fake nemesis and clock, the disk guard, scripts that
overlap, and the timeline recorded in config.json and played again from it."""

import json
import random
import threading
import time
from dataclasses import replace

import pytest

from kafka_chaos.frontends.cli import _run_spec, build_parser
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.nemesis import core, faults, partition
from kafka_chaos.nemesis.bounds import DISK_FAULTS, MAX_AT_ONCE, MAX_DISK
from kafka_chaos.nemesis.bounds import problems as bound_problems
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.overlap import (
    DISK,
    DISK_WINDOW_S,
    NETWORK,
    PAUSE,
    DiskOnce,
    OverlapSchedule,
    draw_overlapping,
    families,
    family_of,
    pool_roles,
)
from kafka_chaos.nemesis.plan import nemesis_plan
from kafka_chaos.nemesis.roles import BROKER_ROLES, ROLES, roles_for
from kafka_chaos.nemesis.schedule import Step, parse_script, play, recorded_steps
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions
from tests.unit.test_fault_records import _Cluster, _History

KEY = "chaos/0"
ALL = "kill,pause,partition,stall,wipe,lose-unflushed"
SEEDS = range(200)


def draw(seed, entries=ALL, workload="queue", grouped=False, duration=60.0, interval=8.0, nodes=3, pool="any", **kw):
    roles = pool_roles(roles_for(workload, grouped), pool)
    fams = families(entries.split(","))
    return draw_overlapping(random.Random(seed), fams, roles, duration, key=KEY, interval=interval, nodes=nodes, **kw)


def window(step):
    return step.hold if step.hold is not None else DISK_WINDOW_S


def in_place(steps, t):
    return [s for s in steps if s.at <= t < s.at + window(s)]


def most_at_once(steps):
    return max((len(in_place(steps, s.at)) for s in steps), default=0)


def test_faults_fall_in_the_families_the_table_derives():
    assert [family_of(f) for f in ("partition", "stall", "hold-endtxn", "kill", "pause", "wipe", "lose-unflushed")] == [
        "network",
        "network",
        "network",
        "kill",
        "pause",
        "disk",
        "disk",
    ]
    assert families(["wipe", "kill@group-coordinator", "partition", "kill"]) == {
        "kill": ["kill@group-coordinator", "kill"],
        "disk": ["wipe"],
        "network": ["partition"],
    }
    assert set(faults.RANDOM) <= {f for f in faults.RANDOM if family_of(f)}  # every random fault has one


def test_faults_overlap_in_almost_every_draw_and_a_partition_is_held_while_a_node_fault_happens():
    overlapping = [seed for seed in SEEDS if most_at_once(draw(seed)) >= 2]
    assert len(overlapping) >= 0.95 * len(SEEDS), len(overlapping)
    crossed = 0
    for seed in SEEDS:
        steps = draw(seed)
        nets = [s for s in steps if family_of(s.fault) == NETWORK]
        others = [s for s in steps if family_of(s.fault) != NETWORK]
        crossed += any(n.at < o.at < n.at + n.hold for n in nets for o in others)
    assert crossed >= 0.8 * len(SEEDS), crossed


@pytest.mark.parametrize("seed", SEEDS)
def test_every_draw_keeps_the_bounds(seed):
    steps = draw(seed)
    assert steps == sorted(steps, key=lambda s: s.at)
    assert most_at_once(steps) <= MAX_AT_ONCE
    assert all(s.at + (s.hold or 0) <= 60.0 for s in steps)  # every heal inside the workload phase
    disk = [s for s in steps if s.fault in DISK_FAULTS]
    assert len(disk) <= MAX_DISK and all(s.hold is None for s in disk)  # one disk fault in a run
    nets = [s for s in steps if family_of(s.fault) == NETWORK]
    assert all(b.at >= a.at + a.hold for a, b in zip(nets, nets[1:], strict=False))  # one network fault at a time
    pauses = [s for s in steps if family_of(s.fault) == PAUSE]
    for n in nets:  # no network heal from a pause's start to a second after its resume (no iptables)
        assert not any(p.at <= round(n.at + n.hold, 1) < round(p.at + p.hold + 1.0, 1) for p in pauses), (n, pauses)
    assert bound_problems(steps, duration=60.0) == []  # the mix repairs: the rejecting side finds nothing


@pytest.mark.parametrize("workload, grouped", [("queue", False), ("queue", True), ("txn", False)])
def test_every_target_is_a_role_of_the_workload(workload, grouped):
    names = {r.resolve(KEY) for r in roles_for(workload, grouped)}
    seen = set()
    for seed in range(60):
        for step in draw(seed, workload=workload, grouped=grouped):
            shape = step.options.get("shape")
            if shape == "cut":
                sides = step.target.split("|")
                assert len(sides) == 2 and set(sides) <= names and sides[0] != sides[1], step
            elif shape in ("halves", "majorities-ring", "bridge"):
                assert step.target == "random", step  # the shape draws its own sides
            elif shape == "quorum-leader":
                assert step.target == "controller", step
            else:
                assert step.target in names, step
            seen.add(step.target)
    assert ("txn-coordinator" in seen) == (workload == "txn")
    assert ("group-coordinator" in seen) == grouped
    assert {"leader:chaos/0", "follower:chaos/0", "controller", "quorum-minority"} <= seen


def test_a_pool_keeps_its_roles_and_a_pinned_entry_its_target():
    for seed in range(30):
        for step in draw(seed, entries="kill,pause,stall", pool="brokers"):
            assert step.target in {r.resolve(KEY) for r in ROLES if r.name in BROKER_ROLES}, step
        pinned = [s for s in draw(seed, entries="kill@kafka-2,pause") if s.fault == "kill"]
        assert all(s.target == "kafka-2" for s in pinned)


def test_the_same_seed_draws_the_same_timeline_and_other_seeds_others():
    assert draw(7) == draw(7)
    timelines = {json.dumps([s.describe() for s in draw(seed)]) for seed in range(50)}
    assert len(timelines) == 50


def test_adding_a_family_leaves_the_others_clocks_as_they_were():
    for seed in range(20):
        alone = draw(seed, entries="kill,pause", max_at_once=99)
        more = draw(seed, entries="kill,pause,wipe", max_at_once=99)
        assert [s for s in more if s.fault != "wipe"] == alone


def test_at_most_one_disk_fault_in_a_run_is_drawn():
    for seed in range(50):
        assert len([s for s in draw(seed, entries="wipe,lose-unflushed", duration=300, nodes=2)]) <= MAX_DISK
        assert draw(seed, entries="wipe", duration=300, nodes=0) == []


def test_a_pause_pushes_the_network_heal_past_its_resume():
    for seed in SEEDS:
        unstretched = draw(seed, entries="partition", max_at_once=99)
        if unstretched != draw(seed, entries="partition,pause", max_at_once=99)[: len(unstretched)]:
            return  # some seed's partition was held longer because a pause held past its heal
    pytest.fail("no draw stretched a network fault past a pause")


class FakeNemesis:
    """Applies on a fake clock: records (time, fault, target); a kill hits kafka-2, a pause
    kafka-3, anything else the nodes its target names; `fails` fail."""

    def __init__(self, clock, fails=()):
        self.clock, self.fails, self.calls = clock, fails, []

    def run(self, fault, target="random", **options):
        self.calls.append((self.clock[0], fault, target))
        if fault in self.fails:
            return {"target": target, "error": "no such node"}
        nodes = {"kill": ["kafka-2"], "pause": ["kafka-3"]}.get(fault, target.split(","))
        return {"target": target, "nodes": nodes}


def fake_clock():
    clock = [0.0]

    def wait_until(at):
        assert at >= clock[0], "the player waited for a moment already past"
        clock[0] = at
        return True

    return clock, wait_until


def test_overlapping_steps_heal_on_their_own_time_aimed_at_what_they_hit():
    steps = parse_script(
        [
            {"at": 0, "fault": "partition", "target": "leader:chaos/0", "for": 10},
            {"at": 2, "fault": "kill", "target": "leader:chaos/0", "for": 3},
            {"at": 4, "fault": "wipe", "target": "follower:chaos/0"},
            {"at": 5, "fault": "pause", "target": "controller", "for": 2},
            {"at": 10, "fault": "stall", "target": "kafka-1", "for": 1},
        ]
    )
    clock, wait_until = fake_clock()
    nemesis = FakeNemesis(clock)
    assert play(steps, wait_until, nemesis.run)
    assert nemesis.calls == [
        (0, "partition", "leader:chaos/0"),
        (2, "kill", "leader:chaos/0"),
        (4, "wipe", "follower:chaos/0"),
        (5, "start", "kafka-2"),  # the kill's heal before the pause due at the same moment
        (5, "pause", "controller"),
        (7, "resume", "kafka-3"),
        (10, "heal", "leader:chaos/0"),  # heal first, then the next network fault
        (10, "stall", "kafka-1"),
        (11, "heal", "kafka-1"),
    ]


def test_a_failed_step_is_not_healed_and_the_others_go_on():
    steps = [Step(0, "kill", hold=5), Step(1, "pause", hold=1)]
    clock, wait_until = fake_clock()
    nemesis = FakeNemesis(clock, fails=("kill",))
    assert play(steps, wait_until, nemesis.run)
    assert [c[1] for c in nemesis.calls] == ["kill", "pause", "resume"]


def test_a_player_stopped_mid_way_heals_nothing_itself_and_the_schedule_heals_all():
    clock, calls = [0.0], []
    steps = [Step(0, "partition", hold=10), Step(1, "kill", hold=3), Step(8, "pause", hold=1)]

    def wait_until(at):
        clock[0] = at
        return at < 3

    nemesis = FakeNemesis(clock)
    assert not play(steps, wait_until, nemesis.run)  # stopped before the kill's heal at 4
    assert [c[1] for c in nemesis.calls] == ["partition", "kill"]

    class Recording(FakeNemesis):
        def heal_all(self):
            calls.append("heal_all")

    live = Recording([0.0])
    schedule = OverlapSchedule(live, [Step(0.0, "partition", hold=30), Step(0.02, "kill", hold=30)]).start()
    deadline = time.monotonic() + 5
    while len(live.calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    schedule.stop_and_heal()
    assert [c[1] for c in live.calls] == ["partition", "kill"] and calls == ["heal_all"]


def test_the_disk_guard_refuses_a_second_disk_fault_on_a_node():
    guard = DiskOnce()
    assert guard("kill", ["kafka-1"]) is None and guard("kill", ["kafka-1"]) is None
    assert guard("wipe", ["kafka-1"]) is None
    assert guard("lose-unflushed", ["kafka-2", "kafka-1"]) == (
        "at most one disk fault per node in a run: kafka-1 had wipe already"
    )
    assert guard("lose-unflushed", ["kafka-2"]) is None  # the refused one took nothing


@pytest.fixture
def acted(monkeypatch):
    acted = []
    for f in faults.FAULTS:
        if hasattr(f, "act"):
            monkeypatch.setitem(
                core.BY_NAME, f.name, replace(f, act=lambda node, name=f.name: acted.append((name, node.alias)))
            )
    monkeypatch.setattr(partition, "apply", lambda nodes, grudge, network, port=None: None)
    return acted


def test_the_nemesis_records_the_guards_refusal_as_a_fail_and_does_nothing(acted):
    history = _History()
    nemesis = Nemesis(_Cluster(), history, seed=1)  # type: ignore[arg-type]
    nemesis.refuse = OverlapSchedule(nemesis, []).guard
    assert "error" not in nemesis.run("wipe", "kafka-2")
    refused = nemesis.run("lose-unflushed", "kafka-2")
    assert refused["error"] == "at most one disk fault per node in a run: kafka-2 had wipe already"
    assert "error" not in nemesis.run("wipe", "kafka-3")
    assert acted == [("wipe", "kafka-2"), ("wipe", "kafka-3")]
    assert [(t, f) for t, f, _, _ in history.events][2:4] == [("invoke", "lose-unflushed"), ("fail", "lose-unflushed")]
    assert history.events[3][2]["target"] == "kafka-2" and history.events[3][3] == refused["error"]


def test_scripts_may_overlap_their_steps_sorted_by_time_but_not_two_network_faults():
    steps = parse_script(
        [
            {"at": 6, "fault": "wipe", "target": "follower:chaos/0"},
            {"at": 1, "fault": "partition", "target": "leader:chaos/0|controller", "shape": "cut", "for": 20},
            {"at": 6, "fault": "kill", "target": "controller", "for": 5},
        ]
    )
    assert [(s.at, s.fault) for s in steps] == [(1, "partition"), (6, "wipe"), (6, "kill")]
    with pytest.raises(UsageError, match="step 1 .stall at 5 s. starts while step 0's partition is held .until 21 s."):
        parse_script([{"at": 1, "fault": "partition", "for": 20}, {"at": 5, "fault": "stall"}])
    assert len(parse_script([{"at": 1, "fault": "partition", "for": 4}, {"at": 5, "fault": "stall"}])) == 2
    assert len(parse_script([{"at": 1, "fault": "partition"}, {"at": 5, "fault": "partition"}])) == 2  # unheld
    with pytest.raises(UsageError, match="'at' must be >= 0"):
        parse_script([{"at": -1, "fault": "kill"}])


def spec(seed, **plan):
    opts = WorkloadOptions(time_limit=45)
    return RunSpec(ClusterSpec("4.3.1"), opts, nemesis_plan("kill,pause,partition,wipe", 8, None, **plan), seed=seed)


def test_a_run_draws_its_timeline_from_its_seed_and_config_json_records_it():
    a, b, c = spec(5, mix="overlap").with_seed(), spec(5, mix="overlap").with_seed(), spec(6, mix="overlap").with_seed()
    assert a.nemesis.timeline == b.nemesis.timeline != c.nemesis.timeline
    described = a.describe(a.build_cluster())["nemesis"]
    assert described["mix"] == "overlap" and described["max_at_once"] == MAX_AT_ONCE
    assert described["families"] == {"pause": ["pause"], "kill": ["kill"], "disk": ["wipe"], "network": ["partition"]}
    assert described["steps"] == [s.describe() for s in a.nemesis.timeline]
    assert a.nemesis.short() == "overlap:kill,pause,partition,wipe"
    serial = spec(5).with_seed()
    assert serial.nemesis.timeline is None and "mix" not in serial.describe(serial.build_cluster())["nemesis"]


def test_a_runs_config_json_plays_its_timeline_again_as_the_same_mix(tmp_path):
    run = spec(5, mix="overlap").with_seed()
    config = tmp_path / "config.json"
    config.write_text(json.dumps(run.describe(run.build_cluster())))
    again = nemesis_plan(None, 10, config)
    assert again.mix == "overlap" and again.timeline == run.nemesis.timeline
    assert again.faults == run.nemesis.faults and again.interval == 8
    assert again.describe() == run.nemesis.describe()
    assert isinstance(again.schedule(Nemesis(None), 1), OverlapSchedule)  # type: ignore[arg-type]
    script = nemesis_plan(None, 10, [{"at": 1, "fault": "kill", "for": 2}, {"at": 2, "fault": "pause"}])
    config.write_text(json.dumps({"nemesis": script.describe()}))
    assert nemesis_plan(None, 10, config).script == script.script
    assert recorded_steps({"faults": ["kill"], "interval": 5}) is None
    config.write_text(json.dumps({"nemesis": {"faults": ["kill"], "interval": 5}}))
    with pytest.raises(UsageError, match="replay it with `run --seed`"):
        nemesis_plan(None, 10, config)


@pytest.mark.parametrize(
    "faults_, script, mix, error",
    [
        ("kill", None, "both", "unknown nemesis mix 'both'"),
        (None, [{"at": 1, "fault": "kill"}], "overlap", "mixes a random fault list"),
    ],
)
def test_bad_mixes_are_usage_errors(faults_, script, mix, error):
    with pytest.raises(UsageError, match=error):
        nemesis_plan(faults_, 5, script, mix=mix)


def test_the_run_flag_chooses_the_mix_and_help_says_so():
    args = build_parser().parse_args(["run", "--nemesis", "kill,wipe", "--nemesis-mix", "overlap", "--seed", "3"])
    assert _run_spec(args).nemesis.mix == "overlap"
    assert _run_spec(build_parser().parse_args(["run", "--nemesis", "kill"])).nemesis.mix == "serial"
    run = next(a for a in build_parser()._subparsers._group_actions[0].choices.items() if a[0] == "run")[1]
    assert "--nemesis-mix serial|overlap" in run.format_help()


def test_an_undrawn_overlapping_mix_is_a_bug_not_a_silent_run():
    with pytest.raises(ValueError, match="drawn before its run starts"):
        nemesis_plan("kill", 5, None, mix="overlap").schedule(Nemesis(None), 1)  # type: ignore[arg-type]


def test_an_overlap_schedule_plays_in_real_time():
    """The player on the real clock: a kill held while a partition is, each healed on time."""
    stamps, t0 = [], time.monotonic()

    class Timed(FakeNemesis):
        def run(self, fault, target="random", **options):
            stamps.append((fault, round(time.monotonic() - t0, 1)))
            return super().run(fault, target, **options)

        def heal_all(self):
            pass

    done = threading.Event()
    schedule = OverlapSchedule(Timed([0.0]), [Step(0.0, "partition", hold=0.4), Step(0.1, "kill", hold=0.1)])
    schedule.finished = done
    schedule.start()
    schedule.thread.join(timeout=5)
    assert [f for f, _ in stamps] == ["partition", "kill", "start", "heal"]
    # never early; late only by what a loaded machine's scheduler takes (a 0.06 s bound failed
    # beside a running suite)
    due = [0.0, 0.1, 0.2, 0.4]
    assert all(d - 0.05 <= t <= d + 1.0 for (_, t), d in zip(stamps, due, strict=True)), stamps
    assert DISK in {family_of(f) for f in DISK_FAULTS}


def test_a_heal_that_meets_a_paused_node_leaves_it_owed_for_the_final_heal(acted, monkeypatch):
    """A paused container runs no iptables: `heal` skips it, and heal_all flushes it after the resume."""
    paused = {"kafka-3"}
    healed = []

    def heal(nodes):
        healed.append(sorted(n.alias for n in nodes if n.alias not in paused))
        return healed[-1]

    monkeypatch.setattr(partition, "heal", heal)
    history = _History()
    nemesis = Nemesis(_Cluster(), history, seed=1)  # type: ignore[arg-type]
    nemesis.run("partition", "kafka-3", shape="isolate")
    nemesis.run("pause", "kafka-3")
    nemesis.run("heal")
    assert nemesis.open["heal"] == {"kafka-3"}
    paused.clear()
    nemesis.heal_all()
    assert [f for t, f, _, _ in history.events if t == "ok"][-2:] == ["resume", "heal"]
    assert healed[-1] == [f"kafka-{i}" for i in range(1, 6)] and not any(nemesis.open.values())


def test_chaos_run_takes_the_mix_as_the_cli_does(monkeypatch, tmp_path):
    from kafka_chaos.runs import chaos

    monkeypatch.setattr(chaos, "run", lambda spec, reporter: spec)
    spec = chaos.chaos_run(ClusterSpec("4.3.1"), tmp_path, "t", nemesis="kill,wipe", nemesis_mix="overlap", seed=2)
    assert spec.nemesis.mix == "overlap" and spec.nemesis.short() == "overlap:kill,wipe"
    with pytest.raises(UsageError, match="a scenario brings its own nemesis"):
        chaos.chaos_run(ClusterSpec("4.3.1"), tmp_path, "t", scenario="kafka-14139", nemesis_mix="overlap")


def test_a_run_records_its_drawn_timeline_even_when_its_cluster_never_started(tmp_path, monkeypatch):
    from kafka_chaos.history.reporter import silent
    from kafka_chaos.runs import run as run_mod
    from tests.unit.test_run_spec import ClusterThatDoesNotStart

    real_build = RunSpec.build_cluster
    monkeypatch.setattr(RunSpec, "build_cluster", lambda self: ClusterThatDoesNotStart(real_build(self)))
    job = run_mod.Run(replace(spec(None, mix="overlap"), store=tmp_path), silent)
    with pytest.raises(RuntimeError, match="did not start"):
        job.execute()
    config = json.loads((job.result.run_dir / "config.json").read_text())
    replayed = spec(config["seed"], mix="overlap").with_seed()  # `run --seed` with the same options
    assert config["nemesis"]["steps"] == [s.describe() for s in replayed.nemesis.timeline]
