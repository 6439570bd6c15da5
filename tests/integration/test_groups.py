"""Consumer groups on real clusters, with no faults, through every client: members join one
group, rebalances are recorded as `subscribe` operations, commits as `commit` operations, churn
makes members leave and join, and the group's own drain reads back every acknowledged value.
The suite runs each kind of group through one client, a different one for each (every client's
group code runs on every commit); the nightly workflow runs them through every client.

The fault runs are tests/chaos/test_groups.py; the hand-made group histories are in
tests/checkers/test_anomalies.py.
"""

import json
from collections import Counter

import pytest

from kafka_chaos.checkers.check import check_history
from kafka_chaos.checkers.measures.group_coverage import count_events
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.file import read_history
from kafka_chaos.workloads.clients.api import CLIENTS
from kafka_chaos.workloads.options import KIP_848_CLIENTS, WorkloadOptions
from tests.chaos.known import KNOWN_FAILOVER_ANOMALIES
from tests.integration.conftest import serve_shared
from tests.integration.history_facts import sent_and_read
from tests.nightly import one_in_the_suite

# One worker runs the group tests (these and tests/chaos/test_groups.py), one cluster at a time:
# beside the suite's other cluster tests, four group runs at once overloaded the two cores. The
# runs here share the module's cluster (tests/integration/conftest.py), each on its own topic.
pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("consumer-groups")]


#: The brokers' settings of a KIP-848 run (WorkloadOptions.broker_defaults), given to the module's
#: cluster so that classic and KIP-848 runs share it.
KIP_848_BROKERS = WorkloadOptions(client="java", consumer="subscribe", group_protocol="consumer").broker_defaults()


@pytest.fixture(scope="module")
def shared_cluster(docker_api, tmp_path_factory):
    """The module's one cluster (tests/integration/conftest.py), with the KIP-848 brokers' settings."""
    yield from serve_shared(ClusterSpec(DEFAULT_VERSION, config=KIP_848_BROKERS), tmp_path_factory)


@pytest.fixture
def group_run(shared_cluster, tmp_path):
    def go(**options):
        opts = WorkloadOptions(**{"time_limit": 16, "concurrency": 6, "rate": 300, **options})
        done = shared_cluster.run(opts, tmp_path / "store", seed=3)
        events = list(read_history(done.run_dir / "history.jsonl"))
        return done, events, json.loads((done.run_dir / "config.json").read_text())

    return go


def _valid_but_for_known(result, client):
    """Valid, or invalid only by errors the client is known to cause itself (tests/chaos/known.py)."""
    errors = {name for name, a in result.anomalies.items() if a["errors"]}
    assert errors <= KNOWN_FAILOVER_ANOMALIES.get(client, set()), result.anomalies
    assert result.valid is (not errors), result.anomalies


def _completions(events, f):
    return [e for e in events if e["f"] == f and e["type"] != "invoke" and e["process"] != "nemesis"]


def _polls_of_keys_not_yet_given(events) -> list[tuple[int, str]]:
    """(event index, key) of ok polls that returned a key their process's latest `subscribe` did
    not hold, when the `subscribe` right after the poll holds it: records of a key that a
    rebalance inside the poll gave, which the member puts back (workloads/group.py `put_back`)
    so that its first poll of the key comes after the `subscribe`, where `commit-lost` looks."""
    held: dict = {}  # process -> the keys its latest subscribe holds
    pending: dict = {}  # process -> (its last ok poll's index, the keys it returned and did not hold)
    found = []
    for e in events:
        if e["type"] == "invoke" or e["process"] == "nemesis":
            continue
        p = e["process"]
        index, unheld = pending.pop(p, (None, set()))
        if e["f"] == "subscribe" and e["type"] == "ok":
            found += [(index, k) for k in sorted(unheld) if k in e["value"]]
            held[p] = set(e["value"])
        elif e["f"] == "poll" and e["type"] == "ok":
            read = {k for k, records in e["value"][0][1].items() if records}
            if read - held.get(p, set()):
                pending[p] = (e["index"], read - held.get(p, set()))
    return found


