"""Tiered storage's pure facts (harness/tiered.py): which releases have it, what a broker and a
topic set, and how the remote storage's segments are read."""

import pytest

from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.tiered import (
    RSM_CLASS,
    STORAGE_ROOT,
    ReadSources,
    broker_config,
    check_tiered,
    local_log_starts,
    partition_of_folder,
    remote_segments,
    retention_margin,
    topic_config,
)
from kafka_chaos.harness.versions import KafkaVersion

TOPIC_ID = "MZgp-_LYTxKPWwZWlcP6Cw"  # 22 characters, as Kafka writes a topic id


@pytest.mark.parametrize("version", ["3.4.1", "3.5.2"])
def test_a_release_before_3_6_has_no_tiered_storage(version):
    with pytest.raises(UsageError, match=f"--tiered needs Kafka 3.6.0 or later .*{version} has none"):
        check_tiered(KafkaVersion.parse(version))
    with pytest.raises(UsageError, match="--tiered needs Kafka 3.6.0"):
        ClusterSpec(version, tiered=True)


@pytest.mark.parametrize("version", ["3.6.0", "3.9.1", "4.4.0"])
def test_a_release_from_3_6_has_it(version):
    check_tiered(KafkaVersion.parse(version))
    assert ClusterSpec(version, tiered=True).describe().endswith(", tiered storage")


def test_a_broker_loads_the_named_releases_local_tiered_storage():
    config = broker_config(3, "4.3.1")
    assert config["remote.log.storage.manager.class.name"] == RSM_CLASS
    assert config["remote.log.storage.manager.class.path"].endswith("/kafka-storage-4.3.1-test.jar")
    assert config["rlmm.config.remote.log.metadata.topic.replication.factor"] == "3"
    assert broker_config(1, "4.3.1")["rlmm.config.remote.log.metadata.topic.replication.factor"] == "1"


def test_a_tiered_topics_retention_is_far_above_what_the_run_writes():
    config = topic_config(2000, 60)
    assert config["remote.storage.enable"] == "true"
    assert int(config["local.retention.ms"]) < int(config["retention.ms"])
    assert int(config["retention.ms"]) >= 100 * 60_000
    assert int(config["retention.bytes"]) >= 100 * 2000 * 60 * 100  # 100 bytes a record is not enough
    assert int(topic_config(1, 1)["retention.bytes"]) >= 100 << 20  # never below 100 MiB


def test_remote_segments_are_read_per_partition_lowest_first(tmp_path):
    folder = tmp_path / STORAGE_ROOT / f"chaos-0-{TOPIC_ID}"
    folder.mkdir(parents=True)
    for base in (120, 0, 57):
        (folder / f"{base:020d}-x9.log").write_text("")
        (folder / f"{base:020d}-x9.index").write_text("")
    (folder / "stray.log").write_text("")
    got = remote_segments(tmp_path)
    assert [b for b, _ in got[f"chaos-0-{TOPIC_ID}"]] == [0, 57, 120]
    assert partition_of_folder(f"chaos-0-{TOPIC_ID}") == ("chaos", "0")
    assert partition_of_folder(f"my-topic-12-{TOPIC_ID}") == ("my-topic", "12")
    assert partition_of_folder("chaos-0") is None
    assert remote_segments(tmp_path / "absent") == {}


def _segment(folder, base: int, size: int = 10) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{base:020d}.log").write_bytes(b"x" * size)


def test_a_keys_local_start_is_the_lowest_segment_on_any_broker(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    _segment(one / "chaos-0", 40)
    _segment(two / "chaos-0", 25)
    _segment(two / "chaos-0", 90)
    _segment(one / "chaos-1", 7)
    assert local_log_starts([one, two], ["chaos/0", "chaos/1", "chaos/2"]) == {
        "chaos/0": 25,
        "chaos/1": 7,
        "chaos/2": None,
    }


def _poll(records: dict, kind: str = "ok", f: str = "poll") -> dict:
    return {"type": kind, "f": f, "process": 1, "value": [[f, records]]}


def test_the_final_reads_records_below_the_local_start_came_from_remote():
    sources = ReadSources()
    sources.add(_poll({"chaos/0": [[0, 1], [1, 2]]}))  # before the final read: not counted
    sources.begin({"chaos/0": 2, "chaos/1": None})
    sources.add(_poll({"chaos/0": [[0, 1], [1, 2], [2, 3]], "chaos/1": [[0, 9]]}))
    sources.add(_poll({"chaos/0": [[1, 2], [2, 3]]}))  # read again by another process: once
    sources.add(_poll({"chaos/0": [[1, 2]]}, kind="invoke"))
    sources.add(_poll({"chaos/0": [[0, 1]]}, f="share-poll"))
    got = sources.measure()
    assert (got["from_remote"], got["from_local"]) == (2, 2)
    assert got["local_log_start"] == {"chaos/0": 2, "chaos/1": None}


def test_retention_is_proved_unable_to_delete_from_the_largest_partition(tmp_path):
    data, remote = tmp_path / "data", tmp_path / "remote"
    _segment(data / "chaos-0", 0, 300)
    remote_folder = remote / STORAGE_ROOT / f"chaos-0-{TOPIC_ID}"
    remote_folder.mkdir(parents=True)
    (remote_folder / f"{0:020d}-x9.log").write_bytes(b"x" * 500)
    topic = {"retention.bytes": "801", "retention.ms": "60000"}
    margin = retention_margin(topic, [data], remote, ["chaos/0", "chaos/1"], 30.0)
    assert margin["largest_partition_bytes"] == 800 and margin["nothing_deletable"] is True
    assert (
        retention_margin({**topic, "retention.bytes": "800"}, [data], remote, ["chaos/0"], 30.0)["nothing_deletable"]
        is False
    )
    assert retention_margin(topic, [data], remote, ["chaos/0"], 60.0)["nothing_deletable"] is False
