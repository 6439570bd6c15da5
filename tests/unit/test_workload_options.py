import re
from dataclasses import fields
from pathlib import Path

import pytest
from kafka.errors import KafkaTimeoutError, MessageSizeTooLargeError, NotEnoughReplicasAfterAppendError

from kafka_chaos.frontends.cli import _workload_options, build_parser
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.workloads.clients.kafka_python import consumer_config, producer_config
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.outcomes import classify, describe, markdown_table
from kafka_chaos.workloads.registry import WORKLOADS, check_workload, get

DOCS = Path(__file__).resolve().parents[2] / "docs" / "history.md"


def test_defaults_are_the_safe_configuration():
    opts = WorkloadOptions().validate()
    config = producer_config(opts)
    assert config["acks"] == "all" and config["enable_idempotence"] is True
    assert opts.replication_factor == 3 and opts.min_insync_replicas == 2
    assert consumer_config(opts)["auto_offset_reset"] == "none"
    assert "retries" not in config  # kafka-python's unlimited default, bounded by the delivery timeout


def test_idempotence_is_always_passed_explicitly():
    assert producer_config(WorkloadOptions(acks="1", enable_idempotence=False))["enable_idempotence"] is False
    assert producer_config(WorkloadOptions(acks="1"))["acks"] == 1


def test_txn_reads_committed_only():
    txn, queue = get("txn").isolation_level, get("queue").isolation_level
    assert consumer_config(WorkloadOptions(workload="txn"), txn)["isolation_level"] == "read_committed"
    assert consumer_config(WorkloadOptions(), queue)["isolation_level"] == "read_uncommitted"


def test_every_workload_has_a_record_and_the_flag_names_them_all():
    assert set(WORKLOADS) == {"queue", "txn"}
    workload_flag = next(f for f in fields(WorkloadOptions) if f.name == "workload")
    assert all(name in workload_flag.metadata["help"] for name in WORKLOADS)
    assert get(WorkloadOptions().workload) is WORKLOADS["queue"]  # the default is registered


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"rate": 0}, "--rate must be greater than 0"),
        ({"rate": -5}, "--rate"),
        ({"workload": "bank"}, "unknown workload 'bank'"),
        ({"acks": "2"}, "--acks must be one of 0, 1, all"),
        ({"acks": "-1"}, "--acks"),
        ({"keys": 0}, "--keys must be at least 1"),
        ({"concurrency": 0}, "--concurrency"),
        ({"auto_offset_reset": "smallest"}, "--auto-offset-reset"),
        ({"workload": "txn", "acks": "1"}, "txn workload needs --acks all"),
        ({"acks": "1"}, "--acks 1 needs --idempotence false"),
        ({"consumer": "group"}, "--consumer must be one of assign, subscribe, mixed, share; got 'group'"),
        (
            {"consumer": "share"},
            "--consumer share needs --client java or librdkafka: kafka-python has no share consumer",
        ),
        ({"consumer": "share", "client": "java", "workload": "txn"}, "--consumer share is for --workload queue"),
        ({"consumer": "share", "client": "java", "group_protocol": "consumer"}, "--group-protocol is for consumer"),
        ({"consumer": "share", "client": "java", "group_churn": 3}, "--group-churn applies to consumer groups"),
        ({"consumer": "share", "client": "java", "share_lock_ms": 500}, "--share-lock-ms must be between 1000"),
        ({"consumer": "share", "client": "java", "share_delivery_limit": 11}, "--share-delivery-limit must be"),
        ({"consumer": "share", "client": "java", "share_stalls": 2}, "--share-stalls must be between 0 and 1"),
        ({"consumer": "share", "client": "java", "share_release": 0.7, "share_reject": 0.5}, "together must be at"),
        ({"commit": "async"}, "--commit must be one of sync, auto, none"),
        ({"topic_config": ["retention.bytes"]}, "topic_config must map topic settings to values"),
        ({"group_churn": -1, "consumer": "mixed"}, "--group-churn must be 0"),
        ({"consumer": "subscribe", "member_crashes": 1.5}, "--member-crashes must be between 0 and 1"),
        ({"group_churn": 5}, "--group-churn applies to group members: add --consumer subscribe or mixed"),
        ({"member_crashes": 0.1}, "--member-crashes applies to group members"),
        ({"workload": "txn", "consumer": "subscribe", "member_crashes": 0.1}, "applies to the queue workload only"),
    ],
)
def test_bad_options_are_usage_errors(changes, message):
    with pytest.raises(UsageError, match=message):
        check_workload(WorkloadOptions(**changes))


