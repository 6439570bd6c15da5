"""explore's space of schedules (nemesis/space.py): every draw and every mutation stays inside the
bounds, the same seed makes the same schedules, and a schedule becomes a script run can play."""

import random
import re
from dataclasses import replace
from pathlib import Path

import pytest

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.nemesis.bounds import DISK_FAULTS, MAX_AT_ONCE
from kafka_chaos.nemesis.faults import HEALS
from kafka_chaos.nemesis.roles import RELATED
from kafka_chaos.nemesis.schedule import parse_script, recorded_steps
from kafka_chaos.nemesis.space import DEFAULT_FAULTS, Move, Space, at_once, steps

SPACE = Space.for_run(None, "queue", False, 30.0)


def schedules(space: Space, seed: int, n: int = 300) -> list[list[Move]]:
    """n schedules as a campaign makes them: draws, and mutations of earlier ones."""
    rng = random.Random(seed)
    out = [space.draw(rng)]
    for _ in range(n):
        out.append(space.mutate(rng.choice(out), rng) if rng.random() < 0.75 else space.draw(rng))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_draws_and_mutations_stay_inside_the_bounds(seed):
    for moves in schedules(SPACE, seed):
        assert SPACE.problems(moves) == [], moves
        assert 1 <= len(moves) <= SPACE.max_steps
        assert at_once(moves) <= MAX_AT_ONCE
        assert sum(m.fault in DISK_FAULTS for m in moves) <= 1
        assert all(SPACE.start <= m.at and m.span[1] <= SPACE.duration for m in moves)
        assert [m.at for m in moves] == sorted(m.at for m in moves)


def test_the_space_reaches_overlap_and_every_fault_and_role():
    made = [m for seed in (7, 8, 9) for m in schedules(SPACE, seed, 600)]
    assert max(at_once(m) for m in made) == MAX_AT_ONCE  # faults do overlap, up to the bound
    assert {m.fault for ms in made for m in ms} == set(DEFAULT_FAULTS)
    reached = {r for ms in made for m in ms for r in m.roles}
    assert set(SPACE.roles) <= reached and reached - set(SPACE.roles) <= set(SPACE.related)
    # roles bound by earlier moves, the node a heal brought back, the last ISR member
    assert {"other-follower", "new-leader", "old-controller", "came-back", "last-isr-member"} <= reached
    whens = {m.when for ms in made for m in ms}
    assert {None, "isr:{key} <= 1", "isr:{key} <= 2", "leader:{key} != $leader", "fenced:$leader"} <= whens
    assert {"emptied:$controller", "emptied:$any_controller"} <= whens
    assert whens <= {None, *SPACE.guards}
    last = [m for ms in made for m in ms if m.roles == ("last-isr-member",)]
    assert all(m.when == "isr:{key} <= 1" for m in last)  # it names a node only in that state
    assert {"lag", "next"} & {m.hold for ms in made for m in ms}
    shapes = {m.shape for ms in made for m in ms if m.fault == "partition"}
    assert shapes == {"isolate", "quorum-leader", "cut", "replication"}


def test_the_same_seed_makes_the_same_schedules():
    assert schedules(SPACE, 3, 100) == schedules(SPACE, 3, 100)
    assert schedules(SPACE, 3, 100) != schedules(SPACE, 4, 100)


def test_a_mutation_is_a_neighbour():
    """Most mutations change one fault (added, dropped or changed); a fresh draw is the last resort."""
    rng = random.Random(1)
    near = 0
    for _ in range(200):
        parent = SPACE.draw(rng)
        child = SPACE.mutate(parent, rng)
        assert child != parent
        near += len(set(parent) ^ set(child)) <= 2
    assert near >= 180


