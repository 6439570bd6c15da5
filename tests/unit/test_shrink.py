"""Shrinking a finding on a synthetic oracle, and the rules of what a configuration promises."""

from __future__ import annotations

import json
import random

import pytest

from kafka_chaos.checkers.measures.promise import Applied, applied_faults, beyond_promise
from kafka_chaos.nemesis.schedule import Step, load_script
from kafka_chaos.runs.shrink import role_of, shrink, write_script

LOST = "lost-write"


def _roles(step: Step) -> set[str]:
    """The oracle's own reading of a target: the name before the key, each part of a compound."""
    return {part.split(":")[0] for part in step.target.split("+")}


def _overlap(a: Step, b: Step) -> bool:
    return a.at < b.at + (b.hold or 0) and b.at < a.at + (a.hold or 0)


def oracle(seed: int, rate: float = 0.8):
    """Finds a lost write iff two steps overlap in time on a role they share, `rate` of the time;
    now and then an anomaly shrinking is not after, whatever the schedule."""
    rng = random.Random(seed)
    calls: list[list[Step]] = []

    def trial(steps: list[Step]) -> set[str]:
        calls.append(steps)
        found = set()
        bug = any(_roles(a) & _roles(b) and _overlap(a, b) for i, a in enumerate(steps) for b in steps[i + 1 :])
        if bug and rng.random() < rate:
            found.add(LOST)
        if rng.random() < 0.1:
            found.add("duplicate")
        return found

    trial.calls = calls  # type: ignore[attr-defined]
    return trial


SCHEDULE = [
    Step(5, "kill", "random-broker", 5),
    Step(10, "partition", "leader:chaos/0+controller", 40, {"shape": "isolate"}),
    Step(60, "pause", "controller", 5),
    Step(12, "kill", "leader:chaos/0", 16),
    Step(20, "kill", "follower:chaos/0", 10),
    Step(80, "stall", "follower:chaos/0", 10),
    Step(90, "pause", "random-controller", 5),
    Step(100, "wipe", "follower:chaos/0"),
]
NEEDED = [
    Step(10, "partition", "leader:chaos/0", 2.5, {"shape": "isolate"}),
    Step(12, "kill", "leader:chaos/0", 2.0),
]


def test_shrinking_keeps_exactly_the_overlap_that_finds_the_loss():
    trial = oracle(seed=7)
    shrunk = shrink(SCHEDULE, trial, anomalies={LOST})
    assert shrunk.found and not shrunk.exhausted
    assert shrunk.steps == NEEDED  # the two overlapping faults, holds halved, the compound target narrowed
    assert shrunk.reproduced >= 3 and shrunk.tried <= 5
    assert shrunk.trials == len(trial.calls)
    assert all(s.hold < o.hold for s, o in zip(shrunk.steps, (SCHEDULE[1], SCHEDULE[3]), strict=True))
    assert shrunk.original == SCHEDULE


def test_shrinking_is_deterministic():
    first, second = (shrink(SCHEDULE, oracle(seed=11), anomalies={LOST}) for _ in range(2))
    assert first.steps == second.steps and first.trials == second.trials and first.log == second.log


def test_the_first_trial_names_the_anomalies_when_none_are_given():
    shrunk = shrink(SCHEDULE, oracle(seed=7, rate=1.0))
    assert LOST in shrunk.anomalies
    assert [s.fault for s in shrunk.steps] == ["partition", "kill"]


def test_a_trial_budget_is_kept_and_the_best_so_far_returned():
    trial = oracle(seed=7)
    shrunk = shrink(SCHEDULE, trial, anomalies={LOST}, budget=12)
    assert shrunk.exhausted and shrunk.trials == len(trial.calls) <= 12
    assert len(shrunk.steps) < len(SCHEDULE)
    # What it returns still has the bug: two steps overlapping on a shared role.
    steps = shrunk.steps
    assert any(_roles(a) & _roles(b) and _overlap(a, b) for i, a in enumerate(steps) for b in steps[i + 1 :])


def test_a_time_budget_begins_no_trial_that_would_pass_it():
    now = [0.0]

    def clock() -> float:
        return now[0]

    inner = oracle(seed=7)

    def slow(steps: list[Step]) -> set[str]:
        now[0] += 60.0  # each trial a minute
        return inner(steps)

    shrunk = shrink(SCHEDULE, slow, anomalies={LOST}, seconds=600, clock=clock)
    assert shrunk.exhausted and now[0] <= 600 and shrunk.trials == 10


def test_a_schedule_that_does_not_reproduce_is_given_back_after_as_few_trials_as_can_tell():
    trial = oracle(seed=1, rate=0.0)
    shrunk = shrink(SCHEDULE, trial, anomalies={LOST})
    assert not shrunk.found and shrunk.steps == SCHEDULE
    assert shrunk.trials == 3  # 3 misses of 5: 3 of 5 can no longer be reached


