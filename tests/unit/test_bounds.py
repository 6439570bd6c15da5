"""The schedule bounds in one place (nemesis/bounds.py): each bound with a schedule that keeps it
and a near-identical one that breaks it, on the rejecting side (bounds.problems, explore's space,
shrinking) and on the repairing side (the overlapping mix's draws)."""

import random

import pytest

from kafka_chaos.nemesis import bounds, overlap
from kafka_chaos.nemesis.bounds import (
    AIM,
    AT_ONCE,
    DISK,
    DISK_WINDOW_S,
    HEAL_IN_PAUSE,
    HOLD,
    MIN_HOLD_S,
    NETWORK,
    SHAPE,
    WINDOW,
    broken,
)
from kafka_chaos.nemesis.roles import BROKER_ROLES, ROLES, roles_for
from kafka_chaos.nemesis.schedule import Step
from kafka_chaos.nemesis.space import Move, Space
from kafka_chaos.runs.shrink import shrink

K = "chaos/0"


def kill(at, target="leader:chaos/0", hold=8.0):
    return Step(at, "kill", target, hold)


def part(at, hold=4.0, target="leader:chaos/0", shape="isolate"):
    return Step(at, "partition", target, hold, {"shape": shape})


# Each bound: (kept, broken), near-identical schedules.
CASES = {
    AT_ONCE: (
        [kill(10), kill(10, "follower:chaos/0"), kill(10, "controller"), kill(18, "random-broker")],
        [kill(10), kill(10, "follower:chaos/0"), kill(10, "controller"), kill(17.9, "random-broker")],
    ),
    DISK: (
        [Step(10, "wipe", "leader:chaos/0"), kill(20)],
        [Step(10, "wipe", "leader:chaos/0"), Step(20, "lose-unflushed", "follower:chaos/0")],
    ),
    NETWORK: (
        [part(10, 4.0), Step(14, "stall", "leader:chaos/0", 4.0)],
        [part(10, 4.1), Step(14, "stall", "leader:chaos/0", 4.0)],
    ),
    HEAL_IN_PAUSE: (
        [part(10, 9.0), Step(12, "pause", "follower:chaos/0", 6.0)],
        [part(10, 8.9), Step(12, "pause", "follower:chaos/0", 6.0)],
    ),
    HOLD: ([kill(10, hold=MIN_HOLD_S)], [kill(10, hold=MIN_HOLD_S - 0.1)]),
    SHAPE: (
        [part(10, target="leader:chaos/0|controller", shape="cut")],
        [part(10, target="leader:chaos/0|leader:chaos/0", shape="cut")],
    ),
    AIM: ([Step(10, "stall", "random-broker", 4.0)], [Step(10, "stall", "random-controller", 4.0)]),
    WINDOW: ([kill(5, hold=25.0)], [kill(5, hold=25.1)]),
}


def test_every_bound_has_a_case():
    assert set(CASES) == set(bounds.BOUNDS)


@pytest.mark.parametrize("bound", list(CASES))
def test_bounds_reject_the_near_miss_and_keep_the_other(bound):
    kept, breaks = CASES[bound]
    assert broken(kept, start=5.0, duration=30.0) == set(), bounds.problems(kept, start=5.0, duration=30.0)
    assert broken(breaks, start=5.0, duration=30.0) == {bound}, bounds.problems(breaks, start=5.0, duration=30.0)


def test_a_disk_fault_counts_as_in_place_for_its_window():
    kills = [kill(10), kill(10, "follower:chaos/0"), kill(10, "random-broker")]
    assert broken([Step(10 - DISK_WINDOW_S, "wipe", "controller"), *kills]) == set()
    assert broken([Step(10.1 - DISK_WINDOW_S, "wipe", "controller"), *kills]) == {AT_ONCE}


def test_the_other_shapes_and_aims():
    assert broken([part(10, target="leader:chaos/0", shape="quorum-leader")]) == {SHAPE}
    assert broken([part(10, target="controller", shape="quorum-leader")]) == set()
    assert broken([part(10, target="random", shape="halves")]) == set()
    assert broken([part(10, target="controller", shape="replication")]) == {SHAPE}  # no replication to cut
    assert broken([part(10, target="leader:chaos/0", shape="replication")]) == set()
    assert broken([part(10, target="leader:chaos/0|follower:chaos/0", shape="replication")]) == {SHAPE}
    assert broken([part(10, shape="triangle")]) == {SHAPE}
    assert broken([Step(10, "wipe", "controller", 4.0)]) == {HOLD}  # a disk fault is not held
    assert broken([Step(10, "remote-slow", "controller", 4.0)]) == {AIM}
    assert broken([Step(10, "stall", "kafka-2", 4.0)]) == set()  # a node named by hand: no role to judge
    assert bounds.role_name("leader:chaos/0") == "leader" and bounds.role_name("kafka-1") is None


# The rejecting side: explore's space and shrinking.

SPACE = Space.for_run(["kill", "pause", "partition", "stall", "wipe", "lose-unflushed"], "queue", False, 30.0)


def move(step: Step) -> Move:
    roles = tuple(bounds.role_name(t) or t for t in step.target.split("|"))
    return Move(step.at, step.fault, roles, step.hold, step.options.get("shape"))


