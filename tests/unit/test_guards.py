"""Steps that act on what the cluster is doing (nemesis/guards.py, nemesis/schedule.py `play`):
guards, bindings and holds by name, played against a fake cluster on a fake clock (pure logic;
tests/integration/test_guarded_script.py plays them on a real one)."""

from __future__ import annotations

import pytest

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.nemesis import guards
from kafka_chaos.nemesis.schedule import Step, parse_script, play, recorded_steps


class Cluster:
    """A fake guide: a clock that `wait_until` moves, an ISR that shrinks at `shrinks_at`, roles."""

    def __init__(self, shrinks_at: float | None = None, roles: dict[str, list[str]] | None = None) -> None:
        self.t = 0.0
        self.shrinks_at = shrinks_at
        self.fenced_at: float | None = None
        self.emptied_from: tuple[float, float] | None = None  # kafka-1's log emptied then, refilled after
        self.roles = roles or {"leader:t/0": ["kafka-2"], "follower:t/0": ["kafka-1"]}
        self.applied: list[tuple[float, str, str]] = []
        self.missed: list[tuple[str, str, str]] = []

    def wait_until(self, at: float) -> bool:
        self.t = max(self.t, at)
        return True

    def apply(self, fault: str, target: str, **options) -> dict:
        self.applied.append((self.t, fault, target))
        return {"target": target, "nodes": target.split(",") if target.startswith("kafka") else ["kafka-3"]}

    # the Guide
    def now(self) -> float:
        return self.t

    def resolve(self, target: str) -> list[str]:
        base, _, without = target.partition("!")
        if base in self.roles:
            left = [n for n in self.roles[base] if n not in without.split(",")]
            if not left:
                raise LookupError(f"{target} names nothing")
            return left[:1]
        return base.split(",")

    def isr_size(self, key: str) -> int:
        return 1 if self.shrinks_at is not None and self.t >= self.shrinks_at else 3

    def fenced(self) -> set[str]:
        return {"kafka-2"} if self.fenced_at is not None and self.t >= self.fenced_at else set()

    def emptied(self) -> set[str]:
        a, b = self.emptied_from or (1.0, 0.0)
        return {"kafka-1"} if a <= self.t < b else set()

    def unreached(self, step: Step, target: str, why: str) -> None:
        self.missed.append((step.fault, target, why))


def run(steps: list[Step], c: Cluster) -> Cluster:
    assert play(steps, c.wait_until, c.apply, c)
    return c


def test_a_guarded_step_acts_once_its_guard_holds_and_the_heals_due_meanwhile_keep_their_time():
    steps = parse_script(
        [
            {"at": 1, "fault": "partition", "target": "leader:t/0", "shape": "replication", "for": 4},
            {"at": 2, "fault": "lose-unflushed", "target": "leader:t/0", "when": "isr:t/0 <= 1", "within": 20},
        ]
    )
    c = run(steps, Cluster(shrinks_at=7.3))
    assert [(f, t) for _, f, t in c.applied] == [
        ("partition", "leader:t/0"),
        ("heal", "kafka-3"),
        ("lose-unflushed", "leader:t/0"),
    ]
    (heal_at,) = [t for t, f, _ in c.applied if f == "heal"]
    (acted_at,) = [t for t, f, _ in c.applied if f == "lose-unflushed"]
    assert heal_at == 5 and 7.3 <= acted_at < 7.3 + guards.POLL_S + 1e-9  # the heal on time, during the wait
    assert c.missed == []