@pytest.mark.parametrize("client", one_in_the_suite(CLIENTS, "kafka-python"))
def test_a_subscribed_group_with_churn_delivers_every_acknowledged_value(group_run, client):
    done, events, config = group_run(client=client, consumer="subscribe", group_churn=4)
    summary = done.summary
    assert config["group_id"] == f"kafka-chaos-{config['run_id']}"
    assert config["cluster_run_id"] not in (None, config["run_id"])  # the run's own id on the module's cluster
    consumer = config["effective_consumer_config"]
    assert consumer.get("group_id", consumer.get("group.id")) == config["group_id"]  # each client's own name
    assert config["effective_member_config"] == consumer  # no consumer assigns in a subscribe run
    ok_sent, _, read, _ = sent_and_read(events)
    assert len(ok_sent) > 50, summary.counts
    assert ok_sent <= read, f"acknowledged, never delivered by the group: {sorted(ok_sent - read)[:10]}"
    # Every member joined, rebalances gave keys out, and every key was held by some member.
    subscribes = _completions(events, "subscribe")
    assert not _completions(events, "assign"), "a subscribe run assigned keys by hand"
    held = {key for e in subscribes for key in e["value"]}
    assert held == set(done.spec.workload.key_names), held
    assert summary.members_churned >= 2, summary.members_churned
    processes = {e["process"] for e in subscribes}
    # The churned members' replacements joined too (the last one may not have before the time
    # limit: in CI's load one librdkafka run had 9 of 10).
    assert len(processes) >= 6 + summary.members_churned - 1
    # Each poll that read something was followed by its process's commit of the next offsets. A
    # rebalance refuses the commits made during it, and how many fall in one is the machine's
    # speed: the share that succeeds is bench/group_coverage.py's number, not this test's.
    commits = _completions(events, "commit")
    assert commits and Counter(e["type"] for e in commits)["ok"] > 0, Counter(e["type"] for e in commits)
    assert all(e.get("error") for e in commits if e["type"] != "ok"), "a commit not ok without a reason"
    assert all(all(isinstance(o, int) and o > 0 for o in e["value"].values()) for e in commits)
    # The final read was the group's drain: members polled, nobody assigned (above). A group that
    # had read every acknowledged value before the time limit has nothing left to drain
    # (docs/measurements.md, 2026-11-26).
    assert summary.final_read_complete
    _, _, read_before_final, _ = sent_and_read([e for e in events if e.get("phase") != "final"])
    assert any(e.get("phase") == "final" and e["f"] == "poll" for e in events) or ok_sent <= read_before_final
    assert _polls_of_keys_not_yet_given(events) == []
    result = check_history(done.run_dir, report=False)
    _valid_but_for_known(result, client)
    # The group's coverage, counted as the history was written, is the file's.
    coverage = summary.group_coverage
    assert coverage == count_events(events, done.spec.workload.key_names)
    assert coverage["some_key_share"] > 0 and coverage["polls_with_records"] > 0, coverage
    # The checker's, on Spark, is the run's, with each key's holds for the report.
    assert {k: v for k, v in result.group_coverage.items() if k != "spans"} == coverage


