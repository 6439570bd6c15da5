"""Real KRaft clusters: they come up, keep acks=all writes, and leave nothing behind."""

import pytest
from kafka import TopicPartition
from testcontainers.core.network import Network

from kafka_chaos.harness.admin import live_brokers
from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.config import ClusterShape
from kafka_chaos.harness.errors import ClusterStartError
from kafka_chaos.harness.node import KafkaNode
from kafka_chaos.harness.smoke import account, produce, produce_and_read_back, read_all
from kafka_chaos.harness.versions import DEFAULT_VERSION, OLDEST_SUPPORTED, KafkaVersion
from tests.integration.storage import meta_properties

pytestmark = pytest.mark.cluster


#: Feature levels the format tool writes by default (bootstrap.checkpoint): a node laid out from the
#: image's formatted template must start with them, not with the levels of an unformatted node
#: (metadata.version from the inter-broker protocol, the other features 0).
DEFAULT_FEATURES = {
    OLDEST_SUPPORTED: {"metadata.version": 8},  # 3.4-IV0
    DEFAULT_VERSION: {"transaction.version": 2, "eligible.leader.replicas.version": 1, "group.version": 1},
}


@pytest.mark.parametrize("version", [OLDEST_SUPPORTED, DEFAULT_VERSION])
def test_three_nodes_take_10000_acks_all_records_and_return_them(version, docker_api, assert_nothing_left, tmp_path):
    with KafkaCluster(version).with_nodes(3).with_workdir(tmp_path) as cluster:
        run_id = cluster.run_id
        assert len(cluster.bootstrap_servers.split(",")) == 3
        result = produce_and_read_back(cluster, topic="ten-thousand", count=10_000)
        assert result.acknowledged == 10_000, result.account()
        assert result.missing == [] and result.duplicates == [], result.account()
        assert result.read == 10_000
        with cluster.admin() as admin:
            (topic,) = admin.describe_topics(["ten-thousand"])
            assert all(len(p["replica_nodes"]) == 3 and len(p["isr_nodes"]) == 3 for p in topic["partitions"])
            features = admin.describe_features()
        assert {f: features[f]["finalized"] for f in DEFAULT_FEATURES[version]} == {
            f: (level, level) for f, level in DEFAULT_FEATURES[version].items()
        }, features
        # The data and logs are on host folders: the nemesis wipes the former, reports read the latter.
        for node in cluster.nodes:
            # Laid out from the image's template (docker/kafka/entrypoint.sh) as the tool would:
            # a directory id from 3.7 on, none before.
            meta = meta_properties(node)
            assert meta["cluster.id"] == cluster.cluster_id and meta["node.id"] == str(node.node_id), meta
            assert ("directory.id" in meta) is (version == DEFAULT_VERSION), meta
            assert any(node.data_dir.glob("ten-thousand-*"))
            assert "Kafka Server started" in (node.logs_dir / "server.log").read_text()
            # Published on loopback only, with NET_ADMIN for iptables faults.
            container = docker_api.containers.get(node.get_wrapped_container().id)
            attrs = container.attrs
            assert "NET_ADMIN" in attrs["HostConfig"]["CapAdd"]
            # Its JVMs run C1 only (harness/cluster.py NODE_JVM_OPTIONS), and say so.
            output = container.logs().decode(errors="replace")
            assert "Picked up JAVA_TOOL_OPTIONS: -XX:TieredStopAtLevel=1" in output, output[-2000:]
            # From 4.4.0 the format tool writes no bootstrap.checkpoint: no template (docs/cluster.md).
            templated = KafkaVersion.parse(version) < KafkaVersion.parse("4.4.0")
            assert ("from the image's formatted storage" in output) is templated, output[:2000]
            bindings = attrs["HostConfig"]["PortBindings"]["9094/tcp"]
            assert bindings == [{"HostIp": "127.0.0.1", "HostPort": str(node.external_port)}]
    assert_nothing_left(run_id)
    assert (tmp_path / "kafka-1" / "logs" / "server.log").is_file()  # logs kept for the report


