"""What each caller of a run's result shows of a verdict that is unknown because the control
plane could not be fully checked (runs/result.py, runs/reproduce.py): the verdict line, the JUnit
properties, the version table's row and whether a scenario's run is as expected. Pure logic: the
check's result is made by hand, as results.json holds it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kafka_chaos.checkers.result import CONTROL_PLANE_INCOMPLETE, NOTHING_PROVED, CheckResult
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.runs.reproduce import Row, Target, markdown
from kafka_chaos.runs.result import RunResult
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.scenarios.base import SAFE
from kafka_chaos.scenarios.registry import SCENARIOS

WHY = "metadata not decoded: CalledProcessError: exit status 1"
METADATA_RULES = ("leader-not-in-isr", "partition-epoch-regression", "inactive-leader", "fenced-in-isr")


def control_plane(skipped: tuple[str, ...]) -> dict:
    return {
        "checked": True,
        "expected": True,
        "rules": 11,
        "rules_checked": 11 - len(skipped),
        "not_checked": {name: WHY for name in skipped},
    }


def result(valid, reason=None, skipped=METADATA_RULES, shows=("quorum-split-brain",)) -> RunResult:
    check = CheckResult(valid, {}, {}, control_plane=control_plane(skipped), unknown_reason=reason)
    scenario = dataclasses.replace(SCENARIOS["kafka-15489"], name="s", expect=lambda v, mv: SAFE, shows=shows)
    spec = RunSpec(ClusterSpec("3.7.2"), scenario=scenario)
    return RunResult(Path("/runs/r"), spec, check=check, scenario={"outcome": "completed", "error": None})


def test_the_verdict_line_and_properties_say_which_rules_ran():
    r = result("unknown", CONTROL_PLANE_INCOMPLETE)
    assert r.unknown_reason == CONTROL_PLANE_INCOMPLETE and r.exit_code == 4
    assert r.control_plane_status == f"7 of 11 rules, {WHY}"
    assert r.verdict() == f"UNKNOWN: control plane 7 of 11 rules, {WHY}"
    props = dict(r.properties())
    assert props["kafka_chaos.valid"] == "unknown" and props["kafka_chaos.unknown_reason"] == CONTROL_PLANE_INCOMPLETE
    assert props["kafka_chaos.exit_code"] == "4" and props["kafka_chaos.control_plane"] == f"7 of 11 rules, {WHY}"
    row = r.table_row()
    assert (row["verdict"], row["unknown_reason"]) == ("unknown", CONTROL_PLANE_INCOMPLETE)
    nothing = result("unknown", NOTHING_PROVED, skipped=())
    assert nothing.verdict() == "UNKNOWN: nothing could be proved" and nothing.exit_code == 3
    valid = result(True, skipped=())
    assert (valid.verdict(), valid.exit_code, valid.unknown_reason) == ("VALID", 0, None)
    assert valid.control_plane_status == "ok"
    assert dict(valid.properties())["kafka_chaos.unknown_reason"] == ""


def test_a_run_that_could_not_check_its_scenarios_rule_is_not_as_expected():
    unchecked = result("unknown", CONTROL_PLANE_INCOMPLETE, skipped=("quorum-split-brain",))
    assert unchecked.unchecked_shows == ["quorum-split-brain"] and not unchecked.as_expected
    other = result("unknown", CONTROL_PLANE_INCOMPLETE)  # the scenario's rule ran and found nothing
    assert other.unchecked_shows == [] and other.as_expected
    row = Row(Target("3.7.2"), SAFE, [unchecked, other])
    assert row.verdicts() == "2 unknown (control plane incomplete)" and not row.as_expected
    table = markdown(SCENARIOS["kafka-15489"], [row])
    assert "Runs whose control plane could not be fully checked:" in table
    assert f"- 3.7.2, run 1: control plane 10 of 11 rules, {WHY} (not checked: quorum-split-brain)" in table
