"""RunSpec (runs/spec.py) and Run's bookkeeping (runs/run.py): pure logic, a stand-in cluster."""

import json
import re

import pytest

from kafka_chaos.frontends.cli import _run_spec, build_parser
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.config import FAULT_DETECTION
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.history.reporter import silent
from kafka_chaos.nemesis.faults import COLOURS
from kafka_chaos.nemesis.plan import NemesisPlan, nemesis_plan
from kafka_chaos.nemesis.schedule import Step
from kafka_chaos.runs import run as run_mod
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions


def test_the_default_spec_is_valid_and_named_after_its_workload():
    spec = RunSpec(ClusterSpec()).validate()
    assert spec.run_name == "queue"
    assert RunSpec(ClusterSpec(), WorkloadOptions(workload="txn")).run_name == "txn"
    assert RunSpec(ClusterSpec(), name="mine").run_name == "mine"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (RunSpec(ClusterSpec(nodes=1)), r"replication factor 3 needs at least as many brokers \(1\)"),
        (RunSpec(ClusterSpec(controllers=3, brokers=2)), r"at least as many brokers \(2\)"),
        (RunSpec(ClusterSpec(), WorkloadOptions(min_insync_replicas=4)), "min.insync.replicas cannot exceed"),
        (RunSpec(ClusterSpec(), WorkloadOptions(workload="bank")), "unknown workload 'bank'"),
        (RunSpec(ClusterSpec(), WorkloadOptions(workload="txn", acks="1")), "txn workload needs --acks all"),
        (RunSpec(ClusterSpec(), WorkloadOptions(rate=0)), "--rate must be greater than 0"),
        (
            RunSpec(ClusterSpec(), WorkloadOptions(client="jav")),
            "--client must be one of kafka-python, librdkafka, java; got 'jav'",
        ),
        (
            RunSpec(ClusterSpec(), WorkloadOptions(client="librdkafka", client_version="3.9.1")),
            "--client-version applies to --client java only",
        ),
        (
            RunSpec(ClusterSpec(), WorkloadOptions(client="java", client_version="3.9")),
            "--client-version must be a release such as 3.9.1, got '3.9'",
        ),
        (
            RunSpec(ClusterSpec(), WorkloadOptions(client="java", client_version="3.3.2")),
            "--client-version 3.3.2 is too old",
        ),
    ],
)
def test_every_bad_spec_is_one_usage_error(spec, message):
    with pytest.raises(UsageError, match=message):
        spec.validate()


def test_near_misses_of_the_bad_specs_are_valid():
    RunSpec(ClusterSpec(nodes=1), WorkloadOptions(replication_factor=1, min_insync_replicas=1)).validate()
    RunSpec(ClusterSpec(controllers=3, brokers=3)).validate()
    RunSpec(ClusterSpec(), WorkloadOptions(min_insync_replicas=3)).validate()
    RunSpec(ClusterSpec(), WorkloadOptions(workload="txn")).validate()
    RunSpec(ClusterSpec(), WorkloadOptions(client="librdkafka")).validate()
    RunSpec(ClusterSpec(), WorkloadOptions(client="java", client_version="3.4.0")).validate()
    RunSpec(ClusterSpec(version="3.9.1"), WorkloadOptions(client="java")).validate()
    kip848 = {"consumer": "mixed", "group_protocol": "consumer"}
    RunSpec(ClusterSpec(version="4.0.0"), WorkloadOptions(client="librdkafka", **kip848)).validate()
    RunSpec(ClusterSpec(), WorkloadOptions(client="java", client_version="4.0.0", **kip848)).validate()
    RunSpec(ClusterSpec(version="3.9.1"), WorkloadOptions(client="java", consumer="subscribe")).validate()


@pytest.mark.parametrize(
    "target",
    [
        "kafka-2",
        "3",
        "kafka-1,kafka-3",
        "leader:chaos/0",
        "last-isr:chaos/0",
        "controller+leader:chaos/0",
        "group-coordinator:g",
        "leader:chaos/0|controller",  # a cut's sides (nemesis/partition.py)
        "kafka-1|kafka-2;kafka-2|kafka-3",
    ],
)
def test_targets_that_name_something_in_the_cluster_are_valid(target):
    RunSpec(ClusterSpec(), nemesis=NemesisPlan(faults=[f"kill@{target}"])).validate()
    script = [Step(at=1, fault="pause", target=target)]
    RunSpec(ClusterSpec(), nemesis=NemesisPlan(script=script)).validate()


