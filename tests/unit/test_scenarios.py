"""The scenario library's pure parts: expectations per version, user scenario files, the
version list of `reproduce`, its table, and bisect's search."""

import dataclasses
import json
import threading
from pathlib import Path

import pytest

from kafka_chaos.checkers.control_plane.causes import explain
from kafka_chaos.checkers.result import CheckResult
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.names import coordinator_partition
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.nemesis.partition import cut
from kafka_chaos.nemesis.schedule import parse_script
from kafka_chaos.runs import bisect as bisect_mod
from kafka_chaos.runs.reproduce import Row, Target, markdown, parse_targets
from kafka_chaos.runs.result import RunResult
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.scenarios import files
from kafka_chaos.scenarios.base import LOSS, SAFE
from kafka_chaos.scenarios.files import from_dict, load
from kafka_chaos.scenarios.kafka_20634 import neighbour
from kafka_chaos.scenarios.registry import SCENARIOS, get
from kafka_chaos.scenarios.script import Script

V = KafkaVersion.parse


@pytest.mark.parametrize(
    ("name", "version", "mv", "expected"),
    [
        ("kafka-14139", "3.4.1", None, LOSS),
        ("kafka-14139", "3.5.2", None, SAFE),
        ("kafka-14139", "3.5.2", "3.5-IV1", SAFE),
        ("kafka-14139", "3.5.2", "3.4-IV0", LOSS),
        ("kafka-14139", "4.1.1", "3.5-IV0", LOSS),
        ("last-replica-standing", "4.0.0", None, LOSS),
        ("last-replica-standing", "4.1.0", None, SAFE),
        ("unclean-election-config", "3.8.1", None, SAFE),
        ("unclean-election-config", "3.9.0", None, LOSS),
        ("unclean-election", "3.4.1", None, LOSS),
        ("acks1-failover", "4.3.1", None, LOSS),
        ("acks-all-failover", "4.3.1", None, SAFE),
        ("auto-commit-crash", "3.4.1", None, LOSS),
        ("auto-commit-crash", "4.3.1", None, LOSS),
        ("sync-commit-crash", "4.3.1", None, SAFE),
        ("kafka-17754", "3.9.1", None, LOSS),
        ("kafka-17754", "4.0.0", None, SAFE),
        ("kafka-15489", "3.6.2", None, LOSS),
        ("kafka-15489", "3.7.0", None, SAFE),
        ("kafka-18138", "3.9.1", None, SAFE),
        ("kafka-18138", "4.0.0", None, SAFE),
        ("kafka-15221", "3.6.2", None, LOSS),
        ("kafka-15221", "3.7.0", None, SAFE),
        ("kafka-16541", "3.6.2", None, SAFE),
        ("kafka-16541", "3.7.2", None, LOSS),
        ("kafka-16541", "3.8.0", None, SAFE),
        ("stuck-broker-metadata", "4.3.1", None, LOSS),
        ("stuck-broker-metadata", "3.7.2", None, SAFE),
        ("controller-disk-loss", "3.8.1", None, LOSS),
        ("controller-disk-loss", "4.3.1", None, LOSS),
        ("controller-disk-loss-kip853", "4.3.1", None, SAFE),
        ("kafka-19954", "4.1.2", None, LOSS),
        ("kafka-19954", "4.2.0", None, SAFE),
        ("kafka-19789", "4.1.2", None, LOSS),
        ("kafka-19789", "4.2.0", None, SAFE),
        ("kafka-20634", "3.9.1", None, SAFE),
        ("kafka-20634", "4.0.2", None, LOSS),
        ("kafka-20634", "4.1.2", None, LOSS),
        ("kafka-20634", "4.2.1", None, LOSS),
        ("kafka-20634", "4.2.2", None, SAFE),
        ("kafka-20634", "4.3.0", None, LOSS),
        ("kafka-20634", "4.3.1", None, SAFE),
        ("kafka-20634", "4.4.0", None, SAFE),
        ("kafka-20732", "3.7.2", None, SAFE),
        ("kafka-20732", "3.9.1", None, LOSS),
        ("kafka-20732", "4.0.2", None, LOSS),
        ("kafka-20732", "4.2.2", None, LOSS),
        ("kafka-20732", "4.3.0", None, LOSS),
        ("kafka-20732", "4.3.1", None, LOSS),
        ("kafka-20732", "4.3.2", None, SAFE),
        ("kafka-20732", "4.4.0", None, SAFE),
        ("kafka-20247", "3.7.2", None, LOSS),
        ("kafka-20247", "4.1.2", None, LOSS),
        ("kafka-20247", "4.2.0", None, LOSS),
        ("kafka-20247", "4.2.1", None, SAFE),
        ("kafka-20247", "4.3.0", None, SAFE),
        ("kafka-20742", "4.1.0", None, LOSS),
        ("kafka-20742", "4.3.2", None, LOSS),
        ("kafka-20742", "4.4.0", None, SAFE),
        ("kafka-19690", "3.5.2", None, SAFE),
        ("kafka-19690", "3.9.1", None, LOSS),
        ("kafka-19690", "3.9.2", None, SAFE),
        ("kafka-19690", "4.0.1", None, LOSS),
        ("kafka-19690", "4.0.2", None, SAFE),
        ("kafka-19690", "4.1.0", None, LOSS),
        ("kafka-19690", "4.1.1", None, SAFE),
        ("kafka-19690", "4.4.0", None, SAFE),
        ("kafka-20090", "4.0.0", None, LOSS),
        ("kafka-20090", "4.2.2", None, LOSS),
        ("kafka-20090", "4.3.0", None, SAFE),
        ("share-double-acceptance", "4.1.0", None, LOSS),
        ("share-double-acceptance", "4.4.0", None, LOSS),
    ],
)
def test_expectations(name, version, mv, expected):
    assert SCENARIOS[name].expectation(V(version), mv) == expected


