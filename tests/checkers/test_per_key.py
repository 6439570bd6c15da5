"""checkers/data_plane/per_key.py on its own (pandas, no Spark): the rows of each key built in plain Python
from a history, the instances counted, and compared with the oracle."""

from __future__ import annotations

from collections import Counter, defaultdict

import pandas as pd
import pytest
from hypothesis import given, settings

from kafka_chaos.checkers.data_plane import per_key
from kafka_chaos.checkers.share.context import ShareContext
from kafka_chaos.checkers.txn import cycles
from kafka_chaos.history.events import ACK_TYPES
from tests.checkers import histories as H
from tests.checkers import oracle
from tests.checkers.test_properties import INJECTIONS, MODELS, QUICK

# The cycle anomalies are found after the per-key pass, from the edges it emits (checkers/txn/cycles.py):
# not here.
CASES = [(name, build, extra) for name, cases in H.CASES.items() if name not in cycles.NAMES for build, extra in cases]
COLUMNS = ["kind", "key", "op", "process", "f", "type", "pos", "offset", "value", "n_assign", "mode", "evidenced"]
COLUMNS += ["time", "itime", "count"]


def rows_of(events: list[dict]) -> pd.DataFrame:
    """The rows checkers/tables.py makes, from the contract's reading of the events (oracle.py)."""
    ops = sorted(oracle.operations(events), key=lambda o: o.id)
    ok_read = {(k, v) for op in ops if op.type == "ok" for k, _, v in op.reads}
    evidenced = {op.id for op in ops if op.type == "info" and any((k, v) in ok_read for k, v, _ in op.sends)}
    n_assign: dict[str, int] = defaultdict(int)
    mode: dict[str, str] = {}
    rows = []
    for op in ops:
        if op.keys is not None:
            n_assign[op.process] += 1
            mode[op.process] = op.f
        common = dict(op=op.id, process=op.process, f=op.f, type=op.type, n_assign=n_assign[op.process])
        common.update(mode=mode.get(op.process), time=op.ctime, evidenced=False)
        timed = dict(common, itime=op.itime)
        for pos, (k, v, o) in enumerate(op.sends):
            rows.append(dict(common, kind="send", key=k, pos=pos, offset=o, value=v, evidenced=op.id in evidenced))
        for pos, (k, o, v) in enumerate(op.reads):
            rows.append(dict(common, kind="read", key=k, pos=pos, offset=o, value=v))
        for k in op.keys or []:
            rows.append(dict(timed, kind="assign", key=k, pos=0, offset=None, value=None))
        for k, o in (op.commits or {}).items():
            rows.append(dict(timed, kind="commit", key=k, pos=0, offset=o, value=None))
        for pos, (k, o, v, n) in enumerate(op.delivered):
            rows.append(dict(timed, kind="deliver", key=k, pos=pos, offset=o, value=v, count=n))
        for pos, (k, o, t, outcome) in enumerate(op.acks):
            rows.append(dict(timed, kind="ack", key=k, pos=pos, offset=o, value=ACK_TYPES[t], type=outcome))
        for k, o in (op.starts or {}).items():
            rows.append(dict(common, kind="start", key=k, pos=0, offset=o, value=None))
    df = pd.DataFrame(rows, columns=COLUMNS)
    return df.astype({"offset": "float64", "value": "float64", "count": "float64", "time": "float64"})


def share_context(events: list[dict]) -> ShareContext | None:
    """What checkers/share/context.py collects, from the events; None without a share-poll."""
    ops = sorted(oracle.operations(events), key=lambda o: o.id)
    if not any(op.f == "share-poll" for op in ops):
        return None
    every = [e for e in events]
    end = max(e["time"] for e in every)
    settings = {op.id: (op.settings.get("lock_ms"), op.settings.get("delivery_limit")) for op in ops if op.settings}
    stops: dict[str, list[int]] = defaultdict(list)
    last: dict[str, oracle.Op] = {}
    for op in ops:
        if op.f in ("crash", "close"):
            stops[op.process].append(op.itime)
        last[op.process] = op
    ends = {p: (op.ctime if op.ctime is not None else op.itime) for p, op in last.items() if op.type == "info"}
    return ShareContext(settings, dict(stops), ends, end, None)