def test_a_target_without_some_nodes_names_them_as_any_target_does():
    for target in ("follower:chaos/0!$F", "random-broker!kafka-1,2", "$L", "leader:chaos/0!$L+controller"):
        RunSpec(ClusterSpec(), nemesis=NemesisPlan(script=[Step(at=1, fault="pause", target=target)])).validate()
    script = [Step(at=1, fault="pause", target="follower:chaos/0!kafka-9")]
    with pytest.raises(UsageError, match="unknown node 'kafka-9' after '!'"):
        RunSpec(ClusterSpec(), nemesis=NemesisPlan(script=script)).validate()


def test_a_keyed_target_without_a_key_is_a_usage_error():
    for target in ("leader:chaos", "last-isr:chaos", "follower:"):
        with pytest.raises(UsageError, match="expected a key, topic/partition"):
            RunSpec(ClusterSpec(), nemesis=NemesisPlan(script=[Step(at=1, fault="pause", target=target)])).validate()


def test_a_cut_with_a_side_that_names_nothing_is_a_usage_error():
    script = [Step(at=1, fault="partition", target="kafka-1|kafka-9", options={"shape": "cut"})]
    with pytest.raises(UsageError, match="unknown target 'kafka-9'"):
        RunSpec(ClusterSpec(), nemesis=NemesisPlan(script=script)).validate()


def test_a_scripted_step_aimed_at_no_node_is_a_usage_error():
    script = [Step(at=1, fault="pause", target="broker-4")]  # a dedicated cluster's first broker
    with pytest.raises(UsageError, match="unknown target 'broker-4'"):
        RunSpec(ClusterSpec(), nemesis=NemesisPlan(script=script)).validate()
    RunSpec(ClusterSpec(controllers=3, brokers=3), nemesis=NemesisPlan(script=script)).validate()


def test_a_kip_848_run_gives_its_members_heartbeat_and_session_to_the_brokers():
    opts = WorkloadOptions(client="java", consumer="subscribe", group_protocol="consumer", heartbeat_interval_ms=700)
    config = RunSpec(ClusterSpec(config={"group.consumer.session.timeout.ms": "20000"}), opts).build_cluster().config
    assert config["group.consumer.heartbeat.interval.ms"] == "700"
    assert config["group.consumer.min.heartbeat.interval.ms"] == "700"
    assert config["group.consumer.session.timeout.ms"] == "20000"  # the user's, over the workload's
    assert "group.consumer.max.session.timeout.ms" not in config
    long = WorkloadOptions(client="java", consumer="subscribe", group_protocol="consumer", session_timeout_ms=90000)
    assert long.broker_defaults()["group.consumer.max.session.timeout.ms"] == "90000"  # else the brokers refuse it
    classic = RunSpec(ClusterSpec(), WorkloadOptions(client="java", consumer="subscribe")).build_cluster().config
    assert not any(k.startswith("group.consumer.") for k in classic)


def test_a_share_run_retries_its_groups_state_initialisation_soon():
    config = RunSpec(ClusterSpec(), WorkloadOptions(client="java", consumer="share")).build_cluster().config
    assert config["group.share.initialize.retry.interval.ms"] == "5000"  # Kafka's 30 s outlasts a run's start
    user = ClusterSpec(config={"group.share.initialize.retry.interval.ms": "30000"})
    kept = RunSpec(user, WorkloadOptions(client="java", consumer="share")).build_cluster().config
    assert kept["group.share.initialize.retry.interval.ms"] == "30000"  # the user's, over the workload's
    plain = RunSpec(ClusterSpec(), WorkloadOptions(client="java")).build_cluster().config
    assert "group.share.initialize.retry.interval.ms" not in plain


def test_broker_config_goes_on_top_and_leaves_the_original_alone():
    base = RunSpec(ClusterSpec(config={"a": "1", "b": "2"}))
    more = base.with_broker_config({"b": "3"})
    assert more.cluster.config == {"a": "1", "b": "3"}
    assert base.cluster.config == {"a": "1", "b": "2"}
    assert base.with_broker_config(None).cluster.config == {"a": "1", "b": "2"}


