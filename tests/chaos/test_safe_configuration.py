"""The safe configuration survives kill, pause and partition on the newest release.

Copy this file to start a chaos suite of your own: the `kafka` marker says which cluster, and
`chaos_run` starts it, runs the workload under the nemesis, checks the history and returns the
verdict. Run it on other versions with `pytest --kafka-versions 3.9.1,4.3.1`.

Safe configuration: the workload's defaults (acks=all, idempotence, replication factor 3,
min.insync.replicas 2, auto.offset.reset=none; workloads/options.py) and brokers that notice
a dead or paused peer within seconds, so that every fault has an effect within its hold.
"""

import pytest

FAST_FAILURE_DETECTION = {
    "replica.lag.time.max.ms": "3000",  # a stopped follower leaves the ISR after 3 s
    "broker.session.timeout.ms": "4000",  # the controller fences a silent broker after 4 s
    "broker.heartbeat.interval.ms": "500",
}


@pytest.mark.kafka(nodes=3, config=FAST_FAILURE_DETECTION)
def test_safe_configuration_survives_kill_pause_and_partition(chaos_run):
    result = chaos_run(
        nemesis="kill,pause,partition",  # mixed at random, each once per round
        interval=5,  # 5 s quiet, 5 s fault, heal, ...
        time_limit=40,
        rate=300,
        concurrency=8,
        final_time_limit=90,
        seed=5,
    )
    assert result.valid is True  # on failure: the anomalies and the report's path
    # The run proves something only if the faults happened and writes were acknowledged.
    assert {"kill", "pause", "partition"} <= set(result.faults), result.faults
    assert result.workload["counts"]["ok"] > 0
