"""Consumer groups under faults, through every client: the safe configuration with `--consumer
mixed` (half the processes in one group, half assigning), members churning, and the group's
coordinator killed and paused beside random kills, pauses and partitions, is valid, and the
group's own drain delivers every acknowledged value.
"""

import pytest

from kafka_chaos.history.file import read_history
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.workloads.clients.api import CLIENTS
from tests.chaos.known import assert_valid_but_for_known
from tests.chaos.traffic import assert_traffic_between_faults

FAULTS = "kill,pause,partition,kill@group-coordinator,pause@group-coordinator"
#: One worker runs the group tests, one cluster at a time (tests/integration/test_groups.py).
pytestmark = pytest.mark.xdist_group("consumer-groups")


@pytest.mark.kafka(nodes=3)
@pytest.mark.parametrize("client", CLIENTS)
def test_a_mixed_group_survives_coordinator_kills_pauses_and_partitions(chaos_run, client):
    result = chaos_run(
        client=client, consumer="mixed", group_churn=7, nemesis=FAULTS, interval=5, nemesis_start=15,
        time_limit=60, rate=300, concurrency=8, final_time_limit=180, seed=11,
    )  # fmt: skip
    assert_valid_but_for_known(result, client)
    assert {"kill", "pause", "partition"} <= set(result.faults), result.faults
    aimed = [
        e["f"] for e in read_history(RunDir(result.run_dir).history)
        if e["process"] == "nemesis" and e["type"] == "ok" and e["value"].get("target") == "group-coordinator"
    ]  # fmt: skip
    # The coordinator was found and hit (in CI's load one Java run's kill@group-coordinator lookup
    # failed, a recorded nemesis failure; its pause hit).
    assert aimed and set(aimed) <= {"kill", "pause"}, aimed
    # The drain takes 8 s alone (2026-11-25: 8.3 s, and under three CPU hogs it still passed), but
    # one CI run, loaded to a fifth of the usual rate (654 operations in 56 s against 3,215), had
    # not finished it in 90 s: every member's rebuild after an unknown commit is a new eager
    # rebalance of the whole group. 180 s bounds that; a drain that never ends still fails.
    assert result.workload["final_read_complete"], result.workload
    assert result.workload["members_churned"] >= 2, result.workload
    counts = result.workload["counts"]
    assert counts.get("subscribe:ok", 0) > 0, counts
    # kafka-python's members may commit nothing here: in CI's load (the CI run of 6f6486b) its subscribed
    # members made 295 ok polls and read no value before the drain (18 rebalances in 45 s), so
    # there was nothing to commit; the drain above delivered everything. The other clients commit.
    if client != "kafka-python":
        assert counts.get("commit:ok", 0) > 0, counts
    # Traffic comes back between faults, at a quarter of its rate before them or more. The other
    # chaos tests ask for half; a group keeps less in CI's load, where every healed coordinator
    # fault makes the whole group rejoin (eager rebalances stop every member's polls, and a member's
    # thread sends too) and a rejoin takes longer when the cores are busy. The first fault comes at
    # 15 s, not at 5 as it did: over the 2.5 s before a fault at 5 s the baseline was the members'
    # first joins or not, 6 to 237 ops/s for one test in five CI-equivalents, and a ratio of 13.6
    # would have passed any stall. Over the 7 s before 15 s it was 132 to 307 in six runs beside
    # another chaos test (ratios 0.74 to 1.47), and 42 to 291 in a CI-equivalent (ratios 2.88 Java,
    # 0.83 kafka-python, 0.34 librdkafka): the baseline follows what the other workers' tests leave
    # of the two cores at that moment. At the old start ratios were 0.32 to 13.6, the lowest a
    # librdkafka run in CI's load too. The stalls this guards against keep less: the workload that
    # went quiet after the first fault (issue 13) kept under 1% (485 ok operations/s before it, 2
    # after), a stalled kafka-python transactional group 23% (7 against 30; both in
    # docs/history.md). Group liveness is measured, not asserted, by bench/workload_liveness.py's
    # group variants.
    assert_traffic_between_faults(result, 0.25)


def test_auto_commit_skips_what_a_crashed_member_never_handled(chaos_run):
    """The scenario auto-commit-crash: a member's close commits past the records it polled and
    never handled, and the group skips them; its control with synchronous commits skips none."""
    lossy = chaos_run(scenario="auto-commit-crash")
    assert lossy.script == "completed"
    crashed = lossy.workload["members_crashed"]
    if crashed < 3:  # a skip naming the count, not a pass: the run could not tell
        pytest.skip(f"auto-commit-crash: {crashed} member crashes in 30 s (the group barely held keys in this load)")
    assert set(lossy.anomalies) == {"lost-write"} and lossy.lost > 0, lossy.anomalies
    control = chaos_run(scenario="sync-commit-crash")
    assert control.script == "completed"
    assert control.valid is True, control.anomalies