def test_a_fault_plan_brings_fast_detection_under_the_users_settings():
    user = {"replica.lag.time.max.ms": "30000"}
    faults = RunSpec(ClusterSpec(config=user), nemesis=nemesis_plan("kill", 5, None)).build_cluster()
    assert faults.config["replica.lag.time.max.ms"] == "30000"
    assert {k: v for k, v in faults.config.items() if k not in user} == {
        k: v for k, v in FAULT_DETECTION.items() if k not in user
    }
    assert RunSpec(ClusterSpec(config=user)).build_cluster().config == user  # no nemesis: Kafka's own
    scenario = NemesisPlan(custom=lambda nemesis: None, label="s")  # a scenario brings its own
    assert RunSpec(ClusterSpec(config=user), nemesis=scenario).build_cluster().config == user


def test_the_description_is_config_jsons_first_keys():
    spec = RunSpec(ClusterSpec("3.9.1"), nemesis=nemesis_plan("kill,pause", 5, None), seed=4)
    described = spec.describe(spec.build_cluster())
    assert sorted(described) == [
        "broker_config",
        "control_plane",
        "disk",
        "kafka_version",
        "metadata_version",
        "name",
        "nemesis",
        "quorum",
        "seed",
        "shape",
        "workload",
    ]
    assert described["nemesis"] == {"faults": ["kill", "pause"], "interval": 5, "colours": COLOURS}
    assert described["kafka_version"] == "3.9.1" and described["seed"] == 4
    assert described["control_plane"] is True and described["quorum"] == "static"
    assert described["disk"] == "page-cache"


class ClusterThatDoesNotStart:
    """Stands in for KafkaCluster: entering it fails as a cluster that could not start does."""

    def __init__(self, real):
        self.version, self.shape, self.config = real.version, real.shape, real.config
        self.metadata_version, self.cluster_id, self.run_id = None, "cid", "rid"
        self.quorum, self.disk, self.workdir = real.quorum, real.disk, None
        self.tiered, self.tiered_plugin = real.tiered, real.tiered_plugin

    def with_workdir(self, path):
        self.workdir = path
        return self

    def with_log(self, log):
        return self

    def __enter__(self):
        raise RuntimeError("node kafka-1 did not start")

    def __exit__(self, *exc):
        return False


def test_a_run_that_raised_keeps_its_directory_and_writes_its_files_once(tmp_path, monkeypatch):
    real_build = RunSpec.build_cluster
    monkeypatch.setattr(RunSpec, "build_cluster", lambda self: ClusterThatDoesNotStart(real_build(self)))
    writes = []
    real_write = run_mod._write_json
    monkeypatch.setattr(run_mod, "_write_json", lambda path, data: (writes.append(path.name), real_write(path, data)))
    job = run_mod.Run(RunSpec(ClusterSpec(), store=tmp_path, name="broken", check=True), silent)
    with pytest.raises(RuntimeError, match="did not start"):
        job.execute()
    run_dir = job.result.run_dir
    assert run_dir.parent == tmp_path / "broken" and (tmp_path / "broken" / "latest").resolve() == run_dir
    assert sorted(writes) == ["config.json", "summary.json"]  # each once
    config = json.loads((run_dir / "config.json").read_text())
    assert "cluster_id" not in config and config["name"] == "broken"  # it never started
    assert json.loads((run_dir / "summary.json").read_text())["complete"] is False
    assert job.result.summary is None and job.result.check is None and job.result.scenario is None
    assert not (run_dir / "scenario.json").exists()


class StartedCluster:
    """Stands in for a KafkaCluster its caller started, to share: nodes up, topics listed."""

    def __init__(self, spec: ClusterSpec, topics=("__consumer_offsets",)):
        real = spec.build()
        self.version, self.shape, self.config = real.version, real.shape, real.config
        self.metadata_version, self.cluster_id, self.run_id = real.metadata_version, "cid", "shared1234"
        self.quorum, self.disk = real.quorum, real.disk
        self.tiered, self.tiered_plugin = real.tiered, real.tiered_plugin
        self.nodes, self.bootstrap_servers, self.entered = ["kafka-1"], "127.0.0.1:1", 0
        self._topics = set(topics)

    def topics(self):
        return self._topics

    def __enter__(self):  # a run must never start (or stop) a cluster it was given
        self.entered += 1
        return self


