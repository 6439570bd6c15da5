"""The verdict when the control plane could not be fully checked (../shared/anomalies.md, "Verdict",
step 2, 2026-11-27): a run that expected its control-plane evidence (config.json's `control_plane`,
as `kafka-chaos run` writes it) and could not check every rule is `unknown`, with its own exit code
and the rules that ran named; errors still win; a bare history, a run that turned the control plane
off and a run on a shared cluster keep their verdicts. On hand-made run directories
(tests/checkers/cp_builder.py), made incomplete by removing a file or by the run's own gaps.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kafka_chaos.checkers.anomalies import CONTROL_NAMES
from kafka_chaos.checkers.check import check_history, format_summary
from kafka_chaos.checkers.result import CONTROL_PLANE_INCOMPLETE, EXIT_CODES, NOTHING_PROVED, CheckResult
from kafka_chaos.history.run_dir import RunDir
from tests.checkers.cp_builder import Run
from tests.checkers.histories import lost_write

pytestmark = pytest.mark.spark

RULES = len(CONTROL_NAMES)


def made(tmp_path: Path, name: str, control_plane: bool | None = True, **config) -> RunDir:
    """A healthy hand-made run directory whose config.json says what `kafka-chaos run` says of its
    control plane (None: says nothing, as a hand-made or an older run)."""
    run = RunDir(Run().write(tmp_path / name).parent)
    data = json.loads(run.config.read_text())
    if control_plane is not None:
        data["control_plane"] = control_plane
    run.config.write_text(json.dumps({**data, **config}))
    return run


def edit_history(run: RunDir, edit) -> None:
    events = [json.loads(line) for line in run.history.read_text().splitlines()]
    run.history.write_text("".join(json.dumps(edit(e)) + "\n" for e in events))


def drop_a_read_value(event: dict) -> dict:
    """The final poll reads chaos/0 without its second value: a lost write (a data-plane error)."""
    if event["f"] == "poll" and event["type"] == "ok":
        (_, read), *rest = event["value"]
        read = {**read, "chaos/0": [r for r in read["chaos/0"] if r[0] != 1]}
        event = {**event, "value": [["poll", read], *rest]}
    return event


def fail_the_poll(event: dict) -> dict:
    """No ok poll: nothing could be proved."""
    return {**event, "type": "fail"} if event["f"] == "poll" and event["type"] == "ok" else event


def checked(spark_session, run: RunDir) -> CheckResult:
    return check_history(run.history, report=True, session=spark_session)


def test_a_complete_run_that_expected_its_control_plane_is_valid(spark_session, tmp_path):
    result = checked(spark_session, made(tmp_path, "run"))
    assert result.valid is True and result.unknown_reason is None and result.exit_code == 0
    cp = result.control_plane
    assert (cp["expected"], cp["rules"], cp["rules_checked"], cp["not_checked"]) == (True, RULES, RULES, {}), cp
    assert result.control_plane_status == "ok" and "control plane: ok" in format_summary(result)
    assert json.loads(result.results_path.read_text())["unknown_reason"] is None


def test_a_rule_not_checked_makes_the_verdict_unknown_with_its_own_exit_code(spark_session, tmp_path):
    run = made(tmp_path, "run")
    run.quorum_replication.unlink()
    result = checked(spark_session, run)
    skipped = result.control_plane["not_checked"]
    assert skipped and all(why for why in skipped.values()), skipped
    assert result.anomalies == {}, result.anomalies
    assert result.valid == "unknown" and result.unknown_reason == CONTROL_PLANE_INCOMPLETE
    assert result.exit_code == EXIT_CODES[CONTROL_PLANE_INCOMPLETE] == 4
    assert result.control_plane["rules_checked"] == RULES - len(skipped)
    status = f"{RULES - len(skipped)} of {RULES} rules, "
    assert result.control_plane_status.startswith(status) and "quorum-replication" in result.control_plane_status
    summary = format_summary(result)
    assert "verdict: UNKNOWN: the control plane could not be fully checked" in summary
    assert f"control plane: {status}" in summary
    brief = result.brief()
    assert (brief["valid"], brief["unknown_reason"], brief["exit_code"]) == ("unknown", CONTROL_PLANE_INCOMPLETE, 4)
    assert brief["control_plane"].startswith(status)
    html = result.report_path.read_text()
    assert "the control plane could not be fully checked" in html and status in html
    assert all(name in html for name in skipped)
    again = CheckResult.load(result.results_path)  # what `reproduce`, the trend and a script read back
    assert (again.valid, again.unknown_reason, again.exit_code) == ("unknown", CONTROL_PLANE_INCOMPLETE, 4)


def test_the_runs_own_gaps_make_the_verdict_unknown_and_say_why(spark_session, tmp_path):
    run = made(tmp_path, "run")
    why = "metadata not decoded: CalledProcessError: Command 'dump' returned non-zero exit status 1."
    run.control_plane_gaps.write_text(json.dumps({"metadata": why}))
    result = checked(spark_session, run)
    assert result.valid == "unknown" and result.exit_code == 4
    assert why in result.control_plane["not_checked"].values(), result.control_plane["not_checked"]
    assert why in result.control_plane_status


def test_a_gaps_file_that_cannot_be_read_is_a_gap_over_the_whole_run(spark_session, tmp_path):
    """anomalies.md, "Control plane" (amended 2026-12-06): every rule that reads the sampled or
    decoded evidence is not checked, and says why. Near miss: a readable gaps.json of one kind."""
    run = made(tmp_path, "run")
    run.control_plane_gaps.write_text('{"views": "the view sampler exi')  # cut short
    result = checked(spark_session, run)
    skipped = result.control_plane["not_checked"]
    assert set(skipped) == set(CONTROL_NAMES), skipped  # each of the eleven reads one of the three kinds
    assert all(why.startswith("gaps.json could not be read") for why in skipped.values()), skipped
    assert result.valid == "unknown" and result.unknown_reason == CONTROL_PLANE_INCOMPLETE
    near = made(tmp_path, "near")
    near.control_plane_gaps.write_text(json.dumps({"replication": "the DescribeQuorum sampler did not stop"}))
    result = checked(spark_session, near)
    assert result.valid == "unknown" and 0 < len(result.control_plane["not_checked"]) < RULES


def edit_lines(path: Path, edit) -> None:
    """`path`'s JSON lines, each through `edit` (which returns the lines to write in its place)."""
    out = [text for line in path.read_text().splitlines() for text in edit(json.loads(line))]
    path.write_text("".join(text + "\n" for text in out))