def test_a_guard_not_reached_is_recorded_and_the_script_goes_on():
    steps = parse_script(
        [
            {"at": 1, "fault": "kill", "target": "leader:t/0", "when": "isr:t/0 <= 1", "within": 3},
            {"at": 10, "fault": "pause", "target": "follower:t/0", "for": 2},
        ]
    )
    c = run(steps, Cluster(shrinks_at=None))
    assert c.missed == [("kill", "leader:t/0", "guard `isr:t/0 <= 1` not reached within 3 s")]
    assert [f for _, f, _ in c.applied] == ["pause", "resume"]
    near = run(
        parse_script(
            [
                {**s, "within": 30} if s["fault"] == "kill" else s
                for s in [
                    {"at": 1, "fault": "kill", "target": "leader:t/0", "when": "isr:t/0 <= 1", "within": 3},
                ]
            ]
        ),
        Cluster(shrinks_at=3.5),
    )
    assert near.missed == [] and [f for _, f, _ in near.applied] == ["kill"]


def test_a_binding_names_the_nodes_a_step_aimed_at_for_later_steps():
    steps = parse_script(
        [
            {"at": 1, "fault": "pause", "target": "follower:t/0", "for": 2, "as": "F"},
            {"at": 5, "fault": "kill", "target": "$F", "for": 2},
            {"at": 9, "fault": "pause", "target": "random-broker!$F", "for": 2},
        ]
    )
    c = Cluster(roles={"follower:t/0": ["kafka-1"], "random-broker": ["kafka-1", "kafka-3"]})
    run(steps, c)
    assert [(f, t) for _, f, t in c.applied if f in ("pause", "kill")] == [
        ("pause", "kafka-1"),  # resolved when it acts, and bound
        ("kill", "kafka-1"),
        ("pause", "random-broker!kafka-1"),  # the target resolves the exclusion (nemesis/targets.py)
    ]


def test_a_name_used_before_it_is_bound_is_bad_input_or_at_run_time_a_recorded_failure():
    with pytest.raises(UsageError, match=r"step 0: \$L is bound by no earlier step"):
        parse_script([{"at": 1, "fault": "kill", "target": "$L"}, {"at": 2, "fault": "kill", "as": "L"}])
    parse_script([{"at": 3, "fault": "kill", "target": "$L"}, {"at": 2, "fault": "kill", "as": "L"}])  # in time order
    steps = [Step(1, "kill", "$L"), Step(2, "kill", bind="L")]  # as a binding step that failed leaves it
    c = run(steps, Cluster())
    assert c.missed == [("kill", "$L", "$L is not bound yet: no earlier step `as` L has acted")]
    assert [f for _, f, _ in c.applied] == ["kill"]


def test_each_heal_binds_back_to_the_nodes_it_brought_back():
    steps = parse_script(
        [
            {"at": 1, "fault": "kill", "target": "kafka-2", "for": 2},
            {"at": 2, "fault": "pause", "target": "$back", "for": 1},  # before the heal: unbound
            {"at": 5, "fault": "partition", "target": "$back", "for": 1},  # kafka-2, restarted at 3
            {"at": 8, "fault": "kill", "target": "$back"},  # kafka-2 again: the partition's heal at 6
        ]
    )
    c = run(steps, Cluster())
    assert c.missed == [("pause", "$back", "$back is not bound yet: no earlier step `as` back has acted")]
    assert [(t, f, target) for t, f, target in c.applied if f != "start"] == [
        (1, "kill", "kafka-2"),
        (5, "partition", "kafka-2"),
        (6, "heal", "kafka-2"),
        (8, "kill", "kafka-2"),
    ]
    with pytest.raises(UsageError, match=r"step 0: \$back is bound by no earlier step"):
        parse_script([{"at": 1, "fault": "kill", "target": "$back"}])
    with pytest.raises(UsageError, match=r"step 1: \$back is bound by no earlier step"):  # never healed
        parse_script([{"at": 1, "fault": "kill", "target": "kafka-1"}, {"at": 5, "fault": "pause", "target": "$back"}])
    with pytest.raises(UsageError, match=r"step 0: \$back is bound by each heal"):
        parse_script([{"at": 1, "fault": "kill", "as": "back"}])


