"""A share group (KIP-932) under faults: the leader of the group's partitions killed, beside
random kills. Valid, every acknowledged value delivered by the drain; a redelivery across the
leader change is reported (`share-redelivered-on-failover`), never an error."""

import pytest

from kafka_chaos.history.file import read_history
from kafka_chaos.history.run_dir import RunDir


@pytest.mark.kafka(nodes=3, min_version="4.1.0")
def test_a_share_group_survives_its_partitions_leader_killed(chaos_run):
    result = chaos_run(
        client="java",
        consumer="share",
        nemesis="kill@leader:chaos/0,kill",
        interval=6,
        nemesis_start=8,
        time_limit=40,
        rate=300,
        concurrency=6,
        share_lock_ms=3000,
        final_time_limit=90,
        seed=7,
    )
    assert result.valid is True, result.explain()
    assert "kill" in result.faults, result.faults
    events = list(read_history(RunDir(result.run_dir).history))
    killed = [e for e in events if e["process"] == "nemesis" and e["type"] == "ok" and e["f"] == "kill"]
    assert any(str(e["value"].get("target", "")).startswith("leader:") for e in killed), killed
    assert result.workload["final_read_complete"], result.workload
    live = result.liveness
    assert live["ops_per_s"]["between_faults"] and live["writes_per_s"]["between_faults"], live