def unreadable_view(view: dict) -> dict:
    return {**view, "leader_id": None, "leader_epoch": None, "voted_id": None, "error": "no quorum-state file"}


@pytest.mark.parametrize("readable", [0, 1], ids=["none", "one"])
def test_a_node_none_of_whose_views_could_be_read_is_a_views_gap(spark_session, tmp_path, readable):
    """kafka-2's quorum-state never read: the views rules would see the quorum without it. Near
    miss: one of its views read."""
    run = made(tmp_path, "run")
    seen = []

    def edit(view: dict) -> list[str]:
        if view["node"] == "kafka-2":
            seen.append(view)
            view = view if len(seen) <= readable else unreadable_view(view)
        return [json.dumps(view)]

    edit_lines(run.quorum_views, edit)
    result = checked(spark_session, run)
    skipped = result.control_plane["not_checked"]
    if readable:
        assert skipped == {} and result.valid is True, skipped
        return
    why = "no readable quorum view of kafka-2 (its last: no quorum-state file)"
    assert {"quorum-split-brain", "quorum-epoch-regression"} <= set(skipped) and why in skipped.values(), skipped
    assert result.valid == "unknown" and result.unknown_reason == CONTROL_PLANE_INCOMPLETE


def insert_lines(path: Path, at: int, lines: list[str]) -> None:
    text = path.read_text().splitlines(keepends=True)
    path.write_text("".join([*text[:at], *(line + "\n" for line in lines), *text[at:]]))


