"""The checker measures group coverage on Spark exactly as a run's summary does in plain Python
(checkers/measures/group_coverage.py), and shows it in results.json, the summary, the warnings and the
report's ownership strip."""

import json
from pathlib import Path

import pytest

from kafka_chaos.checkers.check import format_summary
from kafka_chaos.checkers.measures.group_coverage import count_events
from tests.unit.test_group_coverage import KEYS, History, two_members

pytestmark = pytest.mark.spark


def written(h: History, path: Path) -> tuple[Path, list[dict]]:
    """The history's events in time order, indexed, as a file."""
    events = [{"index": i, **e} for i, e in enumerate(sorted(h.events, key=lambda e: e["time"]))]
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path, events


def with_a_stray_commit(handover_at: float) -> History:
    h = two_members(handover_at)
    return h.op(1, "commit", 3.5, {"t/0": 2, "t/1": 1}, invoke={"t/0": 2, "t/1": 1}).op(
        2, "commit", 9.0, {"t/1": 1}, invoke={"t/1": 1}
    )


def test_spark_and_the_plain_read_agree_and_the_report_draws_who_held_what(check, tmp_path):
    path, events = written(with_a_stray_commit(handover_at=5.0), tmp_path / "h.jsonl")
    result = check(path, report=True)
    plain = count_events(events, KEYS, spans=True)
    assert result.group_coverage == plain
    assert plain["every_key_share"] == 0.7 and plain["warning"] is None
    assert plain["stray_commits"] == 0
    assert plain["spans"] == {"t/0": [[1, 1.0, 4.0], [2, 5.0, 9.0]], "t/1": [[1, 1.0, 4.0], [2, 5.0, 9.0]]}
    assert json.loads(result.results_path.read_text())["group_coverage"] == plain
    assert "group coverage: every key held 70%" in format_summary(result)
    assert "spans" not in result.brief()["group_coverage"]
    assert not any("held every key" in w for w in result.warnings)
    page = result.report_path.read_text()
    assert 'id="group-coverage"' in page and "Who held each key" in page
    assert page.count('class="held"') == 4


def test_a_late_handover_warns_and_a_commit_of_a_key_not_held_is_reported(check, tmp_path):
    h = with_a_stray_commit(handover_at=7.5)
    h.op(2, "commit", 6.0, {"t/0": 2}, invoke={"t/0": 2})  # member 2 holds nothing until 7.5 s
    path, events = written(h, tmp_path / "h.jsonl")
    result = check(path)
    plain = count_events(events, KEYS, spans=True)
    assert result.group_coverage == plain
    assert plain["every_key_share"] == 0.45
    assert plain["stray_commits"] == 1 and plain["stray_commit_examples"][0]["key"] == "t/0"
    assert plain["warning"] in result.warnings


def test_a_run_without_members_has_no_coverage(check, tmp_path):
    h = History().send(1, 0.0).op(1, "assign", 0.0, KEYS, invoke=KEYS).send(1, 5.0)
    path, _ = written(h, tmp_path / "h.jsonl")
    result = check(path)
    assert result.group_coverage is None
    assert json.loads(result.results_path.read_text())["group_coverage"] is None
