"""A share group (KIP-932) on a real cluster, fault-free: members that release, reject, stall
past the lock and crash without closing, through the Java client and through librdkafka, one
after the other on one cluster. Every acknowledged value is delivered, the run
is valid but for the open findings listed below, and its redeliveries show the causes they
must: releases and locks that ran out.

The share group under a leader kill is tests/chaos/test_share.py; its rules' hand-made histories
are tests/checkers/test_share.py and histories.py."""

import pytest

from kafka_chaos.checkers.check import check_history
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.history.file import read_history
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions
from tests.integration.conftest import serve_shared

pytestmark = [pytest.mark.cluster, pytest.mark.spark, pytest.mark.xdist_group("share-groups")]
#: Errors a share run may show, examined in docs/history.md ("Under faults"): both were seen on
#: 4.3.1 in fault-free runs with stalls, a record handed to a member with a delivery count lower
#: than it had had, after another member's accept was acknowledged (docs/measurements.md,
#: 2026-11-29). The checker reports them as the errors they are; this test lists them, and fails
#: on anything else. A double acceptance was seen on 4.4.0 in a fault-free run of the Java
#: client (issue 60): a late accept reported ok after another member's.
FINDINGS = {"share-delivery-count", "share-redelivered-after-ack", "share-double-acceptance"}


def _options(client: str) -> WorkloadOptions:
    return WorkloadOptions(
        client=client,
        consumer="share",
        time_limit=25,
        rate=300,
        concurrency=6,
        share_lock_ms=3000,
        share_release=0.1,
        share_stalls=0.2,
        member_crashes=0.3,  # drawn per poll that acquired records: a slow machine makes few
    )


@pytest.fixture(scope="module")
def share_cluster(docker_api, tmp_path_factory):
    """One cluster for the module's runs, with what a share run sets on the brokers (the lock's
    minimum, the members' heartbeats): the runs of both clients ask for the same."""
    spec = ClusterSpec("4.3.1")
    yield from serve_shared(spec, tmp_path_factory, RunSpec(spec, _options("java")).build_cluster())


@pytest.mark.parametrize("client", ["java", "librdkafka"])
def test_a_share_run_with_crashes_and_stalls_is_valid_and_shows_why_it_redelivered(share_cluster, tmp_path, client):
    done = share_cluster.run(_options(client), tmp_path, seed=5)
    events = list(read_history(done.run_dir / "history.jsonl"))
    ops = {(e["f"], e["type"]) for e in events if e["process"] != "nemesis"}
    assert {("share-poll", "ok"), ("share-ack", "ok"), ("crash", "ok"), ("share-offsets", "ok")} <= ops, ops
    polls = [e for e in events if e["f"] == "share-poll" and e["type"] == "invoke"]
    assert all(e["value"][0][1]["lock_ms"] == 3000 and e["value"][0][1]["delivery_limit"] == 5 for e in polls)
    assert {e.get("client") for e in polls} == {client}
    sent = {(e["value"][0][1], e["value"][0][2][1]) for e in events if e["f"] == "send" and e["type"] == "ok"}
    got = {
        (key, r[1])
        for e in events
        if e["f"] == "share-poll" and e["type"] == "ok"
        for key, records in e["value"][0][1].items()
        for r in records
    }
    assert len(sent) > 50 and sent <= got, sorted(sent - got)[:10]
    assert done.summary.final_read_complete
    result = check_history(done.run_dir, report=False)
    errors = {name for name, a in result.anomalies.items() if a["errors"]}
    assert errors <= FINDINGS, result.anomalies
    assert result.valid is (not errors), result.anomalies
    causes = result.share["redeliveries"]
    assert causes["release"] >= 1, result.share
    # A stall is drawn per poll that acquired records: a starved run (a loaded machine's) may have
    # too few to draw one, and then no lock runs out (at 0.8 a draw, 30 such polls miss all with
    # p < 0.2%).
    held, acquiring = stalled_acks(events, 3000), polls_with_records(events)
    assert (causes["lock expiry"] >= 1) if held else (acquiring < 30), (held, acquiring, result.share)
    # A shared cluster's metadata log is not the run's: judged as if no leader changed, and said
    # (the chaos run, on a cluster of its own, reads its leader changes: tests/chaos/test_share.py).
    assert result.share["leader_changes_known"] is False
    assert any("as if no partition's leader changed" in w for w in result.warnings), result.warnings
    coverage = result.group_coverage  # measured, not judged: its goals are bench's
    assert coverage["mode"] == "share" and coverage["polls_with_records"] > 0 and coverage["spans"], coverage


def polls_with_records(events: list[dict]) -> int:
    return sum(1 for e in events if e["f"] == "share-poll" and e["type"] == "ok" and e["value"][0][1])


def stalled_acks(events: list[dict], lock_ms: int) -> int:
    """Acknowledgements invoked a lock or more after their member's poll returned the records: the
    broker had taken them back by then."""
    polled: dict[int, int] = {}
    stalled = 0
    for e in events:
        if e["f"] == "share-poll" and e["type"] == "ok" and e["value"][0][1]:
            polled[e["process"]] = e["time"]
        elif e["f"] == "share-ack" and e["type"] == "invoke" and e["process"] in polled:
            stalled += e["time"] - polled.pop(e["process"]) >= lock_ms * 1_000_000
    return stalled