def test_every_library_scenario_tells_its_story_and_its_run_is_valid(tmp_path):
    from kafka_chaos.runs.scenario import scenario_spec

    for scenario in SCENARIOS.values():
        # A control shares its scenario's module and story.
        told_by = {
            "acks-all-failover": "acks1-failover",
            "sync-commit-crash": "auto-commit-crash",
            "controller-disk-loss-kip853": "controller-disk-loss",
        }
        assert scenario.story.strip().startswith(told_by.get(scenario.name, scenario.name.split("-config")[0]))
        # Raises UsageError when a workload option is wrong or the cluster cannot hold the workload.
        scenario_spec(scenario, "4.3.1", tmp_path).validate()


def test_unknown_scenario_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown scenario 'nope'"):
        get("nope")


STEPS = [{"at": 1, "fault": "partition", "shape": "cut", "target": "leader:chaos/0|controller", "for": 5}]


def test_scenario_file_yaml(tmp_path):
    path = tmp_path / "incident.yaml"
    path.write_text(
        "name: incident\ncluster: {controllers: 1, brokers: 2, config: {replica.lag.time.max.ms: 5000}}\n"
        "workload: {keys: 1, replication_factor: 2, min_insync_replicas: 1}\nexpect: safe\n"
        "steps:\n  - {at: 1, fault: kill, target: 'leader:chaos/0', for: 5}\n"
    )
    scenario = load(path)
    assert (scenario.name, scenario.controllers, scenario.brokers) == ("incident", 1, 2)
    assert scenario.broker_config == {"replica.lag.time.max.ms": "5000"}
    assert scenario.workload["time_limit"] == 1 + 5 + 10 + 30
    assert scenario.expectation(V("3.4.1")) == SAFE


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "holds a mapping"),
        ({"steps": STEPS, "kafka": "3.4.1"}, "unknown field"),
        ({"cluster": {}}, "needs 'steps'"),
        ({"steps": STEPS, "cluster": {"nodes": 3}}, "'cluster' takes"),
        ({"steps": STEPS, "workload": {"acks": "2"}}, "--acks"),
        ({"steps": STEPS, "workload": {"speed": 1}}, "unknown workload option"),
        ({"steps": STEPS, "expect": "maybe"}, "'expect' is loss or safe"),
        ({"steps": [{"at": 1, "fault": "explode"}]}, "unknown fault"),
    ],
)
def test_scenario_file_mistakes(data, message):
    with pytest.raises(UsageError, match=message):
        from_dict(data, "x.yaml")