def counts(events: list[dict]) -> dict[str, tuple[int, int]]:
    df = rows_of(events)
    share = share_context(events)
    found = [per_key.key_rules(part, share) for _, part in df.groupby("key")] if len(df) else []
    total, errors = Counter(), Counter()
    for f in found:
        for name, allowed in zip(f["name"], f["allowed"], strict=True):
            if name.startswith(cycles.PREFIX):  # an edge for the cycle search, not an instance
                continue
            total[name] += 1
            errors[name] += int(not allowed)
    if total.get("unseen") and not any(
        e["type"] == "ok" and (e["f"] == "poll" or (e["f"] == "txn" and "poll" in str(e["value"]))) for e in events
    ):
        errors["unseen"] = 0
    return {name: (total[name], errors[name]) for name in total}


def expected(events: list[dict]) -> dict[str, tuple[int, int]]:
    return {name: (f.count, f.errors) for name, f in oracle.check(events).items() if name not in cycles.NAMES}


@pytest.mark.parametrize(("name", "build", "extra"), CASES, ids=[f"{n}-{b.__name__}" for n, b, _ in CASES])
def test_each_case_and_its_near_miss(name, build, extra):
    bad = build(True).events
    assert counts(bad) == expected(bad)
    assert set(counts(bad)) == {name} | extra
    assert counts(build(False).events) == {}


@settings(max_examples=60, **QUICK)
@given(MODELS)
def test_generated_histories(m):
    assert counts(m.h.events) == expected(m.h.events)


@pytest.mark.parametrize("name", list(INJECTIONS))
@settings(max_examples=15, **QUICK)
@given(m=MODELS)
def test_each_injected_anomaly(name, m):
    INJECTIONS[name](m)
    assert counts(m.h.events) == expected(m.h.events)


def _anomaly_names_in(module) -> set[str]:
    """The anomaly names a module's source spells as string constants."""
    import ast
    import inspect

    from kafka_chaos.checkers.anomalies import NAMES

    tree = ast.parse(inspect.getsource(module))
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in NAMES}


def test_the_rules_are_the_anomaly_tables_modules_each_with_the_one_signature():
    import inspect

    from kafka_chaos.checkers.anomalies import ANOMALIES, DATA
    from kafka_chaos.checkers.data_plane.version_order import KeyView

    # The data plane's rules (the control plane's read other evidence: checkers/control_plane/judge.py).
    data_plane = [a for a in ANOMALIES if a.plane == DATA]
    room = "kafka_chaos.checkers."
    assert [m.__name__.removeprefix(room) for m in per_key.RULES] == list(dict.fromkeys(a.module for a in data_plane))
    for module in per_key.RULES:
        signature = inspect.signature(module.rules)
        assert [p.annotation for p in signature.parameters.values()] in (["KeyView"], [KeyView]), module.__name__
        assert signature.return_annotation in ("list[pd.DataFrame]", list[pd.DataFrame]), module.__name__
        # Each anomaly is produced where the table says its rule lives, and nowhere else.
        mine = {a.name for a in ANOMALIES if a.module == module.__name__.removeprefix(room)}
        assert _anomaly_names_in(module) == mine, module.__name__


def test_a_share_rule_is_one_because_the_table_says_so():
    from kafka_chaos.checkers.anomalies import ANOMALIES, SHARE_MODULES, SHARE_NAMES
    from kafka_chaos.checkers.data_plane import lost_write, share_rules

    assert per_key.SHARE_RULES == (share_rules,) and share_rules not in per_key.PLAIN_RULES
    assert lost_write in per_key.PLAIN_RULES and lost_write not in per_key.SHARE_RULES
    assert set(per_key.SHARE_RULES) | set(per_key.PLAIN_RULES) == set(per_key.RULES)
    # Every anomaly of a share module is a share anomaly, and no other module's is.
    assert {a.name for a in ANOMALIES if a.module in SHARE_MODULES} == set(SHARE_NAMES)
    assert set(SHARE_NAMES) == set().union(*(_anomaly_names_in(m) for m in per_key.SHARE_RULES))


def test_only_a_share_group_run_reaches_the_share_rules(monkeypatch):
    """The same key with its share-group context goes to the share rule module; without it, the
    pass never calls that module."""
    from kafka_chaos.checkers.data_plane import share_rules

    called = []
    monkeypatch.setattr(share_rules, "rules", lambda view: called.append(view.key) or [])
    events = H.share_lost(True).events
    rows, share = rows_of(events).assign(evidenced=False), share_context(events)
    assert share is not None
    per_key.key_rules(rows, None)
    assert called == []
    per_key.key_rules(rows, share)
    assert called


def test_a_rule_in_the_wrong_module_is_noticed():
    # The near miss of the test above: poll_order's source names send_order's anomalies? It does not.
    from kafka_chaos.checkers.data_plane import poll_order, send_order

    assert "int-send-skip" not in _anomaly_names_in(poll_order)
    assert "int-send-skip" in _anomaly_names_in(send_order)
