"""The control-plane checker on evidence a real cluster left: a 4.3.1 combined three-node cluster
whose quorum leader (kafka-2) was killed at 4 s and started again at 8 s, with fast failure
detection (session 4 s, fetch timeout 1 s). tests/checkers/data/kraft-4.3.1-kill-leader holds its
control-plane/ folder as the evidence writer wrote it, its config.json, and its history's nemesis
operations (the data plane cut down to one send and the poll that read it). As recorded it is
valid; edited, as a broken controller would have left it, it is flagged by name."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kafka_chaos.checkers.check import check_history
from kafka_chaos.history.run_dir import RunDir
from tests.checkers.cp_edits import claim_leadership, keep_killed

pytestmark = pytest.mark.spark

REAL = Path(__file__).parent / "data" / "kraft-4.3.1-kill-leader"


@pytest.fixture
def run(tmp_path: Path) -> RunDir:
    copy = tmp_path / "run"
    shutil.copytree(REAL, copy)
    return RunDir(copy)


def test_the_run_as_recorded_is_valid_and_measured(spark_session, run):
    result = check_history(run.history, report=True, session=spark_session)
    assert result.valid is True and result.anomalies == {}, result.anomalies
    cp = result.control_plane
    assert cp["checked"] and cp["not_checked"] == {}
    assert cp["settings"]["broker.session.timeout.ms"] == 4000
    kill = next(f for f in cp["faults"] if f["f"] == "kill")
    assert kill["active_controller"] == "kafka-2"
    assert kill["next_quorum_leader_after_s"] == pytest.approx(1.62, abs=0.05)
    assert kill["fenced_after_s"]["kafka-2"] == pytest.approx(5.75, abs=0.05)
    assert set(cp["metadata_lag"]) == {"kafka-1", "kafka-2", "kafka-3"}
    html = result.report_path.read_text()
    for node in ("kafka-1", "kafka-2", "kafka-3"):
        assert f'aria-label="{node}: quorum epoch and role, fencing, metadata lag"' in html


def test_two_nodes_claiming_leadership_at_once_is_a_split_brain(spark_session, run):
    claim_leadership(run, "kafka-3", 7)
    result = check_history(run.history, session=spark_session, report=False)
    assert set(result.anomalies) == {"quorum-split-brain"}, result.anomalies
    example = result.anomalies["quorum-split-brain"]["examples"][0]
    assert example["nodes"] == ["kafka-1", "kafka-3"] and example["epochs"] == [3, 7]
    assert result.valid is False


def test_a_killed_broker_left_unfenced_is_flagged(spark_session, run):
    """The kill is made to last until the end, and the controller to never fence the broker
    (KAFKA-18138): it is unfenced in the committed metadata while it was down."""
    assert keep_killed(run) == "kafka-2"
    result = check_history(run.history, session=spark_session, report=False)
    assert "unfenced-down-broker" in result.anomalies, result.anomalies
    example = result.anomalies["unfenced-down-broker"]["examples"][0]
    assert (example["node"], example["broker"], example["fault"]) == ("kafka-2", 2, "kill")
    assert result.valid is False
