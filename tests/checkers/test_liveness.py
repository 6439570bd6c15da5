"""The checker measures liveness on Spark exactly as a run's summary does in plain Python
(checkers/measures/liveness.py), and shows it in results.json, the summary, the warnings and the report."""

import json

import pytest

from kafka_chaos.checkers.check import format_summary
from kafka_chaos.checkers.measures.liveness import count_events, measure
from tests.checkers.builder import TimedHistory

pytestmark = pytest.mark.spark


def stalled_history() -> TimedHistory:
    h = TimedHistory()
    h.ops("send", 0, 10, 100, process=1)
    h.ops("poll", 0, 10, 100, process=2)
    h.fault("kill", "start", 10, 15)
    h.ops("send", 10, 15, 20, process=1)
    h.fault("pause", "resume", 20, 25)
    h.ops("send", 15, 40, 10, process=1)  # between faults: 10 ops/s against 200 before
    h.ops("poll", 40, 45, 500, process=3, phase="final")
    return h


def test_spark_and_the_plain_read_agree_and_the_stall_is_reported(check, tmp_path):
    h = stalled_history()
    result = check(h.write(tmp_path / "h.jsonl"), report=True)
    plain = measure(count_events(h.history()))
    assert result.liveness == plain
    assert plain["warning"] and plain["warning"] in result.warnings
    saved = json.loads(result.results_path.read_text())
    assert saved["liveness"] == plain
    assert "liveness: ok ops/s 200 before faults" in format_summary(result)
    page = result.report_path.read_text()
    assert 'id="liveness"' in page and "the workload stalled" in page
    assert result.brief()["liveness"]["stalled_since_s"] == plain["stalled_since_s"]


def test_a_workload_that_kept_its_rate_has_no_liveness_warning(check, tmp_path):
    h = TimedHistory()
    h.ops("send", 0, 10, 100, process=1)
    h.ops("poll", 0, 10, 100, process=2)
    h.fault("kill", "start", 10, 15)
    h.ops("send", 15, 30, 100, process=1)
    h.ops("poll", 15, 30, 100, process=2)
    result = check(h.write(tmp_path / "h.jsonl"))
    assert result.liveness == measure(count_events(h.history()))
    assert result.liveness["warning"] is None and not any("stalled" in w for w in result.warnings)