def test_share_groups_need_kafka_and_kafka_clients_4_1():
    opts = WorkloadOptions(consumer="share", client="java")
    opts.check_share(KafkaVersion(4, 1, 0))
    with pytest.raises(UsageError, match="--consumer share needs Kafka 4.1.0 or later .* the cluster is 4.0.0"):
        opts.check_share(KafkaVersion(4, 0, 0))
    old_client = WorkloadOptions(consumer="share", client="java", client_version="4.0.1")
    with pytest.raises(UsageError, match="needs kafka-clients 4.1.0 or later .* --client-version is 4.0.1"):
        old_client.check_share(KafkaVersion(4, 3, 1))
    assert not opts.grouped and opts.shares and not opts.subscribes(0)


def test_mixed_consumers_subscribe_on_even_processes_only():
    mixed, subscribe, assign = (WorkloadOptions(consumer=c) for c in ("mixed", "subscribe", "assign"))
    assert [mixed.subscribes(p) for p in range(4)] == [True, False, True, False]
    assert all(subscribe.subscribes(p) for p in range(4)) and not any(assign.subscribes(p) for p in range(4))
    assert mixed.grouped and subscribe.grouped and not assign.grouped


def test_keys_are_topic_partitions():
    assert WorkloadOptions(topic="t", keys=3).key_names == ["t/0", "t/1", "t/2"]


def test_only_errors_that_prove_no_write_are_fail():
    assert classify(MessageSizeTooLargeError()) == "fail"
    assert classify(KafkaTimeoutError()) == "info"
    assert classify(NotEnoughReplicasAfterAppendError()) == "info"  # already in the leader's log
    assert classify(ConnectionError()) == "info"
    assert describe(KafkaTimeoutError("Batch expired")) == "KafkaTimeoutError: Batch expired"


def test_docs_show_the_classification_table_as_the_code_has_it():
    assert markdown_table() in DOCS.read_text()


def _run_flags() -> set[str]:
    run = next(a for a in build_parser()._subparsers._group_actions[0].choices.items() if a[0] == "run")[1]
    return {s for action in run._actions for s in action.option_strings}


def test_every_flagged_option_is_a_run_flag_that_reaches_the_option():
    # A new option is one field with flag(...): its flag, type, default and help follow.
    argv, want = ["run"], {}
    for option in fields(WorkloadOptions):
        if "flag" not in option.metadata:
            continue
        strings = {
            "workload": "txn",
            "acks": "all",
            "auto_offset_reset": "earliest",
            "topic": "t",
            "client": "java",
            "consumer": "mixed",
            "commit": "auto",
            "group_protocol": "consumer",
        }
        value = (strings | {"client_version": "3.9.1"}).get(option.name)
        if value is None:
            value = {bool: False, int: 7, float: 0.25}[type(option.default) if option.default is not None else int]
        argv += [option.metadata["flag"], str(value).lower() if isinstance(value, bool) else str(value)]
        want[option.name] = value
    opts = _workload_options(build_parser().parse_args(argv))
    assert {name: getattr(opts, name) for name in want} == want
    # the 18 flags `kafka-chaos run` had before they were generated, --client, --client-version,
    # --consumer, --commit, --group-churn, --member-crashes, --group-protocol, and a share group's
    # --share-lock-ms, --share-delivery-limit, --share-release, --share-reject, --share-stalls,
    # and --txn-start-epoch
    assert len(want) == 31