@pytest.mark.parametrize(
    "bound, kept, breaks",
    [
        (AT_ONCE, *CASES[AT_ONCE]),
        (DISK, *CASES[DISK]),
        (
            HEAL_IN_PAUSE,
            [part(10, 8.0), Step(12, "pause", "follower:chaos/0", 4.0)],
            [part(10, 8.0), Step(12, "pause", "follower:chaos/0", 6.0)],
        ),
        (AIM, [Move(10, "stall", ("any-broker",), 4.0)], [Move(10, "stall", ("any-controller",), 4.0)]),
        (
            NETWORK,
            [part(10, 4.0), Step(14, "stall", "leader:chaos/0", 4.0)],
            [part(10, 6.0), Step(14, "stall", "leader:chaos/0", 4.0)],
        ),
        (WINDOW, [kill(22, hold=8.0)], [kill(22.5, hold=8.0)]),
    ],
)
def test_explores_space_rejects_each_bound(bound, kept, breaks):
    kept = [m if isinstance(m, Move) else move(m) for m in kept]
    breaks = [m if isinstance(m, Move) else move(m) for m in breaks]
    assert SPACE.problems(kept) == []
    assert [p for p in SPACE.problems(breaks) if p.startswith(f"{bound}: ")], SPACE.problems(breaks)


def test_shrinking_rejects_a_candidate_that_breaks_a_bound_the_schedule_kept():
    """Halving the partition's hold would heal it inside the pause (HEAL_IN_PAUSE); aiming the
    stall at a role before its own would reach the controller (AIM): neither is tried."""
    steps = [part(10, 8.0), Step(5, "pause", "follower:chaos/0", 10.0), Step(20, "stall", "random-broker", 4.0)]
    assert broken(steps) == set()
    tried = []

    def trial(candidate):
        tried.append(candidate)
        faults = {(s.fault, s.target if s.fault == "stall" else "") for s in candidate}
        return {"lost-write"} if {("pause", ""), ("partition", ""), ("stall", "random-broker")} <= faults else set()

    said = []
    found = shrink(steps, trial, runs=1, need=1, progress=said.append)
    assert all(broken(c) == set() for c in tried)
    assert any("heal-in-pause" in line for line in said) and any("aim" in line for line in said), said
    assert broken(found.steps) == set() and found.found


def test_shrinking_a_schedule_that_already_broke_a_bound_goes_on():
    steps = [Step(10, "wipe", "leader:chaos/0"), Step(30, "lose-unflushed", "follower:chaos/0"), kill(50)]
    found = shrink(steps, lambda c: {"lost-write"} if any(s.fault == "wipe" for s in c) else set(), runs=1, need=1)
    assert [s.fault for s in found.steps] == ["wipe"]


# The repairing side: the overlapping mix.


def test_the_mix_drops_a_step_past_the_at_once_bound():
    kept, breaks = CASES[AT_ONCE]
    assert overlap._bounded(list(enumerate(kept)), bounds.MAX_AT_ONCE) == kept
    repaired = overlap._bounded(list(enumerate(breaks)), bounds.MAX_AT_ONCE)
    assert repaired == breaks[:3] and broken(repaired) == set()


def test_the_mix_drops_a_network_step_that_starts_before_the_last_healed():
    kept, breaks = CASES[NETWORK]
    assert [s for _, s in overlap._one_network_at_a_time([(3, s) for s in kept], 3)] == kept
    repaired = [s for _, s in overlap._one_network_at_a_time([(3, s) for s in breaks], 3)]
    assert repaired == breaks[:1] and broken(repaired) == set()


def test_the_mix_moves_a_heal_out_of_a_pause():
    pauses = [(12.0, 6.0)]
    assert overlap._past_pauses(10.0, 9.0, pauses) == 9.0  # CASES' kept: healed as the margin ends
    assert overlap._past_pauses(10.0, 8.9, pauses) == 9.0  # the near miss: stretched to it
    stretched = [part(10, overlap._past_pauses(10.0, 8.9, pauses)), Step(12, "pause", "follower:chaos/0", 6.0)]
    assert broken(stretched) == set()


def test_the_mix_holds_a_fault_at_least_the_shortest_hold():
    for seed in range(50):
        for interval in (2.0, 4.0):
            windows = overlap._clock(random.Random(seed), 5.0, interval, 60.0, instant=False)
            assert all(hold >= MIN_HOLD_S for _, hold in windows)
    assert any(h < MIN_HOLD_S for _, h in _unrepaired_clock(1.0))  # what the draw alone gives


def _unrepaired_clock(interval):
    rng = random.Random(1)
    return [(0, round(rng.uniform(0.5, 1.5) * interval, 1)) for _ in range(20)]


def test_the_mix_draws_one_disk_fault_in_a_run_and_aims_stalls_at_brokers():
    roles = roles_for("queue", False)
    brokers = {r.resolve(K) for r in ROLES if r.name in BROKER_ROLES}
    for seed in range(50):
        steps = overlap.draw_overlapping(
            random.Random(seed), overlap.families(["wipe", "stall"]), roles, 300.0, key=K, interval=8.0, nodes=3
        )
        assert sum(s.fault == "wipe" for s in steps) <= bounds.MAX_DISK
        assert all(s.target in brokers for s in steps if s.fault == "stall")
        assert broken(steps, duration=300.0) == set()
