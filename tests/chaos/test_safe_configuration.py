"""The safe configuration survives kill, pause and partition on the newest release.

Copy this file to start a chaos suite of your own: the `kafka` marker says which cluster, and
`chaos_run` starts it, runs the workload under the nemesis, checks the history and returns the
verdict. Run it on other versions with `pytest --kafka-versions 3.9.1,4.3.1`.

Safe configuration: the workload's defaults (acks=all, idempotence, replication factor 3,
min.insync.replicas 2, auto.offset.reset=none; workloads/options.py). Under a nemesis, brokers
notice a dead or paused peer within seconds (harness/config.py FAULT_DETECTION, applied by
the run), so that every fault has an effect within its hold.

A VALID verdict is worth as much as the traffic behind it: the test also asserts that the
workload kept writing between faults (result.liveness, checkers/measures/liveness.py).
"""

import pytest

from tests.chaos.traffic import assert_traffic_between_faults


@pytest.mark.kafka(nodes=3)
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
    # ...and the workload was not wedged between faults, for operations and for writes alike.
    assert_traffic_between_faults(result)