def test_a_partitions_heal_brings_back_the_side_it_cut_off():
    from kafka_chaos.nemesis.schedule import _brought_back

    replication = {"kafka-2": ["kafka-1", "kafka-3"], "kafka-1": ["kafka-2"], "kafka-3": ["kafka-2"]}
    nodes = ["kafka-1", "kafka-2", "kafka-3"]
    assert _brought_back({"target": "leader:t/0", "nodes": nodes, "grudge": replication}) == ["kafka-2"]
    even = {"kafka-1": ["kafka-2"], "kafka-2": ["kafka-1"]}
    assert _brought_back({"target": "kafka-1|kafka-2", "nodes": nodes[:2], "grudge": even}) == nodes[:2]
    assert _brought_back({"target": "random", "nodes": ["kafka-3"]}) == ["kafka-3"]  # a kill, a pause


def test_a_guard_waits_for_a_bound_broker_to_be_fenced():
    steps = parse_script(
        [
            {"at": 1, "fault": "kill", "target": "leader:t/0", "for": 20, "as": "L"},
            {"at": 2, "fault": "pause", "target": "follower:t/0", "when": "fenced:$L", "within": 30, "for": 1},
            {"at": 3, "fault": "stop", "target": "follower:t/0", "when": "fenced:kafka-1", "within": 2},
        ]
    )
    c = Cluster()
    c.fenced_at = 9.0  # kafka-2, the leader, fenced 8 s after its kill
    run(steps, c)
    assert [(t, f) for t, f, _ in c.applied if f in ("kill", "pause")] == [(1, "kill"), (9.0, "pause")]
    assert c.missed == [("stop", "follower:t/0", "guard `fenced:kafka-1` not reached within 2 s")]
    assert guards.parse_guard("fenced:$L").fenced and not guards.parse_guard("leader:t/0 == $L").fenced
    with pytest.raises(UsageError, match="fenced:TARGET"):
        parse_script([{"at": 1, "fault": "kill", "when": "fenced"}])


def test_a_guard_waits_for_a_bound_voter_to_be_emptied():
    script = [
        {"at": 1, "fault": "wipe", "target": "random-controller", "as": "V"},
        {"at": 2, "fault": "pause", "target": "controller", "when": "emptied:$V", "within": 30, "for": 1},
    ]
    c = Cluster(roles={"random-controller": ["kafka-1"]})
    c.emptied_from = (6.0, 8.0)  # its JVM started, its first fetch not answered yet
    run(parse_script(script), c)
    assert [(t, f) for t, f, _ in c.applied if f in ("wipe", "pause")] == [(1, "wipe"), (6.0, "pause")]
    assert c.missed == []
    # the same wipe of another voter: kafka-3 is never emptied, the guard times out
    other = Cluster(roles={"random-controller": ["kafka-3"]})
    other.emptied_from = (6.0, 8.0)
    run(parse_script([script[0], {**script[1], "within": 10}]), other)
    assert other.missed == [("pause", "controller", "guard `emptied:$V` not reached within 10 s")]
    assert guards.parse_guard("emptied:$V").emptied and not guards.parse_guard("fenced:$V").emptied


def test_a_voter_is_emptied_below_half_the_fullest_voters_log():
    from kafka_chaos.nemesis.targets import emptied

    assert emptied({"kafka-1": 0, "kafka-2": 40_000, "kafka-3": 39_000}, guards.EMPTIED_SHARE) == {"kafka-1"}
    assert emptied({"kafka-1": 20_001, "kafka-2": 40_000, "kafka-3": 39_000}, guards.EMPTIED_SHARE) == set()
    assert emptied({"kafka-1": 19_999, "kafka-2": 40_000}, guards.EMPTIED_SHARE) == {"kafka-1"}
    assert emptied({"kafka-1": 0, "kafka-2": 0}, guards.EMPTIED_SHARE) == set()  # nothing written yet
    assert emptied({}, guards.EMPTIED_SHARE) == set()