def test_a_run_fits_the_shared_cluster_its_spec_describes():
    cluster = ClusterSpec("3.9.1", config={"a": "b"})
    RunSpec(cluster, WorkloadOptions(topic="chaos-2")).check_shared(StartedCluster(cluster, topics=["chaos-1"]))


@pytest.mark.parametrize(
    ("spec", "cluster", "message"),
    [
        (RunSpec(ClusterSpec(), nemesis=nemesis_plan("kill", 5, None)), ClusterSpec(), "cannot have faults"),
        (RunSpec(ClusterSpec(), evidence=True), ClusterSpec(), "cannot read evidence"),
        (RunSpec(ClusterSpec("3.9.1")), ClusterSpec("4.3.1"), "asks for Kafka 3.9.1, the shared cluster has 4.3.1"),
        (RunSpec(ClusterSpec(nodes=5)), ClusterSpec(), "asks for the shape"),
        (RunSpec(ClusterSpec(config={"a": "b"})), ClusterSpec(), "asks for the broker config {'a': 'b'}"),
        (RunSpec(ClusterSpec(metadata_version="3.9-IV0")), ClusterSpec(), "asks for the metadata version 3.9-IV0"),
        (RunSpec(ClusterSpec(), WorkloadOptions(topic="__consumer_offsets")), ClusterSpec(), "'__consumer_offsets' is"),
    ],
)
def test_a_run_that_does_not_fit_the_shared_cluster_is_bad_input(spec, cluster, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        spec.check_shared(StartedCluster(cluster))


def test_a_cluster_that_is_not_started_cannot_be_shared():
    cluster = StartedCluster(ClusterSpec())
    cluster.nodes = []
    with pytest.raises(UsageError, match="the shared cluster is not started"):
        RunSpec(ClusterSpec()).check_shared(cluster)


def test_a_run_on_a_shared_cluster_has_its_own_run_id_and_leaves_the_cluster_alone(tmp_path, monkeypatch):
    seen = []

    def phase_run(self):
        seen.append((self.run_id, self.opts.topic))
        raise RuntimeError("the workload crashed")

    monkeypatch.setattr(run_mod.WorkloadPhase, "run", phase_run)
    shared = StartedCluster(ClusterSpec())
    job = run_mod.Run(RunSpec(ClusterSpec(), store=tmp_path), silent, cluster=shared)
    with pytest.raises(RuntimeError, match="the workload crashed"):
        job.execute()
    config = json.loads((job.result.run_dir / "config.json").read_text())
    assert config["cluster_run_id"] == "shared1234" and config["cluster_id"] == "cid"
    assert len(config["run_id"]) == 10 and config["run_id"] != "shared1234"
    assert seen == [(config["run_id"], "chaos")]
    assert shared.entered == 0  # neither started nor stopped by the run
    assert not (job.result.run_dir / "cluster").exists()


def test_a_run_without_a_seed_draws_one_and_records_it_and_a_given_seed_is_kept(tmp_path, monkeypatch):
    real_build = RunSpec.build_cluster
    monkeypatch.setattr(RunSpec, "build_cluster", lambda self: ClusterThatDoesNotStart(real_build(self)))
    seeds = []
    for given in (None, None, 1234):
        job = run_mod.Run(RunSpec(ClusterSpec(), store=tmp_path, seed=given), silent)
        with pytest.raises(RuntimeError, match="did not start"):
            job.execute()
        recorded = json.loads((job.result.run_dir / "config.json").read_text())["seed"]
        assert isinstance(recorded, int) and recorded == job.result.spec.seed
        seeds.append(recorded)
    assert seeds[0] != seeds[1] and seeds[2] == 1234
    assert RunSpec(ClusterSpec()).seed is None  # the caller's spec is left as it was


def test_the_check_options_are_the_specs_and_the_cli_fills_them_in():
    args = build_parser().parse_args(["run", "--check", "--spark-master", "spark://127.0.0.1:7077", "--seed", "9"])
    spec = _run_spec(args)
    assert (spec.check, spec.spark_master, spec.report, spec.seed) == (True, "spark://127.0.0.1:7077", True, 9)
    plain = _run_spec(build_parser().parse_args(["run"]))
    assert (plain.check, plain.spark_master, plain.seed) == (False, None, None)
