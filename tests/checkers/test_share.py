"""Share groups' rules that need the control plane's evidence: a leader change or a
share-partition reload between two deliveries (`share-redelivered-on-failover`), read from a
hand-made run directory's metadata log (tests/checkers/cp_builder.py) and its brokers' logs; the
same evidence unreadable makes the verdict unknown; a bare history, judged as if no leader
changed, says so. Each case is also put to the oracle (oracle.py), given the same changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_chaos.checkers.check import check_history
from kafka_chaos.checkers.result import CONTROL_PLANE_INCOMPLETE, UNKNOWN
from kafka_chaos.checkers.share.reloads import reloads
from kafka_chaos.history.run_dir import RunDir
from tests.checkers import oracle
from tests.checkers.builder import History
from tests.checkers.cp_builder import NODES, Run, change

K = "chaos/0"
GROUP = "kafka-chaos-r1"


def fenced_line(at_s: float, key: str = K, group: str = GROUP) -> str:
    """The INFO line a 4.x broker writes when it drops a fenced share partition to reload it
    (SharePartitionManager.fencedSharePartitionHandler), at `at_s` on a clock whose 0 is the
    Unix epoch (the hand-made run's history_started_unix_ms)."""
    topic, partition = key.rsplit("/", 1)
    stamp = f"1970-01-01 00:00:{int(at_s):02d},{round(at_s % 1 * 1000):03d}"
    return (
        f"[{stamp}] INFO The share partition with key SharePartitionKey{{groupId={group}, "
        f"topicIdPartition=AAAAAAAAAAAAAAAAAAAAAA:{topic}-{partition}}} is fenced: The share partition is fenced."
        f" (kafka.server.share.SharePartitionManager)\n"
    )


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
    """check(leader change at s, reload at s, the share history, whether the metadata logs and
    the brokers' logs were left) on a hand-made run directory."""
    counter = iter(range(1_000_000))

    def run(
        leader_change_at: float | None,
        reload_at: float | None = None,
        build=_redelivered,
        metadata: bool = True,
        broker_logs: bool = True,
    ):
        n = next(counter)
        r = Run(writes=[])
        if leader_change_at is not None:
            r.add(change(8, leader_change_at, leader=3))
        history = r.write(tmp_path / f"run-{n}")
        build(History()).write(history)  # the share history instead of the builder's
        run_dir = RunDir(history.parent)
        if not metadata:
            for log in run_dir.metadata_logs().values():
                log.unlink()  # the evidence is there; its metadata logs could not be decoded
        if broker_logs:
            for alias in NODES:
                logs = run_dir.cluster / alias / "logs"
                logs.mkdir(parents=True)
                lines = [fenced_line(reload_at)] if reload_at is not None and alias == "kafka-1" else []
                (logs / "server.log").write_text("[1970-01-01 00:00:00,000] INFO started\n" + "".join(lines))
        return check_history(history, report=False, session=spark_session)

    return run


def _oracle(build, at: float | None = None, unknown: bool = False) -> dict[str, tuple[int, int]]:
    """The oracle's counts of the same share history, given a change or reload of K at `at` s."""
    changes = {K: [int(at * 1e9)]} if at is not None else {}
    found = oracle.check(build(History()).events, changes, unknown)
    return {name: (f.count, f.errors) for name, f in found.items()}


def _counts(result) -> dict[str, tuple[int, int]]:
    return {name: (a["count"], a["errors"]) for name, a in result.anomalies.items()}


pytestmark = pytest.mark.spark


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


@pytest.mark.parametrize(("reload_at", "errors"), [(2.0, False), (5.0, True)])
def test_a_reload_exempts_a_repeated_count_and_is_recorded_with_its_time(check_share_run, reload_at, errors):
    """The same redelivery with no leader change, but the leader reloading its share partition
    between the two deliveries (a fenced state write: acquisitions and counts forgotten): reported
    as `share-redelivered-on-failover`; the reload after the second delivery excuses nothing. The
    reload is in results.json beside the (no) leader changes, at its time."""
    result = check_share_run(None, reload_at=reload_at)
    expected = {"share-concurrent-delivery": (1, 1), "share-delivery-count": (1, 1)} if errors else {FAILOVER: (1, 0)}
    assert _counts(result) == expected
    assert _oracle(_redelivered, reload_at) == expected
    assert result.valid is (not errors)
    share = json.loads(result.results_path.read_text())["share"]
    assert share["reloads"] == {K: [reload_at]}, share
    assert share["leader_changes"] == {K: [0.3]}, share  # the partition's creation, before any delivery
    assert share["unknown_reason"] is None and share["unverified"] == 0


FAILOVER = "share-redelivered-on-failover"


def _accepted_then_regrown(h: History) -> History:
    """Member 1 accepts value 1 (count 1) at about 1 s; member 2 is handed it at about 3 s with
    count 2 and never acknowledges it: the broker acquired it again, unless a leader change or a
    reload between the two forgot the accept's state."""
    h.wait(1.0)
    h.send(0, K, [(1, 0)])
    h.share_poll(1, {K: [(0, 1, 1)]})
    h.share_ack(1, {K: [(0, "accept")]})
    h.wait(2.0)
    h.share_poll(2, {K: [(0, 1, 2)]})
    h.share_offsets({K: 1})
    return h


@pytest.mark.parametrize(("reload_at", "errors"), [(2.0, False), (5.0, True)])
def test_a_grown_count_after_an_accept_is_excused_only_by_a_reload_between(check_share_run, reload_at, errors):
    result = check_share_run(None, reload_at=reload_at, build=_accepted_then_regrown)
    expected = {"share-redelivered-after-ack": (1, 1)} if errors else {}
    assert _counts(result) == expected
    assert _oracle(_accepted_then_regrown, reload_at) == expected
    assert result.valid is (not errors)


def test_undecoded_metadata_logs_make_the_verdict_unknown_not_valid(check_share_run):
    """The control-plane evidence is there, its metadata logs could not be decoded: the leader
    changes are unknown, so a concurrent redelivery that only a leader change could excuse is
    neither an error nor passed: the verdict is unknown, and results.json says why. (Before,
    the run was judged as if no leader changed.)"""
    result = check_share_run(None, metadata=False)
    assert _counts(result) == {FAILOVER: (1, 0)}
    assert _oracle(_redelivered, unknown=True) == {FAILOVER: (1, 0), oracle.UNVERIFIED: (1, 0)}
    assert result.valid == UNKNOWN and result.unknown_reason == CONTROL_PLANE_INCOMPLETE
    saved = json.loads(result.results_path.read_text())
    assert saved["share"]["leader_changes"] == "unknown" and saved["share"]["unverified"] == 1
    assert "metadata logs could not be decoded" in saved["share"]["unknown_reason"]
    assert any("leader changes unknown" in w for w in result.warnings), result.warnings


def _quiet(h: History) -> History:
    """One delivery, accepted: nothing that a leader change would have to excuse."""
    h.send(0, K, [(1, 0)])
    h.share_poll(1, {K: [(0, 1, 1)]})
    h.share_ack(1, {K: [(0, "accept")]})
    h.share_offsets({K: 1})
    return h


@pytest.mark.parametrize(("build", "valid"), [(_redelivered, UNKNOWN), (_quiet, True)])
def test_unreadable_broker_logs_leave_reloads_unknown(check_share_run, build, valid):
    """The brokers' logs were not left: the reloads are unknown, so a finding only a reload could
    excuse makes the verdict unknown; a run with nothing to excuse stays valid, and says that its
    reloads are unknown."""
    result = check_share_run(None, build=build, broker_logs=False)
    assert result.valid == valid
    share = json.loads(result.results_path.read_text())["share"]
    assert share["reloads"] == "unknown" and share["leader_changes"] == {K: [0.3]}
    assert "share-partition reloads unknown" in share["unknown_reason"]


def test_deliveries_are_paired_by_record_not_by_value(check):
    """Value 1 written twice (offsets 0 and 1: a `duplicate`), each record handed out once, 0.5 s
    apart with count 1: two records, not a repeated delivery (paired by value it would be a
    concurrent delivery whose count did not grow); the same record twice is."""
    for offset, expected in ((1, set()), (0, {"share-concurrent-delivery", "share-delivery-count"})):
        h = History()
        h.send(0, K, [(1, 0)])
        h.send(0, K, [(1, 1)])
        h.share_poll(1, {K: [(0, 1, 1)]})
        h.wait(0.5)
        h.share_poll(2, {K: [(offset, 1, 1)]})
        h.share_ack(2, {K: [(offset, "accept")]})
        h.share_offsets({K: 2})
        found = {n for n in check(h).anomalies if n.startswith("share-")}
        assert found == expected
        assert {n for n in oracle.check(h.events) if n.startswith("share-")} == expected


def test_reloads_are_read_from_each_nodes_log_for_the_runs_group(tmp_path: Path):
    """The fenced line of the run's group, on the history's clock; another group's is not the
    run's; a node whose log cannot be read leaves the reloads unknown."""
    for alias, lines in (("kafka-1", [fenced_line(2.5), fenced_line(3.0, group="other")]), ("kafka-2", [])):
        (tmp_path / alias / "logs").mkdir(parents=True)
        (tmp_path / alias / "logs" / "server.log").write_text("".join(lines))
    assert reloads(tmp_path, 1000.0, GROUP) == ({K: [1_500_000_000]}, None)
    assert reloads(tmp_path, 1000.0, None) == ({K: [1_500_000_000, 2_000_000_000]}, None)
    assert reloads(tmp_path, None, GROUP)[0] is None  # a reload with no time 0 to place it on
    quoted = fenced_line(2.75).replace("groupId=", "groupId='")  # SharePartitionKey's older toString
    (tmp_path / "kafka-2" / "logs" / "server.log").write_text(quoted)
    assert reloads(tmp_path, 1000.0, GROUP) == ({K: [1_500_000_000, 1_750_000_000]}, None)
    (tmp_path / "kafka-2" / "logs" / "server.log").write_text(quoted.replace("SharePartitionKey{", "Key@1f{"))
    found, why = reloads(tmp_path, 1000.0, GROUP)
    assert found is None and "a reload line of a form not known" in why
    (tmp_path / "kafka-2" / "logs" / "server.log").write_text("")
    (tmp_path / "remote").mkdir()  # a tiered cluster's remote storage: not a node
    assert reloads(tmp_path, 1000.0, GROUP) == ({K: [1_500_000_000]}, None)
    (tmp_path / "kafka-3" / "config").mkdir(parents=True)
    found, why = reloads(tmp_path, 1000.0, GROUP)
    assert found is None and why.startswith("kafka-3's log could not be read")
    assert reloads(tmp_path / "absent", 0.0)[0] is None


#: Real 4.4.0 lines of one failover (share-2 run, seed 2): kafka-3, the leader of chaos-1, cut off
#: from the other brokers; kafka-1 made leader at epoch 2 (its state-change line names the topic
#: id); the share coordinator's read of kafka-1's first load at that epoch (the topic printed
#: null); kafka-3 applying its demotion once the cut healed; kafka-2, never the leader, following.
T0_MS = 1796609137474.0  # the run's history_started_unix_ms
NAMING = (
    "[2026-12-07 02:06:21,698] INFO [Broker id=1] Leader chaos-1 with topic id Some(tcWGyH6nR9Ot5fLD2VU1dA) starts at"
    " leader epoch 2 from offset 253 with partition epoch 2, high watermark 253, ISR [1], adding replicas [] and"
    " removing replicas [] . Previous leader Some(3) and previous leader epoch was 1. (state.change.logger)\n"
)
LOADED = (
    "[2026-12-07 02:06:24,124] INFO [ShareCoordinator id=1 topic=__share_group_state partition=10] Read with leader"
    " epoch update call for key SharePartitionKey{groupId=kafka-chaos-12b66f1b76, topicIdPartition="
    "tcWGyH6nR9Ot5fLD2VU1dA:null-1} having new leader epoch 2."
    " (org.apache.kafka.coordinator.share.ShareCoordinatorShard)\n"
)
DEPOSED = (
    "[2026-12-07 02:06:27,692] INFO [Broker id=3] Follower chaos-1 starts at leader epoch 2 from offset 253 with"
    " partition epoch 3 and high watermark 253. Current leader is 1. Previous leader Some(3) and previous leader"
    " epoch was 1. (state.change.logger)\n"
)
FOLLOWING = DEPOSED.replace("[Broker id=3]", "[Broker id=2]").replace("02:06:27,692", "02:06:21,462")


def _node_logs(root: Path, logs: dict[str, str]) -> Path:
    for alias, text in logs.items():
        (root / alias / "logs").mkdir(parents=True)
        (root / alias / "logs" / "server.log").write_text(text)
    return root


def test_a_new_leaders_load_and_the_deposed_leaders_drop_are_reloads(tmp_path: Path):
    """The new leader's first load (the coordinator's line, its topic named from its id by another
    node's line) and the deposed leader's drop, at their times on the history's clock: the deposed
    leader served from its own instance until it read its demotion, after the new leader loaded;
    a broker that only follows drops nothing. Another group's load is not the run's."""
    group = "kafka-chaos-12b66f1b76"
    cluster = _node_logs(tmp_path / "a", {"kafka-1": NAMING + LOADED, "kafka-2": FOLLOWING, "kafka-3": DEPOSED})
    assert reloads(cluster, T0_MS, group) == ({"chaos/1": [46_650_000_000, 50_218_000_000]}, None)
    assert reloads(cluster, T0_MS, "other") == ({"chaos/1": [50_218_000_000]}, None)
    # the near miss: the same demotion read by a broker that did not lead is no drop
    follower_only = _node_logs(tmp_path / "b", {"kafka-2": FOLLOWING})
    assert reloads(follower_only, T0_MS, group) == ({}, None)


def test_a_load_whose_topic_no_log_names_or_of_an_unknown_form_leaves_reloads_unknown(tmp_path: Path):
    """A load of topic id with no line naming the topic cannot be put on a key: unknown, never
    passed over; nor can a load line of a form not known."""
    found, why = reloads(_node_logs(tmp_path / "a", {"kafka-1": LOADED}), T0_MS, "kafka-chaos-12b66f1b76")
    assert found is None and "topic id tcWGyH6nR9Ot5fLD2VU1dA" in why
    odd = LOADED.replace("SharePartitionKey{", "Key@1f{")
    found, why = reloads(_node_logs(tmp_path / "b", {"kafka-1": NAMING + odd}), T0_MS, "kafka-chaos-12b66f1b76")
    assert found is None and "load line of a form not known" in why


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        ("fail", {"share-stale-delivery": (1, 0)}),
        ("ok", {"share-redelivered-after-ack": (1, 1), "share-delivery-count": (1, 1)}),
    ],
)
def test_a_stale_buffered_delivery_is_reported_and_its_count_not_compared_again(check, outcome, expected):
    """Member 1 accepts value 1 (count 1); member 2's client then hands it out from a buffer of
    an acquisition the broker no longer honours (count 1, not above). Its accept refused: a
    stale delivery, reported, whose count is judged by that row, not as a repeated count; its
    accept taken (ok): the broker took the record again, an error both ways."""
    h = History()
    h.send(0, K, [(1, 0)])
    h.share_poll(1, {K: [(0, 1, 1)]})
    h.share_ack(1, {K: [(0, "accept")]})
    h.share_poll(2, {K: [(0, 1, 1)]})
    h.share_ack(2, {K: [(0, "accept")]}, outcome)
    h.share_offsets({K: 1})
    if outcome == "ok":  # a second ok accept by another member is a double acceptance too
        expected = {**expected, "share-double-acceptance": (1, 1)}
    result = check(h)
    assert _counts(result) == expected
    assert {n: (f.count, f.errors) for n, f in oracle.check(h.events).items()} == expected
    assert result.valid is (outcome == "fail")
