"""acks=1 loses acknowledged writes when the leader is killed, as Kafka's documentation says:
the leader acknowledges before any follower has the record, and a follower that becomes leader
without it never gets it. The same kills with acks=all and min.insync.replicas=2 lose nothing.

Both runs are the library scenarios acks1-failover and acks-all-failover (scenarios/, `kafka-chaos
scenarios` lists them): a scenario brings its cluster config, workload and a nemesis script that
waits for each kill to take effect, so the loss shows up on every run, not on lucky ones. Both
run nightly (`nightly`, for the suite's time: tests/conftest.py): the suite runs acks1-failover on
every commit as the pytest plugin's failing test (tests/integration/test_pytest_plugin.py), which
holds it to the same loss.
"""

import pytest

from tests.chaos.traffic import assert_control_wrote


@pytest.mark.nightly
def test_acks1_loses_acknowledged_writes_under_leader_kills(chaos_run):
    result = chaos_run(scenario="acks1-failover")
    assert result.script == "completed"  # both leader kills happened as scripted
    assert result.valid is False
    assert result.lost > 0, result.anomalies


@pytest.mark.nightly  # the safe configuration's own chaos test survives kills in every run of the suite
def test_acks_all_keeps_them_under_the_same_kills(chaos_run):
    result = chaos_run(scenario="acks-all-failover")
    assert result.script == "completed"
    assert result.valid is True
    assert_control_wrote(result)
