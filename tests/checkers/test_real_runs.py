"""The checker on evidence real clusters left in shapes beyond one controller kill, as recorded and
as edits made the way a broken controller, node or client would have left it.

tests/checkers/data/kraft-4.4.0-bridge-cut is a run of `kafka-chaos run --kafka 4.4.0 --nodes 3
--time-limit 20 --nemesis-script bridge.json --check --seed 1`, the script
`[{"at": 4, "fault": "partition", "shape": "bridge", "for": 8}]`: a bridge cut of three combined
nodes, kafka-1 and kafka-2 unable to reach each other and kafka-3 between them, from 4.8 s to its
heal at 12.0 s. The active controller kafka-2 took kafka-1 out of chaos/0's ISR (whose leader it
was) by lag, then fenced kafka-1 (which could no longer reach it), taking it out of every ISR, and
unfenced it and let it back after the heal. The folder holds the run's control-plane/ as the
evidence writer wrote it and its config.json; its history keeps the nemesis's four events, for
each key and each nemesis completion the first acknowledged send invoked at or after it (what
stale-isr-member's clock reads) and the first final poll, its value cut down to those sends'
records.

As recorded each run is valid with every control-plane rule checked; each edit is flagged by its
rule alone.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafka_chaos.checkers.check import check_history
from kafka_chaos.history.run_dir import RunDir
from tests.checkers import cp_edits

pytestmark = pytest.mark.spark

DATA = Path(__file__).parent / "data"
BRIDGE = "kraft-4.4.0-bridge-cut"

#: Each recorded run's control-plane edits, by the rule each must make fire.
CP_EDITS: dict[str, dict[str, Callable[[RunDir], dict[str, Any]]]] = {
    BRIDGE: {
        "stale-isr-member": cp_edits.stale_cut_follower,
        "fenced-in-isr": cp_edits.fenced_cut_in_isr,
    },
}


def copy_of(tmp_path: Path, name: str) -> RunDir:
    copy = tmp_path / name
    shutil.copytree(DATA / name, copy)
    return RunDir(copy)


@pytest.mark.parametrize("name", list(CP_EDITS))
def test_the_run_as_recorded_is_valid_with_every_rule_checked(spark_session, tmp_path, name):
    result = check_history(copy_of(tmp_path, name).history, session=spark_session, report=False)
    assert result.valid is True and result.anomalies == {}, result.anomalies
    cp = result.control_plane
    assert (cp["rules"], cp["rules_checked"], cp["not_checked"]) == (11, 11, {}), cp["not_checked"]


@pytest.mark.parametrize(("name", "rule"), [(n, r) for n, edits in CP_EDITS.items() for r in edits])
def test_each_control_plane_edit_is_flagged_by_its_rule_alone(spark_session, tmp_path, name, rule):
    """The edit's rule fires, on the facts the edit made, and no other; every rule stays checked."""
    run = copy_of(tmp_path, name)
    facts = CP_EDITS[name][rule](run)
    result = check_history(run.history, session=spark_session, report=False)
    assert set(result.anomalies) == {rule}, result.anomalies
    assert result.valid is False
    example = result.anomalies[rule]["examples"][0]
    assert {k: example.get(k) for k in facts} == facts, example
    assert result.control_plane["not_checked"] == {}, result.control_plane["not_checked"]
