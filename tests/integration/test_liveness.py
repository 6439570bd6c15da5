"""The workload keeps writing after a fault (issue 13), on real clusters.

The random-nemesis case lives in tests/chaos/test_safe_configuration.py (the example chaos
test asserts the rate it kept between faults). This file holds the regression test for the
cause: a kafka-python 3.0.12 idempotent producer that expired a retried batch never asks for
a new producer id and never sends again (workloads/producers.py). Under Kafka's own failure
detection (a paused broker is fenced after its 9 s session timeout) a 14 s pause of a partition
leader stalls acks=all writes past a 6 s delivery timeout, which wedges the shared producer; the
workload must replace it and write again. (With the default 10 s delivery timeout the fence
sometimes came first on a loaded machine: every batch was retried to the new leader in time,
nothing wedged, and the test could not tell.)
"""

import pytest

from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.config import FAULT_DETECTION
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.reporter import silent
from kafka_chaos.nemesis.plan import NemesisPlan
from kafka_chaos.nemesis.schedule import parse_script
from kafka_chaos.runs.run import run
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions
from tests.chaos.traffic import NOT_WEDGED

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

#: Kafka's defaults, given explicitly so that `run` does not apply its fast failure detection.
KAFKA_DEFAULT_DETECTION = {
    "replica.lag.time.max.ms": "30000",
    "broker.session.timeout.ms": "9000",
    "broker.heartbeat.interval.ms": "2000",
    "controller.quorum.fetch.timeout.ms": "2000",
    "controller.quorum.election.timeout.ms": "1000",
    "controller.quorum.election.backoff.max.ms": "1000",
}


def test_a_wedged_producer_is_replaced_and_writes_resume_after_the_fault(tmp_path):
    assert set(KAFKA_DEFAULT_DETECTION) == set(FAULT_DETECTION)  # every key given, or `run` applies its own
    opts = WorkloadOptions(time_limit=40, concurrency=8, rate=400, delivery_timeout_ms=6000, request_timeout_ms=3000)
    plan = NemesisPlan(script=parse_script([{"at": 6, "fault": "pause", "target": "leader:chaos/0", "for": 14}]))
    spec = RunSpec(
        ClusterSpec(DEFAULT_VERSION, config=KAFKA_DEFAULT_DETECTION), opts, plan, seed=3, store=tmp_path / "store"
    )
    summary = run(spec, silent).summary
    live = summary.liveness
    reasons = " ".join(summary.replaced_producers)
    # The fault outlasted the delivery timeout, so the producer wedged and was replaced...
    assert "no producer id" in reasons or "outlived the delivery timeout" in reasons, summary.replaced_producers
    # ...and the 20 s after the resume wrote again: not wedged (how fast is bench's question).
    assert live["first_fault_s"] == pytest.approx(6, abs=1)
    assert live["ratios"]["writes_per_s"]["between_faults"] >= NOT_WEDGED, live
    assert live["warning"] is None, live
    assert summary.counts["send:ok"] > 0 and summary.counts.get("send:info", 0) > 0