@pytest.mark.parametrize(
    "moves, problem",
    [
        ([], "no fault"),
        ([Move(10, "wipe", ("leader",)), Move(20, "lose-unflushed", ("follower",))], "disk faults"),
        (
            [Move(10, "partition", ("leader",), 8, "isolate"), Move(12, "partition", ("follower",), 4, "isolate")],
            "two network faults",
        ),
        ([Move(10, "kill", (r,), 8) for r in ("leader", "follower", "controller", "any-broker")], "at once"),
        ([Move(2, "kill", ("leader",), 4)], "outside"),
        ([Move(26, "kill", ("leader",), 8)], "outside"),
        ([Move(10.3, "kill", ("leader",), 4)], "grid"),
        ([Move(10, "kill", ("leader",), 5)], "hold"),
        ([Move(10, "wipe", ("leader",), 4)], "not held"),
        ([Move(10, "kill", ("txn-coordinator",), 4)], "names nothing"),
        ([Move(10, "partition", ("leader",), 4, "quorum-leader")], "controller"),
        ([Move(10, "partition", ("leader",), 4, "cut")], "2 distinct"),
        ([Move(10, "stall", ("leader",), 4)], "not in this space"),
        ([Move(10, "stall", ("controller",), 4)], "aim: "),
        ([Move(10, "partition", ("leader",), 6, "isolate"), Move(12, "pause", ("follower",), 6)], "pause is held"),
        ([Move(10, "partition", ("leader",), 12, "isolate"), Move(13.5, "pause", ("follower",), 8)], "pause is held"),
    ],
)
def test_each_bound_is_checked(moves, problem):
    assert any(problem in p for p in SPACE.problems(moves)), SPACE.problems(moves)


def test_a_heal_clear_of_every_pause_is_inside_the_space():
    """The pause rule's near misses: the heal half a second before the pause, two seconds after
    its resume, and exactly one second after it, where the overlapping mix moves such a heal."""
    before = [Move(10, "partition", ("leader",), 2, "isolate"), Move(12.5, "pause", ("follower",), 4)]
    after = [Move(10, "partition", ("leader",), 12, "isolate"), Move(12, "pause", ("follower",), 8)]
    at_margin = [Move(10, "partition", ("leader",), 12, "isolate"), Move(13, "pause", ("follower",), 8)]
    for moves in (before, after, at_margin):
        assert SPACE.problems(moves) == [], (moves, SPACE.problems(moves))


def test_a_schedule_is_a_script_run_plays():
    moves = [
        Move(8, "partition", ("leader", "controller"), 6, "cut"),
        Move(5, "kill", ("follower",), 4),
        Move(10, "wipe", ("quorum-minority",)),
    ]
    played = steps(moves, "chaos/0")
    assert [(s.at, s.fault, s.target, s.hold, s.options) for s in played] == [
        (5, "kill", "follower:chaos/0", 4, {}),
        (8, "partition", "leader:chaos/0|controller", 6, {"shape": "cut"}),
        (10, "wipe", "quorum-minority", None, {}),
    ]
    script = [
        {"at": s.at, "fault": s.fault, "target": s.target, **s.options, **({"for": s.hold} if s.hold else {})}
        for s in played
    ]
    try:
        parsed = parse_script(script)
    except UsageError as exc:  # a main whose scripts may not overlap yet (nemesis/schedule.py)
        assert "overlaps" in str(exc)
    else:
        assert [(s.at, s.target) for s in parsed] == [(s.at, s.target) for s in played]
    assert all(m == Move.from_json(m.to_json()) for m in moves)


def test_the_space_follows_the_run():
    txn = Space.for_run(["kill", "pause@leader:chaos/0"], "txn", True, 60.0)
    assert txn.faults == ("kill", "pause") and {"txn-coordinator", "group-coordinator"} <= set(txn.roles)
    assert "txn-coordinator" not in SPACE.roles and "group-coordinator" not in SPACE.roles
    assert all(m.hold in txn.holds for ms in schedules(txn, 1, 50) for m in ms if m.fault in HEALS)
    with pytest.raises(UsageError, match="unknown fault"):
        Space.for_run(["explode"], "queue", False, 30.0)
    with pytest.raises(UsageError, match="no room"):
        Space.for_run(None, "queue", False, 7.0)
    # the holds that fit after the quiet start: seconds, and the run's timeouts (election at Kafka's
    # defaults, 8 s; lag and session longer), and `next`
    assert Space.for_run(None, "queue", False, 14.0).holds == (2.0, 4.0, 6.0, 8.0, "election", "next")
    fast = Space.for_run(None, "queue", False, 14.0, config={"broker.session.timeout.ms": "4000"})
    assert "session" in fast.holds and fast.named["session"] == 9.0
    assert Space.from_json(SPACE.to_json()) == SPACE


