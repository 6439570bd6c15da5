"""The anomaly table's policies (checkers/anomalies.py `is_error`) on their own: no Spark."""

from __future__ import annotations

import pytest

from kafka_chaos.checkers.anomalies import ANOMALIES, BY_NAME, Fact, is_error
from kafka_chaos.checkers.edge_kinds import EdgeKind
from kafka_chaos.checkers.svg import EDGE_COLOURS
from kafka_chaos.history.events import ASSIGN, SUBSCRIBE

WW, WR, PROCESS, REALTIME = EdgeKind


@pytest.mark.parametrize("anomaly", ANOMALIES, ids=lambda a: a.name)
def test_a_fact_left_at_its_default_exempts_nothing(anomaly):
    assert is_error(Fact(anomaly.name)) is (anomaly.error != "never")


@pytest.mark.parametrize(
    ("fact", "error"),
    [
        (Fact("poll-skip", mode=ASSIGN), True),
        (Fact("poll-skip", mode=SUBSCRIBE), False),
        (Fact("nonmonotonic-poll", mode=SUBSCRIBE), False),
        (Fact("int-poll-skip", mode=SUBSCRIBE), True),
        (Fact("nonmonotonic-send", mode=SUBSCRIBE), True),
        (Fact("int-send-skip"), False),
        (Fact("G0", edges={WW}), False),
        (Fact("G1c", edges={WR}), True),
        (Fact("G1c", edges={WW, WR}), False),
        (Fact("G1c-process", edges={WR, PROCESS}), True),
        (Fact("G1c-realtime", edges={WR, REALTIME}), True),
        (Fact("unseen", ok_poll=False), False),
        (Fact("lost-write", ok_poll=False), True),
    ],
    ids=lambda x: getattr(x, "name", ""),
)
def test_the_table_decides_each_fact(fact, error):
    assert is_error(fact) is error


def test_a_policy_is_read_from_the_table():
    assert BY_NAME["poll-skip"].policy.allowed_under == {SUBSCRIBE}
    assert BY_NAME["G1c"].policy.allowed_with_edges == {WW}


def test_edge_kinds_keep_the_labels_results_json_has():
    assert [k.label for k in EdgeKind] == ["ww", "wr", "process", "realtime"]
    assert [EdgeKind.of(k.label) for k in EdgeKind] == list(EdgeKind)
    assert set(EDGE_COLOURS) == {k.label for k in EdgeKind}
