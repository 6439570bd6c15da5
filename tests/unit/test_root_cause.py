"""Naming the election and ISR change behind a lost write: each cause, and a near miss."""

from kafka_chaos.checkers.report.root_cause import explain_one

KEY = "chaos/0"


def part(t, change, leader, isr, previous_leader, previous_isr, unclean=False):
    return {
        "t_s": t,
        "kind": "partition",
        "key": KEY,
        "change": change,
        "leader": leader,
        "isr": isr,
        "previous_leader": previous_leader,
        "previous_isr": previous_isr,
        "unclean": unclean,
        "leader_epoch": 0,
        "partition_epoch": 0,
    }


CREATED = {"t_s": 0.0, "kind": "partition", "key": KEY, "change": "created", "leader": 3, "isr": [3, 2]}


def test_stale_isr_expansion_then_election():
    events = [
        CREATED,
        part(2.0, "isr", 3, [3], 3, [3, 2]),
        {"t_s": 8.0, "kind": "register", "broker": 2, "broker_epoch": 70},
        part(9.0, "isr", 3, [3, 2], 3, [3]),
        part(10.0, "leader+isr", 2, [2], 3, [3, 2]),
    ]
    out = explain_one(events, KEY, acked_s=5.0)
    assert out["cause"] == "joined-isr-after-ack"
    assert out["isr_change"]["t_s"] == 9.0 and out["election"]["leader"] == 2
    assert "broker epoch 70" in out["text"]
    # Near miss: the write was acknowledged after B had joined: B was in the ISR at the ack.
    assert explain_one(events, KEY, acked_s=9.5)["cause"] == "in-isr-at-ack"


def test_unclean_election():
    events = [CREATED, part(2.0, "isr", 3, [3], 3, [3, 2]), part(6.0, "leader", 2, [2], -1, [3], unclean=True)]
    assert explain_one(events, KEY, acked_s=3.0)["cause"] == "unclean"
    clean = [CREATED, part(2.0, "isr", 3, [3], 3, [3, 2]), part(6.0, "leader+isr", 3, [3], -1, [3])]
    assert explain_one(clean, KEY, acked_s=3.0)["cause"] == "same-leader-reelected"


def test_no_election_after_the_write():
    events = [CREATED, part(2.0, "isr", 3, [3], 3, [3, 2])]
    assert explain_one(events, KEY, acked_s=3.0)["cause"] == "no-election"
    assert explain_one(events + [part(4.0, "leader", -1, [3], 3, [3])], KEY, acked_s=3.0)["cause"] == "no-election"
