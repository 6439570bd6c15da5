"""Share groups' rules that need the control plane's evidence: a leader change between two
deliveries (`share-redelivered-on-failover`), read from a hand-made run directory's metadata log
(tests/checkers/cp_builder.py); and a bare history, judged as if no leader changed, says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_chaos.checkers.check import check_history
from tests.checkers.builder import History
from tests.checkers.cp_builder import Run, change

pytestmark = pytest.mark.spark
K = "chaos/0"


def _redelivered(h: History) -> History:
    """Member 1 acquires value 1 at about 1 s with a 10 s lock (held surely until about 6 s);
    member 2 is delivered it at about 3 s, completing at 3.5 s."""
    h.wait(1.0)
    h.send(0, K, [(1, 0)])
    h.share_poll(1, {K: [(0, 1, 1)]})
    h.wait(2.0)
    h.share_poll(2, {K: [(0, 1, 1)]}, took=0.5)  # the count does not grow either
    h.share_ack(2, {K: [(0, "accept")]})
    h.share_offsets({K: 1})
    return h


@pytest.fixture
def check_share_run(spark_session, tmp_path: Path):
    counter = iter(range(1_000_000))

    def run(leader_change_at: float | None):
        n = next(counter)
        r = Run(writes=[])
        if leader_change_at is not None:
            r.add(change(8, leader_change_at, leader=3))
        history = r.write(tmp_path / f"run-{n}")
        _redelivered(History()).write(history)  # the share history instead of the builder's
        return check_history(history, report=False, session=spark_session)

    return run


def test_a_redelivery_across_a_leader_change_is_reported_not_an_error(check_share_run):
    result = check_share_run(2.0)
    assert set(result.anomalies) == {"share-redelivered-on-failover"}, result.anomalies
    entry = result.anomalies["share-redelivered-on-failover"]
    assert entry["count"] == 1 and entry["errors"] == 0  # one pair: concurrent, and its count did not grow
    assert result.valid is True


def test_the_same_redelivery_with_the_leader_change_after_it_is_an_error(check_share_run):
    result = check_share_run(5.0)
    assert set(result.anomalies) == {"share-concurrent-delivery", "share-delivery-count"}, result.anomalies
    assert result.valid is False


def test_a_bare_history_is_judged_as_if_no_leader_changed_and_says_so(check):
    result = check(_redelivered(History()))
    assert set(result.anomalies) == {"share-concurrent-delivery", "share-delivery-count"}, result.anomalies
    assert any("as if no partition's leader changed" in w for w in result.warnings), result.warnings


def test_redeliveries_are_counted_by_cause_and_values_by_deliveries(check):
    """Value 1 released by member 1, value 2's lock left to run out, value 3's member crashed:
    each delivered again, once for each cause; value 4 delivered once and never acknowledged."""
    h = History()
    h.send(0, K, [(1, 0), (2, 1), (3, 2), (4, 3)])
    h.share_poll(1, {K: [(0, 1, 1), (1, 2, 1)]})
    h.share_ack(1, {K: [(0, "release")]})
    h.share_poll(4, {K: [(2, 3, 1)]})
    h.op(4, "crash", None, None)
    h.share_poll(2, {K: [(0, 1, 2), (2, 3, 2)]})
    h.share_ack(2, {K: [(0, "accept"), (2, "accept")]})
    h.wait(11.0)  # member 1's 10 s lock on value 2 runs out
    h.share_poll(3, {K: [(1, 2, 2), (3, 4, 1)]})
    h.share_ack(3, {K: [(1, "accept")]})
    h.share_offsets({K: 3})
    result = check(h)
    assert result.anomalies == {}, result.anomalies
    share = result.share
    assert share["deliveries_per_value"] == {"1": 1, "2": 3} and share["values_delivered"] == 4
    causes = {"release": 1, "member end": 1, "leader change": 0, "lock expiry": 1, "unexplained": 0}
    assert share["redeliveries"] == causes
    assert share["unacknowledged"] == 1 and share["archived"] == 0
    assert json.loads(result.results_path.read_text())["share"] == share


def test_a_share_runs_coverage_is_the_time_its_keys_were_being_delivered(check):
    """Two deliveries of the key 3 s apart: undelivered for the 2 s past the first one's window,
    in results.json, the summary and the report's strip (a run of a consumer group has its own)."""
    from kafka_chaos.checkers.check import format_summary

    h = History()
    h.send(0, K, [(1, 0), (2, 1)])
    h.share_poll(1, {K: [(0, 1, 1)]})
    h.share_ack(1, {K: [(0, "accept")]})
    h.wait(3.0)
    h.share_poll(2, {K: [(1, 2, 1)]})
    h.share_ack(2, {K: [(1, "accept")]})
    h.share_offsets({K: 2})
    result = check(h, report=True)
    c = result.group_coverage
    assert c["mode"] == "share" and c["polls_with_records"] == 2, c
    assert c["longest_unheld_s"] == pytest.approx(2.0, abs=0.05), c
    assert sorted(str(p) for p, _, _ in c["spans"][K]) == ["1", "2"]
    assert "share coverage: every key delivered" in format_summary(result)
    page = result.report_path.read_text()
    assert "handed each key&#x27;s records" in page or "handed each key's records" in page


@pytest.mark.parametrize(
    ("after_s", "cause", "errors"), [(6.0, "lock expiry", {}), (4.0, "unexplained", {"share-concurrent-delivery": 1})]
)
def test_a_redelivery_the_lock_may_explain_is_a_lock_expiry(check, after_s, cause, errors):
    """A 10 s lock: another delivery after 10 - 5 s (the slack: a client may hand out what it
    fetched up to 5 s before its poll) is put down to the lock; one before it, while the first
    hold surely lasted, is concurrent and has no cause."""
    h = History()
    h.send(0, K, [(1, 0)])
    h.share_poll(1, {K: [(0, 1, 1)]})
    h.wait(after_s)
    h.share_poll(2, {K: [(0, 1, 2)]})
    h.share_ack(2, {K: [(0, "accept")]})
    h.share_offsets({K: 1})
    result = check(h)
    assert {n: a["count"] for n, a in result.anomalies.items() if a["errors"]} == errors, result.anomalies
    assert {c: n for c, n in result.share["redeliveries"].items() if n} == {cause: 1}


@pytest.mark.parametrize(("lock_ms", "blind"), [(5000, True), (6000, False)])
def test_a_lock_no_longer_than_the_slack_cannot_show_a_concurrent_delivery_and_says_so(check, lock_ms, blind):
    """The same second delivery 0.5 s after the first: with a 6 s lock the first hold surely
    lasts until 1 s after its poll, so it is concurrent; with a 5 s lock (the slack S) no hold
    surely lasts at all, and the check warns that the rule could not fire."""
    h = History()
    h.send(0, K, [(1, 0)])
    h.share_poll(1, {K: [(0, 1, 1)]}, lock_ms=lock_ms)
    h.wait(0.5)
    h.share_poll(2, {K: [(0, 1, 2)]}, lock_ms=lock_ms)
    h.share_ack(2, {K: [(0, "accept")]})
    h.share_offsets({K: 1})
    result = check(h)
    warned = [w for w in result.warnings if w.startswith("share-concurrent-delivery could not fire")]
    assert bool(warned) is blind, result.warnings
    assert ("share-concurrent-delivery" in result.anomalies) is not blind, result.anomalies
