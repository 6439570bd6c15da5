"""A schedule's control flow with a stand-in nemesis (no Kafka): a crash is healed, then raised."""

import threading
import time
from types import SimpleNamespace

import pytest

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.nemesis.core import Nemesis as RealNemesis
from kafka_chaos.nemesis.partition import RANDOM_SHAPES
from kafka_chaos.nemesis.plan import nemesis_plan
from kafka_chaos.nemesis.schedule import RandomSchedule, ScheduleCrash, ScriptedSchedule, Step
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.runner import Runner


class Nemesis:
    """Records what the schedule asked; `broken` makes `run` fail the way a harness bug would."""

    def __init__(self, broken: bool):
        self.broken = broken
        self.calls: list[str] = []

    def run(self, fault, target="random", shape="isolate"):
        self.calls.append(fault)
        if self.broken:
            raise KeyError("a bug in the schedule's own code")
        return {"nodes": ["kafka-1"]}

    def heal_all(self):
        self.calls.append("heal_all")


def wait_until(event: threading.Event) -> None:
    assert event.wait(5), "the schedule did not get that far"


@pytest.mark.parametrize("broken", [True, False])
def test_a_crashed_schedule_is_healed_then_raised_once(broken):
    nemesis = Nemesis(broken)
    schedule = ScriptedSchedule(nemesis, [Step(0.0, "kill", "random", None)]).start()
    if broken:
        wait_until(schedule.finished)  # a crash ends the workload phase at once
    else:
        time.sleep(0.3)
        assert not schedule.finished.is_set()
    if broken:
        with pytest.raises(ScheduleCrash, match="KeyError: .a bug in the schedule's own code"):
            schedule.stop_and_heal()
    else:
        schedule.stop_and_heal()
    assert nemesis.calls == ["kill", "heal_all"]
    schedule.stop_and_heal()  # raised once: the runner's own clean-up may call it again
    assert nemesis.calls == ["kill", "heal_all", "heal_all"]


def test_a_random_schedule_that_crashes_is_not_swallowed():
    nemesis = Nemesis(broken=True)
    schedule = RandomSchedule(nemesis, ["pause"], interval=0.05, seed=1).start()
    wait_until(schedule.finished)
    with pytest.raises(ScheduleCrash):
        schedule.stop_and_heal()
    assert nemesis.calls == ["pause", "heal_all"]


class Idle:
    """The run's client library, for stand-in clients that make no Kafka calls."""

    name = "idle"

    def died(self):
        return None


class Stepping:
    process = 0

    def __init__(self, *args):
        pass

    def step(self, rng):
        time.sleep(0.01)
        return "ok"

    def close(self):
        pass


@pytest.mark.parametrize("broken", [True, False])
def test_a_run_whose_schedule_crashed_fails_after_healing(tmp_path, monkeypatch, broken):
    monkeypatch.setattr(Runner, "_final_phase", lambda self, slot, targets: None)
    nemesis = Nemesis(broken)
    schedule = ScriptedSchedule(nemesis, [Step(0.2, "kill", "random", None)])
    with HistoryWriter(tmp_path / "h.jsonl") as history:
        ctx = RunContext(
            history=history,
            opts=WorkloadOptions(concurrency=2, time_limit=3, rate=100),
            bootstrap_servers="",
            client=Idle(),
        )
        started = time.monotonic()
        if broken:
            with pytest.raises(ScheduleCrash):
                Runner(ctx, faults=schedule, client_factory=Stepping).run()
        else:
            Runner(ctx, faults=schedule, client_factory=Stepping).run()
    elapsed = time.monotonic() - started
    assert nemesis.calls[:2] == ["kill", "heal_all"]
    assert (elapsed < 2.0) == broken, elapsed  # a crash ends the 3 s workload phase early


class Timed(Nemesis):
    """Records when each fault and heal was asked for, in seconds from `t0`."""

    def __init__(self):
        super().__init__(broken=False)
        self.t0, self.at = time.monotonic(), []

    def run(self, fault, target="random", shape="isolate"):
        self.at.append((fault, time.monotonic() - self.t0))
        return super().run(fault, target, shape)


@pytest.mark.parametrize("start, first", [(0.6, (0.55, 1.5)), (None, (0.0, 0.4))])
def test_a_random_schedules_first_fault_waits_its_start_and_the_rest_the_interval(start, first):
    nemesis = Timed()
    schedule = RandomSchedule(nemesis, ["pause"], interval=0.1, seed=1, start=start).start()
    deadline = time.monotonic() + 5
    while len(nemesis.at) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    schedule.stop_and_heal()
    (f1, t1), (h1, t2), (f2, t3) = nemesis.at[:3]
    assert (f1, h1, f2) == ("pause", "resume", "pause"), nemesis.at
    assert first[0] <= t1 < first[1], nemesis.at
    assert t3 - t2 < 0.4, nemesis.at  # quiet periods after the first are the interval's


