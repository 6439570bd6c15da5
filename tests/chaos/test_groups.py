"""Consumer groups under faults, through every client: the safe configuration with `--consumer
mixed` (half the processes in one group, half assigning), members churning, and the group's
coordinator killed and paused beside random kills, pauses and partitions, is valid, and the
group's own drain delivers every acknowledged value.

`./dev.sh test` runs kafka-python's; librdkafka's and the Java client's, and the auto-commit
scenario with its control, are `nightly` (tests/conftest.py: `--nightly`).
"""

import pytest

from kafka_chaos.history.file import read_history
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.workloads.clients.api import CLIENTS
from tests.chaos.known import KNOWN_FAILOVER_ANOMALIES, assert_valid_but_for_known

FAULTS = "kill,pause,partition,kill@group-coordinator,pause@group-coordinator"
#: One worker runs the group tests, one cluster at a time (tests/integration/test_groups.py).
pytestmark = pytest.mark.xdist_group("consumer-groups")
#: kafka-python in the suite, the other clients nightly.
BY_CLIENT = [c if c == "kafka-python" else pytest.param(c, marks=pytest.mark.nightly) for c in CLIENTS]


@pytest.mark.kafka(nodes=3)
@pytest.mark.parametrize("client", BY_CLIENT)
def test_a_mixed_group_survives_coordinator_kills_pauses_and_partitions(chaos_run, client):
    result = chaos_run(
        client=client,
        consumer="mixed",
        group_churn=7,
        nemesis=FAULTS,
        interval=5,
        nemesis_start=15,
        time_limit=60,
        rate=300,
        concurrency=8,
        final_time_limit=180,
        seed=11,
    )
    assert_valid_but_for_known(result, client)
    assert {"kill", "pause", "partition"} <= set(result.faults), result.faults
    aimed = [
        e["f"]
        for e in read_history(RunDir(result.run_dir).history)
        if e["process"] == "nemesis" and e["type"] == "ok" and e["value"].get("target") == "group-coordinator"
    ]
    # The coordinator was found and hit (in CI's load one Java run's kill@group-coordinator lookup
    # failed, a recorded nemesis failure; its pause hit).
    assert aimed and set(aimed) <= {"kill", "pause"}, aimed
    # Every member's rebuild after an unknown commit is a new eager rebalance of the whole group, so in
    # CI's load the drain can outlast 90 s (docs/measurements.md, 2026-11-25); 180 s bounds that.
    assert result.workload["final_read_complete"], result.workload
    assert result.workload["members_churned"] >= 2, result.workload
    counts = result.workload["counts"]
    assert counts.get("subscribe:ok", 0) > 0, counts
    # kafka-python's members may read nothing before the drain in CI's load, so commit nothing
    # (docs/measurements.md, 2026-11-25); the drain above delivered everything. The other clients commit.
    if client != "kafka-python":
        assert counts.get("commit:ok", 0) > 0, counts
    # Traffic comes back between faults: ok operations and acknowledged writes. At what share of
    # its rate before them depends on how fast this machine's group rejoins after every healed
    # coordinator fault: that goal is bench/group_coverage.py's (BETWEEN_FAULTS_GOAL).
    live = result.liveness
    assert live["ops_per_s"]["between_faults"] and live["writes_per_s"]["between_faults"], live


@pytest.mark.nightly
def test_auto_commit_skips_what_a_crashed_member_never_handled(chaos_run):
    """The scenario auto-commit-crash: a member's close commits past the records it polled and
    never handled, and the group skips them; its control with synchronous commits skips none."""
    lossy = chaos_run(scenario="auto-commit-crash")
    assert lossy.script == "completed"
    crashed = lossy.workload["members_crashed"]
    if crashed < 3:  # a skip naming the count, not a pass: the run could not tell
        pytest.skip(f"auto-commit-crash: {crashed} member crashes in 30 s (the group barely held keys in this load)")
    # A skip is lost-write, or unseen where no later value of its key was delivered: since
    # kafka-python's members hold their keys (issue 38) the skips reach a key's end too.
    assert "lost-write" in lossy.anomalies and set(lossy.anomalies) <= {"lost-write", "unseen"}, lossy.anomalies
    assert lossy.lost > 0, lossy.anomalies
    control = chaos_run(scenario="sync-commit-crash")
    assert control.script == "completed"
    # Nothing skipped; kafka-python's own stale committed offsets (tests/chaos/known.py) aside.
    assert set(control.anomalies) <= KNOWN_FAILOVER_ANOMALIES["kafka-python"], control.anomalies
    assert control.valid is True or control.anomalies, control.anomalies