@pytest.mark.parametrize("client", one_in_the_suite(KIP_848_CLIENTS, "java"))
def test_a_kip_848_group_with_churn_holds_its_keys_and_delivers_every_value(group_run, client):
    """--group-protocol consumer: the coordinator assigns, incrementally, so a member's leaving or
    joining moves only the keys that change hands; the same events, the same drain."""
    done, events, config = group_run(
        client=client, consumer="subscribe", group_protocol="consumer", group_churn=7, time_limit=30, concurrency=8
    )
    summary = done.summary
    assert config["workload"]["group_protocol"] == "consumer"
    assert config["effective_member_config"]["group.protocol"] == "consumer"
    assert "session.timeout.ms" not in config["effective_member_config"]  # the coordinator's, not the client's
    assert config["broker_config"]["group.consumer.heartbeat.interval.ms"] == "500"
    ok_sent, _, read, _ = sent_and_read(events)
    assert len(ok_sent) > 50, summary.counts
    assert ok_sent <= read, f"acknowledged, never delivered by the group: {sorted(ok_sent - read)[:10]}"
    assert summary.members_churned >= 3, summary.members_churned
    held = {key for e in _completions(events, "subscribe") for key in e["value"]}
    assert held == set(done.spec.workload.key_names), held
    assert Counter(e["type"] for e in _completions(events, "commit"))["ok"] > 0
    assert summary.final_read_complete
    assert _polls_of_keys_not_yet_given(events) == []
    result = check_history(done.run_dir, report=False)
    _valid_but_for_known(result, client)
    # Coverage is measured, the same from the history as written and by the checker. How much of
    # the run every key was held depends on how fast the members rejoin on this machine: its goal
    # is bench/group_coverage.py's (HELD_GOALS), not an assertion here.
    coverage = summary.group_coverage
    assert coverage == count_events(events, done.spec.workload.key_names)
    assert {k: v for k, v in result.group_coverage.items() if k != "spans"} == coverage
    assert 0 <= coverage["every_key_share"] <= coverage["some_key_share"] <= 1, coverage
    assert coverage["some_key_share"] > 0 and coverage["polls_with_records"] > 0, coverage


def test_mixed_consumers_assign_and_subscribe_side_by_side(group_run):
    done, events, config = group_run(consumer="mixed")
    # config.json keeps both kinds' settings apart, whichever consumer was built first.
    assert config["effective_consumer_config"]["group_id"] is None
    assert config["effective_member_config"]["group_id"] == config["group_id"]
    by_f = {f: {e["process"] for e in _completions(events, f)} for f in ("assign", "subscribe")}
    # Workload processes 0..5: even ones subscribe, odd ones assign (the final read's own
    # assigning readers are new processes, so look at the first C only).
    assert {p for p in by_f["subscribe"] if p < 6} == {0, 2, 4}
    assert {p for p in by_f["assign"] if p < 6} == {1, 3, 5}
    _valid_but_for_known(check_history(done.run_dir, report=False), config["client"])


@pytest.mark.parametrize("client", one_in_the_suite(CLIENTS, "librdkafka"))
def test_a_transactional_group_commits_its_offsets_in_its_transactions(group_run, client):
    """--workload txn --consumer subscribe: what a transaction polled is committed for the group
    in that transaction (sendOffsetsToTransaction), so each `commit` has its transaction's
    outcome; an abort rewinds the member, also on keys a rebalance gave it mid-transaction."""
    # No churn (the queue test has it), 30 s, a member per key: a txn member polls only inside
    # its transactions, so under load an eager rebalance (every member must poll to rejoin) takes
    # many seconds, and churn starved the run (docs/measurements.md, 2026-11-25). The members'
    # joins still rebalance.
    done, events, config = group_run(workload="txn", client=client, consumer="subscribe", time_limit=30, concurrency=4)
    ok_sent, _, read, _ = sent_and_read(events)
    assert len(ok_sent) > 50, done.summary.counts
    assert ok_sent <= read, f"committed, never delivered by the group: {sorted(ok_sent - read)[:10]}"
    by_process = {}
    for e in events:
        # The drain's commits follow plain polls: leave the final phase out.
        if e["type"] != "invoke" and e["f"] in ("txn", "commit") and e.get("phase") != "final":
            by_process.setdefault(e["process"], []).append(e)
    pairs = [(a, b) for ops in by_process.values() for a, b in zip(ops, ops[1:], strict=False) if b["f"] == "commit"]
    assert pairs and all(a["f"] == "txn" and a["type"] == b["type"] for a, b in pairs)
    assert Counter(b["type"] for _, b in pairs)["ok"] > 0
    assert done.summary.final_read_complete
    result = check_history(done.run_dir, report=False)
    _valid_but_for_known(result, client)


@pytest.mark.parametrize("commit", ["auto", "none"])
def test_without_sync_commits_no_commit_is_recorded(group_run, commit):
    done, events, config = group_run(consumer="subscribe", commit=commit)
    assert not _completions(events, "commit")
    assert config["effective_consumer_config"]["enable_auto_commit"] is (commit == "auto")
    assert done.summary.final_read_complete
    assert check_history(done.run_dir, report=False).valid is True
