"""Share coverage (checkers/measures/share_coverage.py) from hand-made deliveries: a key is being
delivered for DELIVERY_WINDOW_S after each share-poll that returned its records. The expected
numbers are worked out by hand from that definition."""

import pytest

from kafka_chaos.checkers.measures.group_coverage import format_coverage
from kafka_chaos.checkers.measures.share_coverage import DELIVERY_WINDOW_S, measure

A, B = "chaos/0", "chaos/1"


def test_every_key_delivered_is_the_time_both_keys_had_a_recent_delivery():
    # A: member 1 at 0, 0.5 and 1.2 s (one run, 0 to 2.2 s), member 2 at 5 s (5 to 6 s).
    # B: member 3 every 0.8 s from 0.2 s: delivered from 0.2 s to the end.
    deliveries = [(A, 1, 0.0), (A, 1, 0.5), (A, 1, 1.2), (A, 2, 5.0)]
    deliveries += [(B, 3, 0.2 + 0.8 * i) for i in range(13)]
    c = measure(deliveries, [A, B], 0.0, 10.0)
    assert DELIVERY_WINDOW_S == 1.0
    assert c["every_key_share"] == pytest.approx(0.3)  # 0.2-2.2 and 5-6
    assert c["some_key_share"] == pytest.approx(1.0)
    assert c["longest_unheld_s"] == pytest.approx(4.0)  # A from 6 s to the end
    assert c["spans"][A] == [[1, 0.0, 2.2], [2, 5.0, 6.0]]
    assert c["polls_with_records"] == 17
    assert c["warning"] and "delivered to a member for 30%" in c["warning"]
    assert "double_held_s" not in c and c["mode"] == "share"
    assert format_coverage(c).startswith("share coverage: every key delivered 30%, some key 100%")


@pytest.mark.parametrize(("gap", "unheld"), [(0.9, 0.0), (1.1, 0.1)])
def test_a_gap_counts_only_past_the_window(gap, unheld):
    c = measure([(A, 1, 0.0), (A, 2, gap), (A, 1, gap + 0.9)], [A], 0.0, gap + 1.9)
    assert c["longest_unheld_s"] == pytest.approx(unheld)
    assert c["warning"] is None


def test_a_key_never_delivered_is_never_covered():
    c = measure([(A, 1, 0.0), (A, 1, 0.9)], [A, B], 0.0, 2.0)
    assert c["every_key_share"] == 0.0 and c["some_key_share"] == pytest.approx(0.95)
    assert c["longest_unheld_s"] == pytest.approx(2.0) and B not in c["spans"]
