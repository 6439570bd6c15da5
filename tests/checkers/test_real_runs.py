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

tests/checkers/data/kraft-4.4.0-subscribe-kill is a run of `kafka-chaos run --kafka 4.4.0 --nodes 3
--time-limit 20 --consumer subscribe --rate 200 --nemesis-script kill.json --check --seed 1`, the
script `[{"at": 4, "fault": "kill", "target": "kafka-3", "for": 4}]`: a kafka-python consumer
group (`subscribe`, a sync commit after each poll) while kafka-3 was killed from 4.2 s to its start
at 11.6 s; 536 values sent, all acknowledged, all read. Its history keeps every operation but the
polls that read nothing (their invoke and completion); the folder holds its control-plane/ and
config.json as recorded.

tests/checkers/data/kraft-4.4.0-overlap-dedicated is a run of `kafka-chaos run --kafka 4.4.0
--controllers 3 --brokers 3 --time-limit 30 --rate 200 --nemesis kill,pause,partition,wipe
--nemesis-mix overlap --nemesis-interval 5 --check --seed 3`: three dedicated controllers and
three brokers, faults overlapping: a cut of chaos/0's leader broker-6 from controller-1 (6.6 s to
15.7 s) across which controller-2 was wiped (9.6 s) and controller-1 killed (9.7 s to 13.2 s);
controller-1 isolated (18.9 s to 21.4 s) across which broker-4, a follower of chaos/0, was killed
(19.6 s to 22.4 s), across which the active controller controller-3 was paused (21.9 s to 27.8 s).
Its history is trimmed as the bridge cut's; the folder holds its control-plane/ and config.json.
Holding broker-4 down past the evidence's end (its start taken out of the history) makes neither
`unfenced-down-broker` nor `stale-isr-member` fire here: the overlapping faults restart their
clocks (a new quorum leader's activation, a majority regained) until their deadlines fall past the
evidence, and both say so in `not_checked`, the verdict unknown (../shared/anomalies.md: not
checked, never passed).

tests/checkers/data/kraft-4.4.0-share-kill is a run of `kafka-chaos run --kafka 4.4.0 --nodes 3
--time-limit 30 --consumer share --client java --concurrency 4 --rate 100 --nemesis-script kill.json
--check --seed 5`, the script `[{"at": 10, "fault": "kill", "target": "kafka-3", "for": 4}]`: a
share group of four Java members (kafka-3 killed from 16.0 s to its start at 21.5 s, the members'
first deliveries after it); 120 values sent and acknowledged, 114 delivered once and 6 twice (4
released, 2 past their lock); no share-double-acceptance. Its history is as recorded; of each node's
logs/server.log it keeps the lines checkers/share/reloads.py reads about the workload's topic (its
topic id lines, share-partition fenced, loaded and deposed lines), and of the metadata logs every
record but the internal topics' (`__consumer_offsets`, `__share_group_state`) partition records,
removed at their offsets from every node's log alike (the rest keeps its offsets).

As recorded each run is valid with every control-plane rule checked; each edit is flagged by its
rule alone, and each near miss of a data-plane or share edit by none.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafka_chaos.checkers.check import check_history
from kafka_chaos.history.run_dir import RunDir
from tests.checkers import cp_edits, dp_edits, share_edits

pytestmark = pytest.mark.spark

DATA = Path(__file__).parent / "data"
BRIDGE = "kraft-4.4.0-bridge-cut"
SUBSCRIBE = "kraft-4.4.0-subscribe-kill"
OVERLAP = "kraft-4.4.0-overlap-dedicated"
SHARE = "kraft-4.4.0-share-kill"
#: Every recorded run of this module.
RUNS = [BRIDGE, SUBSCRIBE, OVERLAP, SHARE]
#: Each recorded client run's edits, by the rule each must make fire, with its near miss.
CLIENT_EDITS = {SUBSCRIBE: dp_edits.EDITS, SHARE: share_edits.EDITS}
CLIENT_CASES = [(n, r) for n, edits in CLIENT_EDITS.items() for r in edits]

#: Each recorded run's control-plane edits, by the rule each must make fire.
CP_EDITS: dict[str, dict[str, Callable[[RunDir], dict[str, Any]]]] = {
    BRIDGE: {
        "stale-isr-member": cp_edits.stale_cut_follower,
        "fenced-in-isr": cp_edits.fenced_cut_in_isr,
    },
    OVERLAP: {
        "quorum-epoch-regression": cp_edits.epoch_regression,
        "leader-not-in-isr": cp_edits.leader_not_in_isr,
        "partition-epoch-regression": cp_edits.partition_epoch_regression,
    },
}


def copy_of(tmp_path: Path, name: str) -> RunDir:
    copy = tmp_path / name
    shutil.copytree(DATA / name, copy)
    return RunDir(copy)


@pytest.mark.parametrize("name", RUNS)
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


def test_a_fault_held_past_the_evidence_of_overlapping_faults_is_not_checked(spark_session, tmp_path):
    """broker-4 killed at 19.6 s and never started: the pause of the active controller and the
    majority regained after it push both timing rules' deadlines past the evidence. Neither fires,
    and neither passes: each is not checked, naming the kill, and the verdict is unknown."""
    run = copy_of(tmp_path, OVERLAP)
    lines = run.history.read_text().splitlines(keepends=True)
    start = [x for x in lines if '"f":"start"' in x and '"broker-4"' in x]
    assert len(start) == 2, start  # its invoke and its completion, the edit's target
    run.history.write_text("".join(x for x in lines if x not in start))
    result = check_history(run.history, session=spark_session, report=False)
    assert result.anomalies == {} and result.valid == "unknown", result.anomalies
    not_checked = result.control_plane["not_checked"]
    for rule in ("unfenced-down-broker", "stale-isr-member"):
        assert rule in not_checked and "op 61" in not_checked[rule], not_checked


def errors(result) -> set[str]:
    """The anomalies found that are errors (reported ones, `allowed` under subscribe, left out)."""
    return {n for n, a in result.anomalies.items() if a["errors"]}


@pytest.mark.parametrize(("name", "rule"), CLIENT_CASES)
def test_each_client_edit_is_flagged_by_its_rule_alone(spark_session, tmp_path, name, rule):
    run = copy_of(tmp_path, name)
    facts = CLIENT_EDITS[name][rule][0](run)
    result = check_history(run.history, session=spark_session, report=False)
    assert errors(result) == {rule}, result.anomalies
    example = result.anomalies[rule]["examples"][0]
    assert {k: example.get(k) for k in facts} == facts, example


@pytest.mark.parametrize(("name", "rule"), CLIENT_CASES)
def test_each_client_edits_near_miss_is_valid(spark_session, tmp_path, name, rule):
    run = copy_of(tmp_path, name)
    CLIENT_EDITS[name][rule][1](run)
    result = check_history(run.history, session=spark_session, report=False)
    assert result.valid is True and errors(result) == set(), result.anomalies
