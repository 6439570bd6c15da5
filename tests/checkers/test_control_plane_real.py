"""The control-plane checker on evidence a real cluster left, as recorded and as each rule's edit.

tests/checkers/data/kraft-4.3.1-kill-leader is a run of `kafka-chaos run --kafka 4.3.1 --nodes 3
--time-limit 20 --nemesis-script steps.json --check`, the script
`[{"at": 4, "fault": "kill", "target": "controller", "for": 4}]`: a combined three-node 4.3.1
cluster with the nemesis's fast failure detection (session 4 s, quorum fetch timeout 1 s, replica
lag 3 s). Its quorum leader kafka-1 (epoch 1) was killed at 4.0 s (done at 4.5 s) and started
again at 8.0 s (done at 9.4 s); kafka-2 led epoch 2 from 5.3 s, fenced kafka-1 at 9.4 s, taking it
out of every ISR in the same batch, unfenced it at 13.2 s and let it back into every ISR; the run
sampled the quorum until 44.7 s, the stuck-broker window after its heal. The folder holds the
run's control-plane/ as the evidence writer wrote it and its config.json; its history keeps the
nemesis's four events, the first acknowledged send invoked after the kill took effect (to chaos/2,
whose follower kafka-1 was) and the last poll that read it, its value cut down to that record.

As recorded it is valid with all eleven rules checked; each edit of tests/checkers/cp_edits.py,
made as a broken controller or node would have left the evidence, is flagged by its rule alone.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kafka_chaos.checkers.anomalies import CONTROL_NAMES
from kafka_chaos.checkers.check import check_history
from kafka_chaos.history.run_dir import RunDir
from tests.checkers.cp_edits import EDITS

pytestmark = pytest.mark.spark

REAL = Path(__file__).parent / "data" / "kraft-4.3.1-kill-leader"


@pytest.fixture
def run(tmp_path: Path) -> RunDir:
    copy = tmp_path / "run"
    shutil.copytree(REAL, copy)
    return RunDir(copy)


def test_the_run_as_recorded_is_valid_with_every_rule_checked(spark_session, run):
    result = check_history(run.history, report=True, session=spark_session)
    assert result.valid is True and result.anomalies == {}, result.anomalies
    cp = result.control_plane
    assert (cp["rules"], cp["rules_checked"], cp["not_checked"]) == (11, 11, {}), cp["not_checked"]
    assert cp["settings"]["broker.session.timeout.ms"] == 4000
    (kill,) = cp["faults"]
    assert (kill["f"], kill["nodes"], kill["active_controller"]) == ("kill", ["kafka-1"], "kafka-1")
    assert kill["next_quorum_leader_after_s"] == pytest.approx(0.846, abs=0.01)
    assert kill["fenced_after_s"] == {"kafka-1": pytest.approx(4.898, abs=0.01)}
    assert [h["epochs_added"] for h in cp["heals"]] == [0]
    assert set(cp["metadata_lag"]) == {"kafka-1", "kafka-2", "kafka-3"}
    html = result.report_path.read_text()
    for node in ("kafka-1", "kafka-2", "kafka-3"):
        assert f'aria-label="{node}: quorum epoch and role, fencing, metadata lag"' in html


def test_every_rule_has_an_edit():
    assert set(EDITS) == set(CONTROL_NAMES)


@pytest.mark.parametrize("name", list(EDITS))
def test_each_edit_is_flagged_by_its_rule_alone(spark_session, run, name):
    """The edit's rule fires, on the facts the edit made, and no other, and all eleven rules are
    checked. The edits that hold the kill to the end move its heal past the samples' window, yet
    `stuck-broker-metadata` stays checked: the samples after the moved heal show every broker
    fetching (the cluster was healed sooner)."""
    facts = EDITS[name](run)
    result = check_history(run.history, session=spark_session, report=False)
    assert set(result.anomalies) == {name}, result.anomalies
    assert result.valid is False
    example = result.anomalies[name]["examples"][0]
    assert {k: example.get(k) for k in facts} == facts, example
    not_checked = result.control_plane["not_checked"]
    assert not_checked == {}, not_checked