def test_scenario_file_not_yaml(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("steps: [\n")
    with pytest.raises(UsageError, match="not valid YAML"):
        load(path)
    py = tmp_path / "none.py"
    py.write_text("X = 1\n")
    with pytest.raises(UsageError, match="defines no SCENARIO"):
        load(py)


def test_parse_targets():
    assert parse_targets("3.4.1, 3.5.2@3.4-IV0") == [Target("3.4.1"), Target("3.5.2", "3.4-IV0")]
    with pytest.raises(UsageError):
        parse_targets("3.4")
    with pytest.raises(UsageError):
        parse_targets(" , ")


def outcome(version, expected, lost, verdict=False, wall=100.0, anomalies=None, shows=("lost-write",)):
    """A scenario run's result as the version table reads it: the scenario's expectation, the
    check's error counts, how its script went."""
    scenario = dataclasses.replace(SCENARIOS["kafka-14139"], name="s", expect=lambda v, mv: expected, shows=shows)
    errors = {"lost-write": lost, **({"unseen": 2} if anomalies is None else anomalies)}
    check = CheckResult(verdict, {n: {"errors": c} for n, c in errors.items()}, {})
    spec = RunSpec(ClusterSpec(version), scenario=scenario)
    return RunResult(
        Path(f"/runs/{version}"), spec, check=check, scenario={"outcome": "completed", "error": None}, wall_s=wall
    )


def test_table_rows_are_as_expected_only_when_every_run_is():
    loss = Row(Target("3.4.1"), LOSS, [outcome("3.4.1", LOSS, 10, wall=90), outcome("3.4.1", LOSS, 30, wall=110)])
    flaky = Row(Target("3.4.1"), LOSS, [outcome("3.4.1", LOSS, 10), outcome("3.4.1", LOSS, 0, verdict=True)])
    safe = Row(Target("4.3.1"), SAFE, [outcome("4.3.1", SAFE, 0, verdict=True)])
    assert (loss.as_expected, flaky.as_expected, safe.as_expected) == (True, False, True)
    stopped = outcome("4.3.1", SAFE, 0, verdict=True)
    stopped.scenario = {"outcome": "step failed", "error": "B is back, out of the ISR: not within 60 s"}
    assert not Row(Target("4.3.1"), SAFE, [stopped]).as_expected  # a fault not set up proves nothing
    assert "- 4.3.1: B is back" in markdown(SCENARIOS["kafka-14139"], [Row(Target("4.3.1"), SAFE, [stopped])])
    assert loss.time_to_reproduce() == 100.0 and safe.time_to_reproduce() is None
    table = markdown(SCENARIOS["kafka-14139"], [loss, flaky, safe])
    assert "| 3.4.1 | loss | 2 invalid | 20.0, 30 | unseen 4 | 2/2 | 100 s | yes |" in table
    assert "| 3.4.1 | loss | 1 invalid, 1 valid | 5.0, 10 | unseen 4 | 1/2 | 100 s | NO |" in table
    assert json.dumps(safe.to_json())


def test_a_scenarios_own_finding_reproduces_it_only_when_the_scenario_shows_it():
    finding = {"finding": "controller-unregistered", "at_s": 40.0, "controller": "kafka-2"}
    seen = outcome("4.2.0", LOSS, 0, verdict=True, anomalies={}, shows=("controller-unregistered",))
    seen.scenario = {"outcome": "completed", "error": None, "observed": [finding]}
    assert seen.observed == {"controller-unregistered": 1} and seen.reproduced and seen.as_expected
    assert seen.table_row()["observed"] == {"controller-unregistered": 1}
    row = Row(Target("4.2.0"), LOSS, [seen])
    assert "| controller-unregistered 1 | 1/1 |" in markdown(SCENARIOS["kafka-20247"], [row])
    # The near misses: no finding (a fixed release's run), and a finding the scenario does not show.
    clean = outcome("4.2.1", SAFE, 0, verdict=True, anomalies={}, shows=("controller-unregistered",))
    clean.scenario = {"outcome": "completed", "error": None, "observed": []}
    assert clean.observed == {} and not clean.reproduced and clean.as_expected
    other = outcome("4.2.0", LOSS, 0, verdict=True, anomalies={}, shows=("controller-unregistered",))
    other.scenario = {"outcome": "completed", "error": None, "observed": [{**finding, "finding": "something-else"}]}
    assert not other.reproduced and not other.as_expected


def test_a_scenario_is_refused_on_a_release_older_than_its_story(tmp_path):
    from kafka_chaos.runs.scenario import scenario_spec

    with pytest.raises(UsageError, match="scenario kafka-20247 needs Kafka 3.7.0 or later, not 3.6.2"):
        scenario_spec(SCENARIOS["kafka-20247"], "3.6.2", tmp_path).validate()
    scenario_spec(SCENARIOS["kafka-20247"], "3.7.2", tmp_path).validate()  # the first line that has it


def test_reproduce_refuses_a_release_older_than_the_story_before_it_builds_an_image(tmp_path, capsys, monkeypatch):
    from kafka_chaos.frontends import cli
    from kafka_chaos.runs import reproduce

    monkeypatch.setattr(reproduce, "prepare_images", lambda *a: pytest.fail("an image was asked for"))
    assert cli.main(["reproduce", "kafka-20247", "--kafka", "4.2.0,3.6.2", "--store", str(tmp_path)]) == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert "scenario kafka-20247 needs Kafka 3.7.0 or later, not 3.6.2" in line
    assert not list(tmp_path.iterdir())  # no run directory


def test_reproduce_runs_a_scenario_with_the_client_asked_for_and_refuses_an_unknown_one(tmp_path, capsys, monkeypatch):
    from kafka_chaos.frontends import cli
    from kafka_chaos.runs import reproduce

    monkeypatch.setattr(reproduce, "prepare_images", lambda *a: pytest.fail("an image was asked for"))
    argv = ["reproduce", "share-double-acceptance", "--kafka", "4.4.0", "--store", str(tmp_path)]
    assert cli.main([*argv, "--client", "rdkafka"]) == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert "--client" in line and "rdkafka" in line, line
    specs = []

    def spec_of(scenario, version, store, mv=None, seed=None, evidence=True, spark_master=None, client=None):
        specs.append(client)
        raise UsageError("stop here")

    monkeypatch.setattr(reproduce, "scenario_spec", spec_of)
    assert cli.main([*argv, "--client", "librdkafka"]) == 2
    assert specs == [{"client": "librdkafka"}]


def test_a_result_carries_its_check_but_its_table_row_does_not():
    # chaos_run takes the check from the result instead of reading results.json back from disk.
    checked = outcome("3.4.1", LOSS, 10)
    row = checked.table_row()
    checked.check = dataclasses.replace(checked.check, results_path=Path("/r/results.json"))
    assert checked.table_row() == row and "check" not in row
    assert json.dumps(checked.table_row())


def test_bisect_walks_releases_to_the_first_good_one(monkeypatch, tmp_path):
    xml = "".join(
        f"<version>{v}</version>" for v in ("3.4.0", "3.4.1", "3.5.0-rc1", "3.5.0", "3.5.1", "3.6.0", "3.7.0", "4.0.0")
    )
    releases = bisect_mod.released_versions(xml)
    assert [str(v) for v in releases] == ["3.4.0", "3.4.1", "3.5.0", "3.5.1", "3.6.0", "3.7.0", "4.0.0"]
    probed = []

    def fake_run(spec, reporter):
        version = spec.cluster.version
        probed.append(version)
        return outcome(version, LOSS, 5 if V(version) < V("3.6.0") else 0)

    monkeypatch.setattr(bisect_mod, "run_once", fake_run)
    result = bisect_mod.bisect(
        SCENARIOS["kafka-14139"], "4.0.0", "3.4.0", 1, tmp_path, lambda m: None, versions=releases
    )
    assert (result.last_bad, result.first_good, result.problem) == ("3.5.1", "3.6.0", None)
    assert probed[:2] == ["3.4.0", "4.0.0"] and len(probed) <= 2 + 3
    with pytest.raises(UsageError, match="must be older"):
        bisect_mod.bisect(SCENARIOS["kafka-14139"], "3.4.0", "4.0.0", 1, tmp_path, versions=releases)
    wrong = bisect_mod.bisect(
        SCENARIOS["kafka-14139"], "3.5.1", "3.4.0", 1, tmp_path, lambda m: None, versions=releases
    )
    assert wrong.problem == "the good end 3.5.1 showed the loss"

    def not_set_up(spec, reporter):
        version = spec.cluster.version
        out = outcome(version, LOSS, 5 if version == "3.4.0" else 0)
        if version == "3.5.1":
            out.scenario = {"outcome": "step failed", "error": "B caught up with A: not within 60 s"}
        return out

    monkeypatch.setattr(bisect_mod, "run_once", not_set_up)
    stuck = bisect_mod.bisect(
        SCENARIOS["kafka-14139"], "4.0.0", "3.4.0", 1, tmp_path, lambda m: None, versions=releases
    )
    assert stuck.problem == "the scenario could not be set up on 3.5.1: B caught up with A: not within 60 s"
    assert stuck.first_good is None


def test_cut_is_symmetric_and_leaves_others_connected():
    assert cut([(["a"], ["c"]), (["a"], ["b"])]) == {"a": {"b", "c"}, "b": {"a"}, "c": {"a"}}
    assert cut([(["a", "b"], ["b"])]) == {"a": {"b"}, "b": {"a"}}


def test_a_scenario_is_reproduced_by_any_anomaly_it_shows():
    """kafka-17754 shows its loss as aborted reads, lost writes or cycles; lost-write alone
    reproduces the others; an error the scenario does not name does not."""

    def run(lost: int, anomalies: dict[str, int], shows: tuple[str, ...]) -> RunResult:
        return outcome("3.9.1", LOSS, lost, anomalies=anomalies, shows=shows)

    shows = SCENARIOS["kafka-17754"].shows
    assert run(0, {"G1a": 2}, shows).reproduced
    assert run(0, {"G1c": 1}, shows).reproduced
    assert not run(0, {"duplicate": 1}, shows).reproduced
    assert run(3, {}, ("lost-write",)).reproduced
    assert not run(0, {"G1a": 2}, ("lost-write",)).reproduced


class AskedNemesis:
    """Records each fault a script asks for, with its target and options."""

    def __init__(self):
        self.asked: list[tuple[str, str, dict]] = []

    def run(self, fault, target="random", **options):
        self.asked.append((fault, target, options))
        return {"target": target, "nodes": ["kafka-1"]}


def test_a_scenario_files_steps_reach_the_nemesis_with_their_options_and_its_log_names_them(monkeypatch):
    monkeypatch.setattr(files, "TAIL_S", 0.0)
    nemesis = AskedNemesis()
    s = Script(None, nemesis, threading.Event(), "chaos")  # type: ignore[arg-type] (faults need no cluster here)
    cut_then_kill = [{**STEPS[0], "at": 0, "for": 0.05}, {"at": 0.06, "fault": "kill", "target": "kafka-1"}]
    files.steps_script(parse_script(cut_then_kill))(s)
    # The partition's cut is healed after its `for`, on the nodes it hit, with no options.
    assert nemesis.asked == [
        ("partition", "leader:chaos/0|controller", {"shape": "cut"}),
        ("heal", "kafka-1", {}),
        ("kill", "kafka-1", {}),
    ]
    assert [step["step"] for step in s.steps] == [
        "partition leader:chaos/0|controller (cut)",
        "heal kafka-1",
        "kill kafka-1",
    ]
    s.cut(("kafka-1", "kafka-2"), ("kafka-1", "controller"))
    s.fault("partition", "kafka-3")
    assert nemesis.asked[-2:] == [
        ("partition", "kafka-1|kafka-2;kafka-1|controller", {"shape": "cut"}),
        ("partition", "kafka-3", {}),
    ]
    assert [step["step"] for step in s.steps[-2:]] == [
        "partition kafka-1|kafka-2;kafka-1|controller (cut)",
        "partition kafka-3 (isolate)",
    ]


SPLIT = {
    "nodes": ["controller-1", "controller-3"],
    "epochs": [2, 4],
    "from_s": 9.8,
    "to_s": 41.8,
    "seconds": 32.0,
    "since_s": [0.1, 9.8],
    "cut_off": {"controller-1": ["controller-2", "controller-3"], "controller-3": ["controller-1"]},
}


def test_the_table_explains_each_runs_control_plane_anomaly():
    split = outcome("3.6.2", LOSS, 0, anomalies={}, shows=("quorum-split-brain",))
    split.check.anomalies["quorum-split-brain"] = {"count": 1, "errors": 1, "examples": [SPLIT]}
    clean = outcome("3.7.2", SAFE, 0, verdict=True, anomalies={}, shows=("quorum-split-brain",))
    table = markdown(
        SCENARIOS["kafka-15489"], [Row(Target("3.6.2"), LOSS, [split]), Row(Target("3.7.2"), SAFE, [clean])]
    )
    assert (
        "- 3.6.2, run 1: `quorum-split-brain`: controller-1 held itself leader of epoch 2 and controller-3 of epoch 4"
        " (since 0.1 s and 9.8 s), both running, for 32 s (9.8 s to 41.8 s); controller-1 could not reach"
        " controller-2, controller-3; controller-3 could not reach controller-1"
    ) in table
    assert "3.7.2, run" not in table


def test_a_divergence_names_who_holds_which_record():
    example = {
        "offset": 38,
        "high_watermark": 308,
        "records": {
            "controller-3": "LeaderChange {} (epoch 2)",
            "controller-1": "NO_OP_RECORD {} (epoch 1)",
            "broker-4": "NO_OP_RECORD {} (epoch 1)",
        },
    }
    assert explain("metadata-divergence", example) == (
        "at offset 38, below the final high watermark 308: broker-4, controller-1 hold NO_OP_RECORD {} (epoch 1);"
        " controller-3 holds LeaderChange {} (epoch 2)"
    )


def test_a_double_leader_names_each_leaders_first_claim():
    example = {
        "epoch": 3,
        "leaders": [1, 2],
        "claims": [
            {"node": "controller-1", "leader": 1, "time_s": 4.7, "source": "LeaderChange at offset 38"},
            {"node": "controller-3", "leader": 2, "time_s": 13.97, "source": "LeaderChange at offset 41"},
        ],
    }
    assert explain("quorum-double-leader", example) == (
        "epoch 3 had 2 leaders, each first claimed: 1 from 4.7 s (LeaderChange at offset 38, on controller-1);"
        " 2 from 14.0 s (LeaderChange at offset 41, on controller-3)"
    )


def test_two_long_records_that_differ_only_at_their_end_are_told_apart():
    head = "PARTITION_CHANGE_RECORD " + "x" * 120
    example = {"offset": 9, "high_watermark": 20, "records": {"a": head + " (epoch 1)", "b": head + " (epoch 2)"}}
    said = explain("metadata-divergence", example)
    assert said.count("holds") == 2 and "(epoch 1)" in said and "(epoch 2)" in said


def test_an_example_without_its_sentence_is_shown_by_its_fields():
    assert explain("quorum-split-brain", {"nodes": ["a"]}) == "nodes=['a']"
    assert explain("metadata-divergence", {"offset": 7, "nodes": ["a", "b"]}) == "offset=7, nodes=['a', 'b']"


def test_a_measure_that_names_no_anomaly_is_contradicted_by_any():
    """controller-pause names none: clean as expected, and any error anomaly is not."""
    clean = outcome("4.3.1", SAFE, 0, verdict=True, anomalies={}, shows=())
    broken = outcome("4.3.1", SAFE, 0, anomalies={"quorum-split-brain": 1}, shows=())
    assert (clean.reproduced, clean.as_expected) == (False, True)
    assert (broken.reproduced, broken.as_expected) == (True, False)


@pytest.mark.parametrize("partitions", [1, 3, 50])
def test_kafka_20634s_neighbour_group_shares_the_groups_offsets_partition(partitions):
    group = "kafka-chaos-0123456789"
    other = neighbour(group, partitions)
    assert other != group
    assert coordinator_partition(other, partitions) == coordinator_partition(group, partitions)


def test_a_scenario_file_with_a_remote_storage_fault_names_a_tiered_cluster():
    steps = [{"at": 5, "fault": "remote-unavailable", "target": "kafka-1", "for": 5}]
    with pytest.raises(UsageError, match="fault remote-unavailable needs a tiered cluster"):
        from_dict({"steps": steps}, "x.yaml")
    with pytest.raises(UsageError, match="'cluster.tiered' is true or false"):
        from_dict({"cluster": {"tiered": "yes"}, "steps": steps}, "x.yaml")
    assert from_dict({"cluster": {"tiered": True}, "steps": steps}, "x.yaml").tiered


def test_the_brokers_lines_for_a_skipped_acknowledgement_name_its_key_and_offsets():
    """The line SharePartition logs at TRACE (4.1.0 to 4.4.0), in the images' log4j layout; a
    batch skipped as archived inside the in-flight batches is another line, not counted."""
    from kafka_chaos.scenarios.share_double_acceptance import skipped_batches

    topic_id = "kafka-chaos-0a1b2c3d4e-WRYx0aXHS2ubrnq0aUl9ZA:chaos-0"
    log = "\n".join(
        [
            "[2026-12-08 02:10:11,120] TRACE All offsets in the acknowledgement batch ShareAcknowledgementBatch"
            f"[firstOffset=40, lastOffset=42, acknowledgeTypes=[1]] are already archived: {topic_id} "
            "(kafka.server.share.SharePartition)",
            "[2026-12-08 02:10:11,121] TRACE All offsets in the inflight batch InFlightBatch(firstOffset=43, "
            f"lastOffset=44) are already archived: {topic_id} (kafka.server.share.SharePartition)",
            "[2026-12-08 02:10:11,122] TRACE Acknowledgement batch request for share partition: "
            f"{topic_id} (kafka.server.share.SharePartition)",
        ]
    )
    assert skipped_batches(log) == [{"at": "2026-12-08 02:10:11,120", "key": "chaos/0", "first": 40, "last": 42}]


def test_the_library_listing_marks_a_scenario_that_has_not_reproduced(capsys, monkeypatch):
    from kafka_chaos.frontends import cli

    tried = dataclasses.replace(SCENARIOS["kafka-20247"], not_reproduced="10 runs on 4.2.0, none")
    monkeypatch.setitem(SCENARIOS, "kafka-20247", tried)
    assert cli.main(["scenarios"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert lines["kafka-20247"].endswith("[not reproduced: 10 runs on 4.2.0, none]")
    assert "not reproduced" not in lines["kafka-20742"]