def test_need_cannot_exceed_runs():
    with pytest.raises(ValueError):
        shrink(SCHEDULE, oracle(seed=1), runs=2, need=3)


def test_roles_are_read_from_targets():
    assert role_of("leader:chaos/0")[0].name == "leader" and role_of("leader:chaos/0")[1] == "chaos/0"
    assert role_of("random-controller")[0].name == "any-controller"
    assert role_of("kafka-2") == (None, None)


def test_the_script_is_the_step_format(tmp_path):
    path = write_script(NEEDED, tmp_path / "finding" / "script.json")
    assert json.loads(path.read_text()) == [
        {"at": 10, "fault": "partition", "target": "leader:chaos/0", "shape": "isolate", "for": 2.5},
        {"at": 12, "fault": "kill", "target": "leader:chaos/0", "for": 2.0},
    ]
    apart = [Step(5, "kill", "leader:chaos/0", 5.0), Step(20, "wipe", "follower:chaos/0")]
    assert load_script(write_script(apart, tmp_path / "apart.json")) == apart


# What a configuration promises to survive: each rule, triggered, and a near twin that is not.

SAFE = {
    "shape": {"brokers": 3, "controllers": 0},
    "workload": {"acks": "all", "replication_factor": 3, "min_insync_replicas": 2},
    "broker_config": {"replica.lag.time.max.ms": "3000"},
}


def _with(**changes) -> dict:
    config = json.loads(json.dumps(SAFE))
    for section, values in changes.items():
        config[section].update(values)
    return config


def test_one_power_loss_is_within_the_promise_even_as_the_only_isr_member():
    # KIP-966's last replica standing: the follower out of the ISR, the leader loses its tail.
    applied = [Applied("partition", ("kafka-2",), 10, 10.1, "cut"), Applied("lose-unflushed", ("kafka-1",), 15, 18)]
    assert beyond_promise(applied, SAFE) == []


def test_power_losses_on_min_isr_replicas_at_once_are_beyond_it():
    at_once = [Applied("lose-unflushed", ("kafka-1",), 15, 18), Applied("lose-unflushed", ("kafka-2",), 19, 22)]
    (reason,) = beyond_promise(at_once, SAFE)
    assert "kafka-1, kafka-2" in reason and "min.insync.replicas=2" in reason
    # The second 5 s later: the first was back and had replica.lag.time.max.ms to catch up.
    apart = [Applied("lose-unflushed", ("kafka-1",), 15, 18), Applied("lose-unflushed", ("kafka-2",), 22, 25)]
    assert beyond_promise(apart, SAFE) == []


def test_min_insync_replicas_of_one_promises_no_power_loss():
    one = [Applied("lose-unflushed", ("kafka-1",), 15, 18, "restarted")]
    assert beyond_promise(one, _with(workload={"min_insync_replicas": 1})) != []
    assert beyond_promise(one, SAFE) == []


def test_fsync_on_every_message_survives_power_loss_but_not_a_wipe():
    both = [Applied("lose-unflushed", ("kafka-1",), 15, 18), Applied("lose-unflushed", ("kafka-2",), 16, 20)]
    assert beyond_promise(both, _with(broker_config={"log.flush.interval.messages": "1"})) == []
    wipes = [Applied("wipe", ("kafka-1",), 15, 18, "wiped"), Applied("wipe", ("kafka-2",), 16, 20, "wiped")]
    assert beyond_promise(wipes, _with(broker_config={"log.flush.interval.messages": "1"})) != []


def test_a_majority_of_voters_wiped_at_once_is_beyond_kraft():
    dedicated = _with(shape={"controllers": 3, "brokers": 3})
    two = [Applied("wipe", ("controller-1",), 10, 14, "wiped"), Applied("wipe", ("controller-2",), 12, 16, "wiped")]
    (reason,) = beyond_promise(two, dedicated)
    assert "2 of 3 KRaft voters" in reason
    one = [Applied("wipe", ("controller-1",), 10, 14, "wiped"), Applied("kill", ("controller-2",), 12, 12.1, "down")]
    assert beyond_promise(one, dedicated) == []  # KAFKA-14077's single lost voter: a Kafka bug


def test_acks_one_promises_nothing_across_a_failover():
    kill = [Applied("kill", ("kafka-1",), 10, 10.2, "down")]
    (reason,) = beyond_promise(kill, _with(workload={"acks": "1"}))
    assert "acks=1" in reason
    assert beyond_promise(kill, SAFE) == []