@pytest.mark.parametrize(
    ("where", "lines", "why"),
    [
        (
            "views",
            ['{"time": 5, "node": "kaf', '{"node": "kafka-1", "error": null}'],
            "quorum-views.jsonl: 2 malformed lines dropped",
        ),
        ("replication", ["[1, 2]"], "quorum-replication.jsonl: 1 malformed line dropped"),
        ("metadata", ["not json"], "kafka-3.jsonl: 1 malformed line dropped"),
    ],
)
def test_malformed_evidence_lines_are_a_gap_that_says_how_many(spark_session, tmp_path, where, lines, why):
    """Lines dropped unsaid would be a rule checked on less than it read: each kind that lost some
    is a gap, per file, with the count (a line cut short; one without its time; not an object; not
    JSON). Near miss: test_a_truncated_last_line_is_tolerated."""
    run = made(tmp_path, "run")
    path = {"views": run.quorum_views, "replication": run.quorum_replication}.get(where, run.metadata_log("kafka-3"))
    insert_lines(path, 1, lines)
    result = checked(spark_session, run)
    said = result.control_plane["not_checked"].values()
    assert any(why in w for w in said), (why, said)
    assert result.valid == "unknown" and result.unknown_reason == CONTROL_PLANE_INCOMPLETE


def test_a_truncated_last_line_is_tolerated(spark_session, tmp_path):
    """The near miss: each file ends in a line cut short (a run that died half way), as
    history-format.md tolerates; nothing is missing, the run is valid."""
    run = made(tmp_path, "run")
    for path in (run.quorum_views, run.quorum_replication, run.metadata_log("kafka-3")):
        text = path.read_text()
        path.write_text(text + text.splitlines()[-1][:17])
    result = checked(spark_session, run)
    assert result.control_plane["not_checked"] == {} and result.valid is True, result.control_plane


def test_errors_still_win_over_a_rule_not_checked(spark_session, tmp_path):
    run = made(tmp_path, "run")
    edit_history(run, drop_a_read_value)
    run.quorum_replication.unlink()
    result = checked(spark_session, run)
    assert result.control_plane["not_checked"]
    assert result.valid is False and result.unknown_reason is None and result.exit_code == 1
    assert result.error_counts["lost-write"] == 1


def test_nothing_proved_keeps_its_exit_code_when_a_rule_was_not_checked_too(spark_session, tmp_path):
    run = made(tmp_path, "run")
    edit_history(run, fail_the_poll)
    run.quorum_replication.unlink()
    result = checked(spark_session, run)
    assert result.control_plane["not_checked"]
    assert result.valid == "unknown" and result.unknown_reason == NOTHING_PROVED and result.exit_code == 3


def test_evidence_absent_though_expected_is_unknown_with_every_rule_not_checked(spark_session, tmp_path):
    run = made(tmp_path, "run")
    shutil.rmtree(run.control_plane)
    result = checked(spark_session, run)
    cp = result.control_plane
    assert cp["checked"] is False and cp["expected"] is True and cp["rules_checked"] == 0
    assert set(cp["not_checked"]) == set(CONTROL_NAMES)
    assert result.valid == "unknown" and result.exit_code == 4
    assert result.control_plane_status == f"0 of {RULES} rules, no control-plane evidence in the run directory"


def test_a_run_that_turned_the_control_plane_off_keeps_its_verdict(spark_session, tmp_path):
    run = made(tmp_path, "run", control_plane=False)
    shutil.rmtree(run.control_plane)
    result = checked(spark_session, run)
    assert result.valid is True and result.exit_code == 0
    assert result.control_plane == {"checked": False, "why": "turned off"}
    assert "control plane: not checked (turned off)" in format_summary(result)


def test_a_run_on_a_shared_cluster_keeps_its_verdict(spark_session, tmp_path):
    run = made(tmp_path, "run", control_plane=False, cluster_run_id="c0ffee")
    shutil.rmtree(run.control_plane)
    result = checked(spark_session, run)
    assert result.valid is True and result.exit_code == 0
    assert result.control_plane_status == "not checked (a run on a shared cluster takes none)"