def test_dedicated_controllers_shape(assert_nothing_left):
    with KafkaCluster(DEFAULT_VERSION).with_dedicated_controllers(3, 3) as cluster:
        run_id = cluster.run_id
        assert [n.alias for n in cluster.controllers] == ["controller-1", "controller-2", "controller-3"]
        assert [n.alias for n in cluster.brokers] == ["broker-4", "broker-5", "broker-6"]
        with cluster.admin() as admin:
            assert live_brokers(admin) == {4, 5, 6}
            quorum = admin.describe_metadata_quorum()
            voters = {v["replica_id"] for t in quorum["topics"] for p in t["partitions"] for v in p["current_voters"]}
            assert voters == {1, 2, 3}
        result = produce_and_read_back(cluster, count=1000)
        assert result.ok, result.account()
    assert_nothing_left(run_id)


def test_single_node_cluster_honours_config_overrides(assert_nothing_left):
    cluster = KafkaCluster(DEFAULT_VERSION).with_nodes(1).with_config({"num.partitions": "7"})
    with cluster:
        run_id = cluster.run_id
        with cluster.admin() as admin:
            admin.create_topics({"defaults": {}}, wait_for_metadata=True)  # partitions from the broker
            (topic,) = admin.describe_topics(["defaults"])
        assert len(topic["partitions"]) == 7
        result = produce_and_read_back(cluster, count=500, partitions=1)
        assert result.ok, result.account()
    assert_nothing_left(run_id)


def test_pinned_metadata_version_is_what_the_cluster_runs(assert_nothing_left):
    with KafkaCluster(DEFAULT_VERSION).with_nodes(1).with_metadata_version("3.4-IV0") as cluster:
        run_id = cluster.run_id
        with cluster.admin() as admin:
            features = admin.describe_features()
        # A pinned version is not the template's: the format tool itself laid the storage out.
        output = cluster.nodes[0].get_wrapped_container().logs().decode(errors="replace")
        assert "at metadata version 3.4-IV0" in output and "formatted storage" not in output, output[:2000]
    # kafka-python 3.0.12 answers {feature: {"supported": .., "finalized": ..}}, not its docstring's shape.
    assert features["metadata.version"]["finalized"] == (8, 8)  # IBP_3_4_IV0 has feature level 8
    assert_nothing_left(run_id)


def test_a_node_only_records_its_settings_until_it_starts(docker_api, assert_nothing_left, tmp_path):
    """testcontainers' lifecycle: the constructor writes nothing and creates nothing; start() does."""
    (spec,) = ClusterShape(brokers=1).nodes()
    node = KafkaNode(
        "kafka-chaos-no-such-image",
        spec,
        run_id="recordonly",
        cluster_id="AAAAAAAAAAAAAAAAAAAAAA",
        node_dir=tmp_path / spec.alias,
        peers=[spec],
        config={"num.partitions": "7"},
        network=Network(),
        external_port=None,
        heap="-Xmx256m",
    )
    assert not (tmp_path / spec.alias).exists()
    # No JVM options asked for (`with_jvm_options("")`): the JVM's own JIT, nothing in the environment.
    assert "JAVA_TOOL_OPTIONS" not in node.env and node.env["KAFKA_HEAP_OPTS"] == "-Xmx256m"
    assert node.state() == "absent" and node.log_tail() == ""
    assert node.status == "not_started"  # testcontainers' own property, not shadowed
    node.save_container_log()  # nothing to keep yet, and no error
    assert not (tmp_path / spec.alias).exists()
    assert_nothing_left("recordonly")


def test_node_that_cannot_start_fails_fast_with_its_log(assert_nothing_left):
    cluster = KafkaCluster(DEFAULT_VERSION).with_nodes(1).with_config({"num.network.threads": "many"})
    with pytest.raises(ClusterStartError) as failure:
        cluster.start()
    message = str(failure.value)
    assert "kafka-1" in message and "num.network.threads" in message
    assert_nothing_left(cluster.run_id)


def test_read_back_names_records_that_are_gone():
    """The smoke check can fail: records deleted after their acknowledgement are reported missing."""
    with KafkaCluster(DEFAULT_VERSION).with_nodes(1) as cluster:
        cluster.create_topic("deleted", 1, 1, {})
        produced = produce(cluster, "deleted", 300)
        with cluster.admin() as admin:
            admin.delete_records({TopicPartition("deleted", 0): 50})
        result = account("deleted", 300, produced, read_all(cluster, "deleted", 1), 0.0)
    assert result.acknowledged == 300
    assert result.missing == list(range(50))
    assert not result.ok