def test_a_guard_compares_whom_a_target_names_with_a_binding():
    steps = parse_script(
        [
            {"at": 1, "fault": "pause", "target": "leader:t/0", "for": 2, "as": "L"},
            {"at": 4, "fault": "kill", "target": "leader:t/0", "when": "leader:t/0 != $L", "within": 5},
        ]
    )
    same = run(steps, Cluster())  # the leader never moves
    assert same.missed and "not reached" in same.missed[0][2]
    moved = Cluster()
    moved.roles = {"leader:t/0": ["kafka-2"]}
    original = moved.resolve

    def later(target: str) -> list[str]:
        return ["kafka-3"] if target == "leader:t/0" and moved.t >= 6 else original(target)

    moved.resolve = later  # type: ignore[method-assign]
    run(steps, moved)
    assert moved.missed == [] and moved.applied[-1][1:] == ("kill", "leader:t/0") and moved.applied[-1][0] >= 6


def test_a_hold_until_next_heals_after_the_next_step_acted_or_before_a_network_one():
    steps = parse_script(
        [
            {"at": 1, "fault": "partition", "target": "leader:t/0", "shape": "replication", "for": "next"},
            {"at": 6, "fault": "lose-unflushed", "target": "leader:t/0"},
        ]
    )
    c = run(steps, Cluster())
    assert [f for _, f, _ in c.applied] == ["partition", "lose-unflushed", "heal"]
    network = parse_script(
        [
            {"at": 1, "fault": "partition", "target": "leader:t/0", "shape": "replication", "for": "next"},
            {"at": 6, "fault": "partition", "target": "follower:t/0", "for": 2},
        ]
    )
    c = run(network, Cluster())
    assert [f for _, f, _ in c.applied] == ["partition", "heal", "partition", "heal"]


def test_holds_named_for_the_runs_timeouts_add_the_slack():
    fast = {"replica.lag.time.max.ms": "3000", "broker.session.timeout.ms": "4000"}
    assert guards.hold_seconds("lag", fast) == 1.5 * 3 + 5
    assert guards.hold_seconds("session", fast) == 4 + 5
    assert guards.hold_seconds("election", {}) == 2 + 1 + 5  # Kafka's defaults where the run sets none
    (step,) = parse_script([{"at": 1, "fault": "pause", "target": "controller", "for": "election"}])
    assert (step.hold, step.hold_name) == (None, "election")


@pytest.mark.parametrize(
    "step, why",
    [
        ({"for": "forever"}, "names no hold"),
        ({"for": 0}, "'for'"),
        ({"within": 5}, "give 'when' too"),
        ({"when": "isr:t/0 ~ 1"}, "expected `isr:TOPIC/PARTITION <= N`"),
        ({"when": "isr:t/0 <= 1", "within": -1}, "'within' must be > 0"),
        ({"as": "1st"}, "'as' names a binding"),
        ({"as": "C", "shape": "cut", "target": "leader:t/0|controller"}, "aims at one side"),
    ],
)
def test_a_malformed_move_is_bad_input(step, why):
    raw = {"at": 1, "fault": "partition", "target": "leader:t/0", "for": 2, **step}
    with pytest.raises(UsageError, match=why.replace("(", r"\(").replace("`", "`")):
        parse_script([raw])
    parse_script([{"at": 1, "fault": "partition", "target": "leader:t/0", "for": 2}])  # the near miss


def test_a_recorded_step_keeps_its_guard_binding_and_named_hold():
    first = {"at": 0, "fault": "pause", "target": "leader:t/0", "for": 2, "as": "L"}
    raw = {"at": 1, "fault": "kill", "target": "$L", "when": "isr:t/0 <= 1", "within": 9.0, "as": "K", "for": "lag"}
    steps = parse_script([first, raw])
    recorded = recorded_steps({"script": [s.describe() for s in steps]})
    assert recorded is not None
    assert parse_script(recorded) == steps