def test_unclean_election_promises_nothing_across_a_failover():
    kill = [Applied("kill", ("kafka-1",), 10, 10.2, "down")]
    assert beyond_promise(kill, _with(broker_config={"unclean.leader.election.enable": "true"})) != []
    assert beyond_promise(kill, _with(broker_config={"unclean.leader.election.enable": "false"})) == []
    forced = [*kill, Applied("elect-unclean", (), 12, 12.5)]
    (reason,) = beyond_promise(forced, _with(broker_config={"unclean.leader.election.enable": "false"}))
    assert "forced" in reason


def test_faults_are_read_from_the_history():
    def op(index, kind, f, t, **value):
        return {"index": index, "time": int(t * 1e9), "process": "nemesis", "type": kind, "f": f, "value": value}

    history = [
        op(0, "invoke", "lose-unflushed", 15, target="leader:chaos/0"),
        {"index": 1, "time": 16_000_000_000, "process": 0, "type": "invoke", "f": "send", "value": []},
        op(2, "ok", "lose-unflushed", 18, target="leader:chaos/0", nodes=["kafka-1"], effect="restarted"),
        op(3, "invoke", "kill", 19, target="random", undone_by="start"),
        op(4, "ok", "kill", 19.1, target="random", undone_by="start", nodes=["kafka-2"], effect="down"),
        op(5, "invoke", "start", 25, target="kafka-2", heals=["kill", "stop"]),
        op(6, "ok", "start", 27, target="kafka-2", heals=["kill", "stop"], nodes=["kafka-2"], effect="started"),
        op(7, "invoke", "wipe", 30, target="follower:chaos/0"),
        op(8, "fail", "wipe", 30.1, target="follower:chaos/0"),
        op(9, "invoke", "exit", 31, target="kafka-3", undone_by="start"),
        op(10, "ok", "exit", 31.2, target="kafka-3", undone_by="start", nodes=["kafka-3"], effect="exited"),
    ]
    assert applied_faults(history) == [
        Applied("lose-unflushed", ("kafka-1",), 15, 18, "restarted"),
        Applied("kill", ("kafka-2",), 19, 19.1, "down"),
    ]  # kafka-3's own exit is no applied fault
    killed = [e if e["f"] != "exit" else {**e, "f": "kill", "value": {**e["value"], "effect": "down"}} for e in history]
    assert applied_faults(killed)[-1] == Applied("kill", ("kafka-3",), 31, 31.2, "down")


def test_reproduce_and_bisect_take_the_script_as_a_scenario(tmp_path):
    from kafka_chaos.frontends.cli import build_parser
    from kafka_chaos.harness.config import FAULT_DETECTION
    from kafka_chaos.harness.errors import UsageError
    from kafka_chaos.runs.reproduce import scenario_of

    apart = [Step(5, "kill", "leader:chaos/0", 5.0), Step(12, "wipe", "follower:chaos/0")]
    script = write_script(apart, tmp_path / "finding.json")
    bare = scenario_of(str(script))
    assert bare.name == "finding" and bare.brokers == 3 and bare.controllers == 0
    assert bare.broker_config == FAULT_DETECTION and bare.shows == () and bare.expectation(None) == "loss"
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(
        json.dumps({**_with(shape={"controllers": 3, "brokers": 3}), "quorum": "static", "disk": "page-cache"})
    )
    like = scenario_of(str(script), run, ("lost-write",))
    assert (like.controllers, like.brokers, like.shows) == (3, 3, ("lost-write",))
    assert like.workload["min_insync_replicas"] == 2 and like.workload["time_limit"] >= 12 + 10
    with pytest.raises(UsageError):
        scenario_of("kafka-14139", run)
    script_flags = ["--like", str(run), "--shows", "lost-write"]
    for command in (
        ["reproduce", str(script), "--kafka", "3.9.1"],
        ["bisect", str(script), "--good", "4.0.0", "--bad", "3.9.1"],
    ):
        args = build_parser().parse_args([*command, *script_flags])
        assert args.like == run and args.shows == "lost-write"


def test_confirming_runs_the_final_schedule_all_its_runs():
    shrunk = shrink(SCHEDULE, oracle(seed=7), anomalies={LOST}, confirm=True)
    assert shrunk.steps == NEEDED and shrunk.tried == 5 and 3 <= shrunk.reproduced <= 5


def test_a_script_keeps_its_steps_guards_bindings_and_named_holds(tmp_path):
    from kafka_chaos.nemesis.schedule import load_script

    played = [
        Step(6, "partition", "leader:chaos/0", None, {"shape": "replication"}, "next", bind="leader"),
        Step(7, "lose-unflushed", "$leader", when="isr:chaos/0 <= 1", within=20.0),
    ]
    assert load_script(write_script(played, tmp_path / "finding.json")) == played