@pytest.mark.parametrize(
    "changes",
    [
        {"rate": 0},
        {"acks": "2"},
        {"keys": 0},
        {"concurrency": 0},
        {"time_limit": 0},
        {"auto_offset_reset": "x"},
        {"poll_fraction": 2},
        {"txn_abort_fraction": -1},
        {"send_values": 0},
        {"txn_max_ops": 0},
        {"poll_keys": 0},
        {"workload": "txn", "acks": "1"},
        {"acks": "1"},
        {"client": "rdkafka"},
        {"client_version": "3.9.1"},
        {"client": "java", "client_version": "3"},
        {"consumer": "x"},
        {"commit": "x"},
        {"group_churn": -1},
        {"member_crashes": 0.5},
    ],
)
def test_errors_name_real_flags_or_keywords(changes):
    with pytest.raises(UsageError) as caught:
        WorkloadOptions(**changes).validate()
    message, flags = str(caught.value), _run_flags()
    assert all(word in flags for word in re.findall(r"--[a-z-]+", message)), message
    for name in re.findall(r"\b[a-z]+_[a-z_]+\b", message):  # a keyword: an option with no flag
        assert name in {f.name for f in fields(WorkloadOptions) if "flag" not in f.metadata}, message


class _TopicMaker:
    """What create_topic asks of a cluster: whether it is tiered, and the topic to create."""

    def __init__(self, tiered: bool) -> None:
        self.tiered, self.created = tiered, None

    def create_topic(self, name, partitions, replication, configs, **_):
        self.created = configs


@pytest.mark.parametrize("tiered", [False, True])
def test_a_workloads_topic_config_goes_over_the_runs_own(tiered):
    from kafka_chaos.runs.run import create_topic

    cluster = _TopicMaker(tiered)
    opts = WorkloadOptions(topic_config={"local.retention.ms": -2, "min.insync.replicas": "1"})
    configs = create_topic(cluster, opts)
    assert cluster.created == configs
    assert configs["local.retention.ms"] == "-2" and configs["min.insync.replicas"] == "1"
    assert ("remote.storage.enable" in configs) == tiered  # the tiered settings stay, but for those it overrides


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        ({"workload": "txn", "txn_start_epoch": 32765}, None),  # the highest: the producer's own init adds one
        ({"workload": "txn", "txn_start_epoch": 32766}, "--txn-start-epoch must be between 0 and 32765, got 32766"),
        ({"workload": "txn", "txn_start_epoch": -1}, "--txn-start-epoch must be between 0 and 32765, got -1"),
        ({"txn_start_epoch": 100}, "--txn-start-epoch applies to transactional ids: add --workload txn"),
        ({"workload": "txn", "txn_min_ops": 4, "txn_max_ops": 4}, None),
        ({"workload": "txn", "txn_min_ops": 5, "txn_max_ops": 4}, "txn_min_ops must be between 1 and txn_max_ops"),
        ({"workload": "txn", "txn_min_ops": 0}, "txn_min_ops must be between 1 and txn_max_ops, got 0"),
        ({"workload": "txn", "transaction_timeout_ms": 1}, None),
        ({"workload": "txn", "transaction_timeout_ms": 0}, "transaction_timeout_ms must be at least 1, got 0"),
    ],
)
def test_transactions_near_the_epochs_end_and_of_a_fixed_size_are_checked(options, refused):
    if refused is None:
        WorkloadOptions(**options).validate()
    else:
        with pytest.raises(UsageError, match=re.escape(refused)):
            WorkloadOptions(**options).validate()


def test_the_start_epoch_is_a_flag_of_run():
    args = build_parser().parse_args(["run", "--workload", "txn", "--txn-start-epoch", "32000"])
    assert _workload_options(args).txn_start_epoch == 32000
