"""A share group (KIP-932) on a real cluster, fault-free: Java members that release, reject,
stall past the lock and crash without closing. Every acknowledged value is delivered, the run
is valid but for the open findings listed below, and its redeliveries show the causes they
must: releases and locks that ran out.

The share group under a leader kill is tests/chaos/test_share.py; its rules' hand-made histories
are tests/checkers/test_share.py and histories.py."""

import pytest

from kafka_chaos.checkers.check import check_history
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.history.file import read_history
from kafka_chaos.runs.run import Run
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions

pytestmark = [pytest.mark.cluster, pytest.mark.spark]
#: Errors a share run on 4.3.1 may show while they are examined: both were seen in fault-free runs
#: with stalls, a record handed to a member with a delivery count lower than it had had, after
#: another member's accept was acknowledged (docs/measurements.md, 2026-11-29). The checker
#: reports them as the errors they are; this test lists them, and fails on anything else.
FINDINGS = {"share-delivery-count", "share-redelivered-after-ack"}


def test_a_share_run_with_crashes_and_stalls_is_valid_and_shows_why_it_redelivered(docker_api, tmp_path):
    opts = WorkloadOptions(
        client="java",
        consumer="share",
        time_limit=25,
        rate=300,
        concurrency=6,
        share_lock_ms=3000,
        share_release=0.1,
        share_stalls=0.1,
        member_crashes=0.15,  # drawn per poll that acquired records: a slow machine makes few
    )
    done = Run(RunSpec(ClusterSpec("4.3.1"), opts, seed=5, store=tmp_path)).execute()
    events = list(read_history(done.run_dir / "history.jsonl"))
    ops = {(e["f"], e["type"]) for e in events if e["process"] != "nemesis"}
    assert {("share-poll", "ok"), ("share-ack", "ok"), ("crash", "ok"), ("share-offsets", "ok")} <= ops, ops
    polls = [e for e in events if e["f"] == "share-poll" and e["type"] == "invoke"]
    assert all(e["value"][0][1]["lock_ms"] == 3000 and e["value"][0][1]["delivery_limit"] == 5 for e in polls)
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
    assert causes["release"] >= 1 and causes["lock expiry"] >= 1, result.share
    assert result.share["leader_changes_known"] is True
