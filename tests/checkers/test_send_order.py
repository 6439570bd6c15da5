"""The send-order rules compare every operation whose sends must have committed (../shared/
anomalies.md, ground rules, 2026-11-26). Each case and its near miss is in histories.py, run by
test_anomalies.py and, through the oracle, test_oracle.py; here, what a count does not show: which
sends an instance pairs."""

from __future__ import annotations

import pytest

from tests.checkers import histories as H

pytestmark = pytest.mark.spark


def _example(result, name: str) -> dict:
    assert set(result.anomalies) == {name}, result.anomalies
    (example,) = result.anomalies[name]["examples"]
    return example


def test_a_late_info_send_landing_before_an_acknowledged_one(check):
    """Jepsen's case: the proven info send (op 3) is compared with the ok send before it (op 1)."""
    h = H.nonmonotonic_send_info(True)
    assert [h.events[i]["type"] for i in (1, 3)] == ["ok", "info"]
    example = _example(check(h), "nonmonotonic-send")
    assert example == {"key": H.K, "offsets": [1, 0], "values": [1, 2], "ops": [1, 3], "process": 0}


def test_a_proven_info_send_is_the_next_sends_reference(check):
    example = _example(check(H.send_reference_info(True)), "nonmonotonic-send")
    assert (example["ops"], example["values"], example["offsets"]) == ([3, 5], [2, 3], [2, 1])


def test_an_unproven_info_send_leaves_the_reference_where_it_was(check):
    """The info send between (op 3, seen only by an info poll, landing before both) is not
    compared, and the third send is compared with the first: moving the reference to the info
    send would have hidden it."""
    example = _example(check(H.unproven_info_between(True)), "nonmonotonic-send")
    assert (example["ops"], example["values"], example["offsets"]) == ([1, 5], [1, 3], [2, 1])


def test_a_proven_info_operations_sends_inside_it(check):
    back = _example(check(H.int_nonmonotonic_send_info(True)), "int-nonmonotonic-send")
    assert (back["ops"], back["values"], back["offsets"]) == ([1], [1, 2], [1, 0])
    skip = _example(check(H.int_send_skip_info(True)), "int-send-skip")
    assert (skip["ops"], skip["values"], skip["offsets"], skip["allowed"]) == ([1], [1, 3], [0, 2], True)
