"""A tiered cluster with a dedicated controller, on a real Kafka: the controller checks a new
topic's `remote.storage.enable` against its own `remote.log.storage.system.enable`, so it must
set it too (harness/tiered.py CONTROLLER_CONFIG), or CreateTopics of a tiered topic is refused.
The kafka-20732 scenario runs on such a cluster."""

from __future__ import annotations

import pytest

from kafka_chaos.harness.cleanup import find_by_label
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.tiered import topic_config

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(300)]
TIERED_VERSION = "4.3.1"  # Maven Central here has no test jar of the default version (docs/cluster.md)


def test_a_dedicated_controller_of_a_tiered_cluster_accepts_a_tiered_topic(docker_api, tmp_path):
    cluster = ClusterSpec(TIERED_VERSION, controllers=1, brokers=1, tiered=True).build().with_workdir(tmp_path)
    with cluster.with_log(lambda m: None):
        controller = cluster.controllers[0]
        assert controller.config["remote.log.storage.system.enable"] == "true"
        assert "remote.log.storage.manager.class.name" not in controller.config  # a broker's alone
        cluster.create_topic("tiered", 1, 1, {**topic_config(100, 30), "min.insync.replicas": "1"}, timeout_ms=15000)
        with cluster.admin() as admin:
            assert "tiered" in admin.list_topics()
    assert find_by_label(docker_api, cluster.run_id) == ([], [])