def test_a_run_that_turned_its_evidence_off_is_not_made_unknown_by_what_is_left(spark_session, tmp_path):
    """Evidence there but turned off by the user: what could not be checked is said, the verdict is
    as before."""
    run = made(tmp_path, "run", control_plane=False)
    run.quorum_replication.unlink()
    result = checked(spark_session, run)
    assert result.control_plane["not_checked"] and result.control_plane["expected"] is False
    assert result.valid is True and result.exit_code == 0
    assert f"of {RULES} rules" in result.control_plane_status


def unreadable_config(run: RunDir) -> None:
    """config.json cut short: not JSON, read as the empty config."""
    run.config.write_text(run.config.read_text()[:40])


@pytest.mark.parametrize("config", ["silent", "unreadable"])
def test_evidence_there_is_expected_whatever_config_json_says_of_it(spark_session, tmp_path, config):
    """The contract (amended 2026-12-06): evidence is expected when the run directory holds any of
    it; a silent or unreadable config.json does not make what is missing unexpected. Near miss: the
    same run with its evidence whole is valid."""
    whole, short = made(tmp_path, "whole", control_plane=None), made(tmp_path, "short", control_plane=None)
    if config == "unreadable":
        unreadable_config(whole)
        unreadable_config(short)
    short.quorum_replication.unlink()
    result = checked(spark_session, short)
    assert result.control_plane["expected"] is True and result.control_plane["not_checked"]
    assert result.valid == "unknown" and result.unknown_reason == CONTROL_PLANE_INCOMPLETE
    near = checked(spark_session, whole)
    assert near.control_plane["expected"] is True and near.control_plane["not_checked"] == {}
    assert near.valid is True and near.exit_code == 0


def test_a_bare_history_keeps_its_verdict(check):
    good, bad = check(lost_write(False)), check(lost_write(True))
    assert (good.valid, good.exit_code, bad.valid, bad.exit_code) == (True, 0, False, 1)
    assert good.control_plane_status.startswith("not checked")


def test_a_result_written_before_the_reason_was_kept_loads_as_nothing_proved(tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"valid": "unknown", "anomalies": {}, "stats": {}, "history": None}))
    old = CheckResult.load(results)
    assert (old.valid, old.unknown_reason, old.exit_code) == ("unknown", NOTHING_PROVED, 3)


def test_check_and_its_json_exit_4_and_say_why(spark_session, tmp_path, capsys):
    from kafka_chaos.frontends.cli import main

    run = made(tmp_path, "run")
    run.quorum_replication.unlink()
    assert main(["check", str(run.path), "--no-report"]) == 4
    assert "verdict: UNKNOWN: the control plane could not be fully checked" in capsys.readouterr().out
    assert main(["check", str(run.path), "--no-report", "--json"]) == 4
    brief = json.loads(capsys.readouterr().out)
    assert (brief["valid"], brief["unknown_reason"], brief["exit_code"]) == ("unknown", CONTROL_PLANE_INCOMPLETE, 4)
    assert brief["control_plane"] == CheckResult.load(run.results).control_plane_status
    assert f" of {RULES} rules, " in brief["control_plane"] and "quorum-replication" in brief["control_plane"]


def test_the_trend_counts_the_runs_whose_control_plane_was_incomplete(spark_session, tmp_path):
    from kafka_chaos.checkers.report import trend
    from tests.checkers.test_trend import make_run

    complete = {"checked": True, "expected": True, "rules": RULES, "rules_checked": RULES, "not_checked": {}}
    short = {**complete, "rules_checked": RULES - 1, "not_checked": {"stuck-broker-metadata": "samples end early"}}
    make_run(tmp_path, "a/1", control_plane=complete)
    make_run(tmp_path, "a/2", valid="unknown", control_plane=short)
    make_run(tmp_path, "a/3", valid="unknown", control_plane={**short, "expected": False})  # not expected: not counted
    make_run(tmp_path, "a/4", control_plane={"checked": True})  # from before the coverage was kept
    (row,) = trend.trend(tmp_path, session=spark_session).rows
    assert (row.control_checked, row.control_invalid, row.control_incomplete) == (4, 0, 1)
    assert trend._control_cell(row) == "0 of 4, 1 incomplete"
