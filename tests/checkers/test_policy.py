"""The anomaly table's policies (checkers/anomalies.py `is_error`) on their own: no Spark."""

from __future__ import annotations

import pytest

from kafka_chaos.checkers.anomalies import ANOMALIES, BY_NAME, Fact, is_error
from kafka_chaos.checkers.edge_kinds import EdgeKind
from kafka_chaos.checkers.report.svg import EDGE_COLOURS
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


def test_no_rule_module_spells_a_mode_or_an_edge_kind_by_number():
    """The rules report facts; the exemptions are the table's (subscribe) and edge kinds are named."""
    import ast
    import inspect

    from kafka_chaos.checkers import check
    from kafka_chaos.checkers.data_plane import per_key
    from kafka_chaos.checkers.txn import cycles, scc

    # commit-lost is about the subscribe that gives a member a key: the operation, not an exemption.
    for module in (*[m for m in per_key.RULES if not m.__name__.endswith(".commit_lost")], check, scc):
        tree = ast.parse(inspect.getsource(module))
        constants = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert SUBSCRIBE not in constants and "SUBSCRIBE" not in names, module.__name__

    # Edges carry EdgeKind members: no comparison of a kind, and no call that takes one, spells 0 to 3.
    def spelled(node: ast.AST) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
            n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
        }

    for node in ast.walk(ast.parse(inspect.getsource(cycles))):
        if isinstance(node, ast.Compare) and "kind" in spelled(node):
            parts = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and spelled(node.func) & {"_instances", "keyless"}:
            parts = node.args
        else:
            continue
        bare = [p for p in parts if isinstance(p, ast.Constant) and p.value in (0, 1, 2, 3)]
        assert not bare, ast.unparse(node)