def test_a_related_role_or_a_guard_reads_only_what_an_earlier_move_bound():
    bind = Move(6.0, "pause", ("follower",), 4.0)
    other = Move(12.0, "kill", ("other-follower",), 2.0)
    assert SPACE.problems([bind, other]) == []
    early = Move(5.0, "kill", ("other-follower",), 2.0)
    assert any("reads follower before a move hits it" in p for p in SPACE.problems([bind, early]))
    guarded = Move(12.0, "kill", ("leader",), 2.0, when="leader:{key} != $leader", within=10.0)
    assert any("reads leader" in p for p in SPACE.problems([bind, guarded]))
    first = Move(6.0, "pause", ("leader",), 4.0)
    assert SPACE.problems([first, guarded]) == []
    last = Move(6.0, "partition", ("leader",), "next", "replication")
    assert any("none comes" in p for p in SPACE.problems([last]))
    assert SPACE.problems([last, Move(9.0, "lose-unflushed", ("leader",), when="isr:{key} <= 1", within=10.0)]) == []


def test_the_node_that_came_back_is_named_only_after_a_heal_is_due():
    kill = Move(6.0, "kill", ("leader",), 4.0)
    assert SPACE.problems([kill, Move(10.0, "pause", ("came-back",), 2.0)]) == []
    assert any("before any heal is due" in p for p in SPACE.problems([kill, Move(9.0, "pause", ("came-back",), 2.0)]))
    held = Move(6.0, "pause", ("leader",), "next")  # healed when the move after it acts
    assert any("before any heal is due" in p for p in SPACE.problems([held, Move(9.0, "kill", ("came-back",), 2.0)]))
    assert SPACE.problems([held, Move(8.0, "kill", ("follower",), 2.0), Move(9.0, "kill", ("came-back",), 2.0)]) == []
    rng = random.Random(5)
    drawn = [SPACE.draw(rng) for _ in range(300)]
    assert all(SPACE.problems(moves) == [] for moves in drawn)
    aimed = {r for moves in drawn for m in moves for r in m.roles}
    assert {"came-back", "last-isr-member"} <= aimed, aimed
    assert steps([kill, Move(10.0, "pause", ("came-back",), 2.0)], "chaos/0")[1].target == "$back"
    cut = Move(9.0, "partition", ("leader",), "next", "replication")
    last = Move(8.0, "kill", ("last-isr-member",), 2.0, when="isr:{key} <= 1", within=20.0)
    assert any("a related role before any other move" in p for p in SPACE.problems([cut, last]))
    assert SPACE.problems([cut, replace(last, at=10.0, within=10.0)]) == []
    assert steps([Move(6.0, "kill", ("last-isr-member",), 2.0)], "chaos/0")[0].target == "last-isr:chaos/0"


def test_a_schedule_with_related_roles_is_a_script_that_binds_on_first_use():
    moves = [
        Move(6.0, "partition", ("leader",), "next", "replication"),
        Move(7.0, "lose-unflushed", ("old-leader",), when="isr:{key} <= 1", within=20.0),
        Move(30.0, "pause", ("leader",), 2.0),
    ]
    played = steps(moves, "chaos/0")
    assert [(s.target, s.bind, s.when, s.hold_name) for s in played] == [
        ("leader:chaos/0", "leader", None, "next"),
        ("$leader", "old_leader", "isr:chaos/0 <= 1", None),  # a related role binds on first use too
        ("leader:chaos/0", None, None, None),  # bound once, on first use
    ]
    assert parse_script(recorded_steps({"script": [s.describe() for s in played]})) == played


def test_a_deeper_mutation_adds_a_move_at_the_waypoint_on_the_role_that_names_its_nodes():
    from kafka_chaos.checkers.measures.ladders import Waypoint

    parent = [Move(6.0, "partition", ("follower",), 8.0, "isolate")]
    acked_on_one = Waypoint("data", 2, 12_300_000_000, ("kafka-2",))
    rng = random.Random(3)
    for _ in range(20):
        child = SPACE.deepen(parent, acked_on_one, rng)
        assert child is not None and SPACE.problems(child) == []
        (added,) = [m for m in child if m not in parent]
        # the leader is the last replica then, the only ISR member
        assert added.roles in (("leader",), ("last-isr-member",)) and added.at == 12.5
    nowhere = Space.for_run(None, "queue", False, 30.0)
    nowhere = Space(nowhere.faults, ("follower",), nowhere.duration, nowhere.start, nowhere.holds)
    assert nowhere.deepen(parent, acked_on_one, rng) is None  # no role here names the leader


def test_docs_explore_lists_every_related_role_as_the_code_spells_it():
    text = (Path(__file__).parents[2] / "docs" / "explore.md").read_text()
    table = text.split("| related role |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `([a-z-]+)` \| `([^`]+)` \| (.+?) \|$", table, flags=re.M)
    assert rows == [(r.name, r.resolve("TOPIC/0"), r.doc) for r in RELATED]