@pytest.mark.parametrize(
    "faults, script, start, error",
    [
        ("kill", None, 15, None),
        ("kill", None, 0, None),
        ("kill", None, -1, "must be 0 or more"),
        (None, [{"at": 1, "fault": "pause"}], 15, "a script times its own steps"),
        (None, None, 15, "delays a random fault list"),
    ],
)
def test_a_nemesis_start_belongs_to_a_random_fault_list(faults, script, start, error):
    if error:
        with pytest.raises(UsageError, match=error):
            nemesis_plan(faults, 5, script, start)
    else:
        plan = nemesis_plan(faults, 5, script, start)
        assert plan.start == start and plan.describe()["start"] == start
        assert "start" not in nemesis_plan(faults, 5, script).describe()


def test_the_nemesis_and_its_random_schedule_draw_streams_of_their_own_from_one_seed():
    def draws(seed):
        targets = RealNemesis(None, seed=seed).rng  # type: ignore[arg-type] (drawing needs no cluster)
        schedule = RandomSchedule(Nemesis(broken=False), ["kill"], 1.0, seed=seed).rng
        return [targets.random() for _ in range(8)], [schedule.random() for _ in range(8)]

    targets, schedule = draws(7)
    assert targets != schedule  # one seed, two streams: a choice of one does not mirror the other's
    assert draws(7) == (targets, schedule)  # the same seed, the same run
    assert draws(8) != (targets, schedule)
    assert draws(None) != draws(None)  # no seed: one drawn each time


class Options(Nemesis):
    """Records each fault with the options it was asked with."""

    def __init__(self):
        super().__init__(broken=False)
        self.asked: list[tuple[str, dict]] = []

    def run(self, fault, target="random", **options):
        self.asked.append((fault, options))
        return {"nodes": ["kafka-1"]}


def test_a_random_schedule_asks_a_partition_with_a_drawn_shape_and_its_heal_with_none():
    nemesis = Options()
    schedule = RandomSchedule(nemesis, ["partition", "kill"], interval=0.02, seed=3).start()
    deadline = time.monotonic() + 5
    while len(nemesis.asked) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    schedule.stop_and_heal()
    asked = dict(nemesis.asked[:8:2])  # each fault, then its heal
    assert set(asked) == {"partition", "kill"}, nemesis.asked
    assert set(asked["partition"]) == {"shape"} and asked["partition"]["shape"] in RANDOM_SHAPES
    assert asked["kill"] == {}
    assert all(options == {} for _, options in nemesis.asked[1:8:2]), nemesis.asked


class Aimed(Options):
    """Records each fault's target too; its cluster's controllers are dedicated or combined."""

    def __init__(self, dedicated: bool):
        super().__init__()
        spec = SimpleNamespace(is_broker=not dedicated)
        self.cluster = SimpleNamespace(controllers=[SimpleNamespace(spec=spec)] * 3)
        self.aimed: list[tuple[str, str]] = []

    def run(self, fault, target="random", **options):
        self.aimed.append((fault, target))
        return super().run(fault, target, **options)


def asked_of(pool: str, dedicated: bool, faults: list[str], count: int = 24) -> Aimed:
    nemesis = Aimed(dedicated)
    schedule = RandomSchedule(nemesis, faults, interval=0.01, seed=5, targets=pool).start()
    deadline = time.monotonic() + 10
    while len(nemesis.asked) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    schedule.stop_and_heal()
    return nemesis


@pytest.mark.parametrize(
    ("pool", "target"), [("any", "random"), ("brokers", "random-broker"), ("controllers", "random-controller")]
)
def test_a_pool_aims_the_entries_that_name_no_target(pool, target):
    nemesis = asked_of(pool, True, ["kill", "pause@controller"], count=8)
    faults = [(f, t) for f, t in nemesis.aimed if f in ("kill", "pause")]
    assert {t for f, t in faults if f == "kill"} == {target}
    assert {t for f, t in faults if f == "pause"} == {"controller"}  # a named target stays


@pytest.mark.parametrize("dedicated", [True, False])
def test_the_controllers_pool_aims_partitions_at_the_quorum(dedicated):
    """With dedicated controllers a quorum-leader cut is by address, on combined nodes by port."""
    drawn = {o["shape"] for f, o in asked_of("controllers", dedicated, ["partition"]).asked if f == "partition"}
    assert drawn == {"isolate", "quorum-leader"}
    drawn = {o["shape"] for f, o in asked_of("any", dedicated, ["partition"]).asked if f == "partition"}
    assert "quorum-leader" not in drawn and len(drawn) > 1
    named = {o["shape"] for f, o in asked_of("controllers", dedicated, ["partition@kafka-1"]).asked if f == "partition"}
    assert named <= set(RANDOM_SHAPES) and len(named) > 1  # a named target keeps the fault's own draw


def test_an_unknown_pool_is_bad_input():
    with pytest.raises(UsageError, match="unknown nemesis target pool 'voters'"):
        RandomSchedule(Aimed(True), ["kill"], interval=1, targets="voters")


def test_a_target_pool_belongs_to_a_random_fault_list():
    assert nemesis_plan("kill", 5, None, targets="controllers").describe()["targets"] == "controllers"
    assert "targets" not in nemesis_plan("kill", 5, None).describe()  # the default: config.json as it was
    with pytest.raises(UsageError, match="picks the targets of a random fault list"):
        nemesis_plan(None, 5, [{"at": 1, "fault": "pause"}], targets="brokers")
    with pytest.raises(UsageError, match="unknown nemesis target pool 'all'"):
        nemesis_plan("kill", 5, None, targets="all")
