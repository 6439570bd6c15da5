import threading

import pytest

from kafka_chaos.nemesis.targets import TargetError
from kafka_chaos.scenarios.script import Script, StepTimeout


def script() -> Script:
    return Script(cluster=None, nemesis=None, stop=threading.Event(), topic="chaos")


def test_a_wait_takes_a_quorum_without_a_leader_as_not_yet():
    answers = iter([TargetError("controller: the quorum has no leader right now"), False, True])

    def condition():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    s = script()
    s.wait_for("a leader", condition, timeout_s=5, every_s=0.01)
    assert s.steps[-1]["step"].startswith("a leader (after")


def test_a_wait_that_never_comes_true_names_what_it_waited_for():
    s = script()
    with pytest.raises(StepTimeout, match="a leader: not within 0.05 s"):
        s.wait_for("a leader", lambda: False, timeout_s=0.05, every_s=0.01)
    assert s.steps[-1]["step"] == "gave up waiting: a leader"


def test_a_wait_lets_any_other_error_through():
    def condition():
        raise ValueError("a bug in the script")

    with pytest.raises(ValueError):
        script().wait_for("a leader", condition, timeout_s=5, every_s=0.01)


def test_partitions_are_only_ever_added_to_a_topic_whose_count_the_script_knows():
    """The script grows the workload's keys once Kafka has the partitions: without the workload's
    options, or asked for no more than the topic has, it asks Kafka for nothing."""
    from kafka_chaos.workloads.options import WorkloadOptions

    with pytest.raises(StepTimeout, match="add-partitions to 6: the run's topic has unknown partitions"):
        script().add_partitions(6)
    s = Script(cluster=None, nemesis=None, stop=threading.Event(), topic="chaos", workload=WorkloadOptions(keys=6))
    with pytest.raises(StepTimeout, match="add-partitions to 6: the run's topic has 6 partitions"):
        s.add_partitions(6)
    assert s.workload.keys == 6 and s.steps == []
