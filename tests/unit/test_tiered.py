"""Tiered storage's pure facts (harness/tiered.py): which releases have it, which remote storage
a release gets, what a broker and a topic set, and how the remote storage's segments are read."""

import re
import zipfile
from pathlib import Path

import pytest

from kafka_chaos.harness import tiered
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.tiered import (
    OWN_CLASS,
    OWN_JAR,
    OWN_SOURCE,
    PLUGIN_DIR,
    RSM_CLASS,
    STORAGE_ROOT,
    Plugin,
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
from kafka_chaos.history.tiered import LogStarts

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
    plugin = Plugin.local_tiered_storage(Path("/cache/4.3.1-tiered"), "4.3.1")
    config = broker_config(3, plugin)
    assert config["remote.log.storage.manager.class.name"] == RSM_CLASS
    assert config["remote.log.storage.manager.class.path"] == f"{PLUGIN_DIR}/kafka-storage-4.3.1-test.jar"
    assert config["rlmm.config.remote.log.metadata.topic.replication.factor"] == "3"
    assert broker_config(1, plugin)["rlmm.config.remote.log.metadata.topic.replication.factor"] == "1"
    assert plugin.describe() == {"storage": "LocalTieredStorage", "release": "4.3.1"}
    assert str(plugin) == "4.3.1's LocalTieredStorage"


def test_a_broker_loads_ours_by_its_own_class_and_jar():
    plugin = Plugin.own(Path("/cache/rsm-4.4.0-abc"), "4.4.0")
    config = broker_config(3, plugin)
    assert config["remote.log.storage.manager.class.name"] == OWN_CLASS
    assert config["remote.log.storage.manager.class.path"] == f"{PLUGIN_DIR}/{OWN_JAR}"
    assert config["rsm.config.dir"] == tiered.REMOTE_DIR
    assert plugin.describe() == {"storage": "FolderRemoteStorageManager", "release": "4.4.0"}
    assert "FolderRemoteStorageManager, built against 4.4.0" in str(plugin)


def test_our_java_source_is_what_the_harness_names_and_reads():
    """The class, the jar and the root folder are written in Java and in Python: they must agree."""
    package, name = OWN_CLASS.rsplit(".", 1)
    source = OWN_SOURCE / "src" / "main" / "java" / Path(*package.split(".")) / f"{name}.java"
    java = source.read_text()
    assert f"package {package};" in java and f"public final class {name} " in java
    assert f'ROOT = "{STORAGE_ROOT}"' in java
    # The name remote_segments reads: 20-digit base offset, then the segment id.
    assert '"%020d-%s%s"' in java and 'LOG(".log")' in java
    pom = (OWN_SOURCE / "pom.xml").read_text()
    assert re.search(rf"<finalName>{re.escape(OWN_JAR.removesuffix('.jar'))}</finalName>", pom)


def write_jar(path, *classes: str) -> None:
    with zipfile.ZipFile(path, "w") as jar:
        for name in classes:
            jar.writestr(name.replace(".", "/") + ".class", b"\xca\xfe\xba\xbe")


class FakeMaven:
    """Stands in for Maven Central: the releases with a kafka-storage test jar, and our builds."""

    def __init__(
        self, monkeypatch, tmp_path, test_jars: set[str], releases: list[str], without: frozenset = frozenset()
    ):
        """`test_jars`: the releases whose test jar Maven serves; `without`: those of them whose jar
        lacks LocalTieredStorage (4.4.0's does)."""
        monkeypatch.setenv("KAFKA_CHAOS_CACHE", str(tmp_path))
        self.asked: list[str] = []
        self.built: list[str] = []

        def fetch(release, dest):
            self.asked.append(release)
            if release in test_jars:
                holds = "Other" if release in without else "LocalTieredStorage"
                write_jar(dest / tiered.plugin_jar(release), f"org.apache.kafka.server.log.remote.storage.{holds}")
            return release in test_jars

        def build(version, log=None):
            self.built.append(str(version))
            return tmp_path / "own"

        monkeypatch.setattr(tiered, "_fetch_test_jar", fetch)
        monkeypatch.setattr(tiered, "_release_versions", lambda upto: releases)
        monkeypatch.setattr(tiered, "build_own", build)


def test_a_release_with_its_own_test_jar_gets_its_local_tiered_storage(monkeypatch, tmp_path):
    maven = FakeMaven(monkeypatch, tmp_path, {"3.9.1"}, ["3.9.1", "3.9.0"])
    plugin = tiered.resolve_plugin(KafkaVersion.parse("3.9.1"))
    assert (plugin.class_name, plugin.release) == (RSM_CLASS, "3.9.1")
    assert (plugin.folder / plugin.jar).is_file() and maven.built == []


def test_without_its_own_test_jar_a_release_gets_an_earlier_patchs(monkeypatch, tmp_path):
    maven = FakeMaven(monkeypatch, tmp_path, {"4.2.1", "4.2.0"}, ["4.2.2", "4.2.1", "4.2.0"])
    plugin = tiered.resolve_plugin(KafkaVersion.parse("4.2.2"))
    assert (plugin.class_name, plugin.release, plugin.jar) == (RSM_CLASS, "4.2.1", "kafka-storage-4.2.1-test.jar")
    assert maven.asked == ["4.2.2", "4.2.1"] and maven.built == []


def test_without_any_test_jar_of_its_minor_line_a_release_gets_ours_and_maven_is_asked_once(monkeypatch, tmp_path):
    maven = FakeMaven(monkeypatch, tmp_path, {"4.3.1"}, ["4.4.0"])
    plugin = tiered.resolve_plugin(KafkaVersion.parse("4.4.0"))
    assert plugin == Plugin(tmp_path / "own", OWN_JAR, OWN_CLASS, "FolderRemoteStorageManager", "4.4.0")
    assert maven.asked == ["4.4.0"]
    tiered.resolve_plugin(KafkaVersion.parse("4.4.0"))
    assert maven.asked == ["4.4.0"] and maven.built == ["4.4.0", "4.4.0"]  # the build is cached in build_own


def test_a_test_jar_without_local_tiered_storage_is_not_taken_for_it(monkeypatch, tmp_path):
    maven = FakeMaven(monkeypatch, tmp_path, {"4.4.0"}, ["4.4.0"], without=frozenset({"4.4.0"}))
    plugin = tiered.resolve_plugin(KafkaVersion.parse("4.4.0"))
    assert plugin.class_name == OWN_CLASS and maven.built == ["4.4.0"]
    assert not list((tmp_path / "jars" / "4.4.0-tiered").glob("*.jar"))


def test_an_earlier_patchs_jar_is_taken_only_if_it_holds_the_class(monkeypatch, tmp_path):
    FakeMaven(monkeypatch, tmp_path, {"4.2.2", "4.2.1"}, ["4.2.2", "4.2.1", "4.2.0"], without=frozenset({"4.2.2"}))
    plugin = tiered.resolve_plugin(KafkaVersion.parse("4.2.2"))
    assert (plugin.class_name, plugin.release) == (RSM_CLASS, "4.2.1")


def test_a_cached_jar_without_the_class_is_asked_for_again(monkeypatch, tmp_path):
    maven = FakeMaven(monkeypatch, tmp_path, {"4.4.0"}, ["4.4.0"], without=frozenset({"4.4.0"}))
    cached = tmp_path / "jars" / "4.4.0-tiered"
    cached.mkdir(parents=True)
    write_jar(cached / tiered.plugin_jar("4.4.0"), "org.apache.kafka.Other")
    (cached / "release").write_text("4.4.0")
    (cached / ".complete").write_text("4.4.0")
    assert tiered.resolve_plugin(KafkaVersion.parse("4.4.0")).class_name == OWN_CLASS
    assert maven.asked == ["4.4.0"]


def test_holds_class_reads_the_jar(tmp_path):
    write_jar(tmp_path / "a.jar", RSM_CLASS)
    (tmp_path / "b.jar").write_text("not a zip")
    assert tiered.holds_class(tmp_path / "a.jar", RSM_CLASS)
    assert not tiered.holds_class(tmp_path / "a.jar", OWN_CLASS)
    assert not tiered.holds_class(tmp_path / "b.jar", RSM_CLASS)
    assert not tiered.holds_class(tmp_path / "missing.jar", RSM_CLASS)


def test_our_build_is_cached_per_version_and_source(tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKA_CHAOS_CACHE", str(tmp_path))
    before = tiered.own_dir(KafkaVersion(4, 4, 0))
    assert before.parent == tmp_path / "tiered" and before.name.startswith("rsm-4.4.0-")
    source = tmp_path / "rsm"
    source.mkdir()
    (source / "pom.xml").write_text("<project/>")
    monkeypatch.setattr(tiered, "OWN_SOURCE", source)
    assert tiered.own_dir(KafkaVersion(4, 4, 0)) != before


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
    got = sources.measure().to_json()
    assert (got["from_remote"], got["from_local"]) == (2, 2)
    assert got["local_log_start"] == {"chaos/0": 2, "chaos/1": None}


def test_retention_is_proved_unable_to_delete_from_the_largest_partition(tmp_path):
    data, remote = tmp_path / "data", tmp_path / "remote"
    _segment(data / "chaos-0", 7, 300)
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


def test_a_local_copy_of_a_remote_segment_counts_once(tmp_path):
    # A topic that keeps its local copies (kafka-20732): segment 0 is local and remote, 7 local only.
    data, remote = tmp_path / "data", tmp_path / "remote"
    _segment(data / "chaos-0", 0, 500)
    _segment(data / "chaos-0", 7, 300)
    remote_folder = remote / STORAGE_ROOT / f"chaos-0-{TOPIC_ID}"
    remote_folder.mkdir(parents=True)
    (remote_folder / f"{0:020d}-x9.log").write_bytes(b"x" * 500)
    margin = retention_margin({"retention.bytes": "801", "retention.ms": "60000"}, [data], remote, ["chaos/0"], 30.0)
    assert margin["largest_partition_bytes"] == 800 and margin["nothing_deletable"] is True


def test_log_starts_lists_every_replica_and_never_takes_an_unknown_start_for_zero(tmp_path):
    folder = tmp_path / STORAGE_ROOT / f"chaos-0-{TOPIC_ID}"
    folder.mkdir(parents=True)
    for base in (40, 12):
        (folder / f"{base:020d}-x9.log").write_text("")
    keys = ["chaos/0", "chaos/1"]

    def ask(broker: int) -> dict:
        if broker == 2:
            raise TimeoutError("no answer")
        if broker == 4:
            raise AssertionError("broker 4 holds no replica: it is not asked")
        answer = {key: {"log_start": 0, "local_log_start": 9} for key in keys}
        if broker == 3:
            answer["chaos/1"] = {"log_start": None, "local_log_start": None, "error": {"log_start": 6}}
        return answer

    got = tiered.log_starts(ask, {k: [1, 2, 3] for k in keys}, [1, 2, 3, 4], keys, tmp_path).to_json()
    first, second = got["partitions"]["chaos/0"], got["partitions"]["chaos/1"]
    assert sorted(first["replicas"]) == ["1", "2", "3"]  # broker 4 is no replica
    assert first["replicas"]["1"]["log_start"] == 0
    assert first["replicas"]["2"]["log_start"] is None and "TimeoutError" in first["replicas"]["2"]["error"]
    assert second["replicas"]["3"] == {"log_start": None, "local_log_start": None, "error": {"log_start": 6}}
    assert got["unanswered"] == {"2": "TimeoutError: no answer"}
    assert first["remote"] == {"segments": 2, "lowest_offset": 12} and second["remote"]["lowest_offset"] is None

    everyone = tiered.log_starts(lambda b: {k: {"log_start": 0} for k in keys}, None, [1, 2], keys, tmp_path).to_json()
    assert sorted(everyone["partitions"]["chaos/1"]["replicas"]) == ["1", "2"]  # no metadata: every broker


def test_the_lowest_local_start_is_the_replicas_lowest_answer_zero_included():
    starts = {
        "partitions": {
            "chaos/0": {"replicas": {"1": {"local_log_start": 40}, "2": {"local_log_start": 0}}},
            "chaos/1": {"replicas": {"1": {"local_log_start": 12}, "2": {"local_log_start": None, "error": "x"}}},
            "chaos/2": {"replicas": {"1": {"local_log_start": None, "error": "x"}}},
        }
    }
    got = tiered.lowest_local_starts(LogStarts.from_json(starts))
    assert got == {"chaos/0": 0, "chaos/1": 12}  # chaos/2: no answer
