"""The chaos suite's claims hold for the Java client and librdkafka too (kafka-python's are
test_acks1_leader_kills.py and test_safe_configuration.py): acks=1 loses acknowledged writes
under leader kills; the safe configuration (acks=all, min.insync.replicas=2) survives kill,
pause and partition with the workload writing between faults. The acks=all control of the
leader kills themselves (acks-all-failover) runs for kafka-python only: for these two clients
the safe configuration's run is the acks=all side, under more kinds of fault.

These run nightly (`nightly`, tests/conftest.py: `--nightly`), beside the nightly matrix's runs of
every client under every nemesis; `./dev.sh test` keeps kafka-python's.

To turn a suite of your own over the clients, pass `--kafka-clients kafka-python,java,librdkafka`:
every test that uses chaos_run then runs once per client (a call's own `client=` still wins).
"""

import pytest

from tests.chaos.known import assert_valid_but_for_known
from tests.chaos.traffic import assert_traffic_between_faults

CLIENTS = ["librdkafka", "java"]
pytestmark = pytest.mark.nightly


@pytest.mark.parametrize("client", CLIENTS)
def test_acks1_loses_acknowledged_writes_under_leader_kills(chaos_run, client):
    lossy = chaos_run(scenario="acks1-failover", client=client)
    assert lossy.script == "completed"
    assert lossy.valid is False
    assert lossy.lost > 0, lossy.anomalies


@pytest.mark.kafka(nodes=3)
@pytest.mark.parametrize("client", CLIENTS)
def test_safe_configuration_survives_kill_pause_and_partition(chaos_run, client):
    result = chaos_run(
        client=client,
        nemesis="kill,pause,partition",
        interval=5,
        time_limit=40,
        rate=300,
        concurrency=8,
        final_time_limit=90,
        seed=5,
    )
    assert_valid_but_for_known(result, client)
    assert {"kill", "pause", "partition"} <= set(result.faults), result.faults
    assert result.workload["counts"]["ok"] > 0
    assert_traffic_between_faults(result)
