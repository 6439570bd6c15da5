"""The plain-Python oracle (oracle.py) against the contract's cases, and the Spark checker against
the oracle on generated histories with injected anomalies (the differential test).

The oracle is checked first on its own, on the same hand-made histories as the Spark checker
(histories.py), so that a disagreement in the differential test points at the pipeline."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from kafka_chaos.checkers.anomalies import BY_NAME
from tests.checkers import histories as H
from tests.checkers import oracle
from tests.checkers.builder import History
from tests.checkers.concurrent_txns import generate
from tests.checkers.test_properties import INJECTIONS, MODELS, PROVEN_INFO, QUICK

K = H.K
CASES = [(name, build, extra) for name, cases in H.CASES.items() for build, extra in cases]


def names(h: History) -> set[str]:
    return set(oracle.check(h.events))


@pytest.mark.parametrize(("name", "build", "extra"), CASES, ids=[f"{n}-{b.__name__}" for n, b, _ in CASES])
def test_the_oracle_finds_each_case_and_not_its_near_miss(name, build, extra):
    found = oracle.check(build(True).events)
    assert set(found) == {name} | extra
    assert bool(found[name].errors) == (BY_NAME[name].error != "never" and build not in H.ALLOWED)
    assert names(build(False)) == set()


def test_the_oracle_allows_poll_order_under_subscribe():
    found = oracle.check(H.poll_skip(True, f="subscribe").events)
    assert (found["poll-skip"].count, found["poll-skip"].errors) == (1, 0)


def test_the_oracle_counts_unseen_as_no_error_without_an_ok_poll():
    h = History()
    h.send(0, K, [(1, 0)])
    h.poll(1, {K: [(0, 1)]}, type="fail")
    found = oracle.check(h.events)
    assert (found["unseen"].count, found["unseen"].errors) == (1, 0)


def counts(found: dict) -> dict[str, tuple[int, int]]:
    return {name: (f.count, f.errors) for name, f in found.items()}


def spark_counts(result) -> dict[str, tuple[int, int]]:
    return {name: (a["count"], a["errors"]) for name, a in result.anomalies.items()}


@pytest.mark.spark
@settings(max_examples=4, **QUICK)
@given(MODELS)
def test_spark_agrees_with_the_oracle_on_consistent_histories(check, m):
    assert spark_counts(check(m.h)) == counts(oracle.check(m.h.events))


@pytest.mark.spark
@pytest.mark.parametrize("name", list(INJECTIONS))
@settings(max_examples=1, **QUICK)
@given(m=MODELS)
def test_spark_agrees_with_the_oracle_on_each_injected_anomaly(check, name, m):
    INJECTIONS[name](m)
    expected = counts(oracle.check(m.h.events))
    assert name in expected
    assert spark_counts(check(m.h)) == expected


@pytest.mark.spark
@pytest.mark.parametrize("name", list(PROVEN_INFO))
@settings(max_examples=1, **QUICK)
@given(m=MODELS)
def test_spark_agrees_with_the_oracle_on_proven_info_sends(check, name, m):
    PROVEN_INFO[name](m)
    expected = counts(oracle.check(m.h.events))
    assert name in expected
    assert spark_counts(check(m.h)) == expected


@pytest.mark.spark
def test_spark_agrees_with_the_oracle_on_concurrent_transactions(check, tmp_path):
    """Overlapping transactions (tests/checkers/concurrent_txns.py) make ww and ww + wr cycles, as
    Kafka's do: the two count the same components, allowed, and nothing else."""
    history = tmp_path / "txns.jsonl"
    generate(history, 1500, processes=16, keys=16)
    expected = counts(oracle.check_file(history))
    assert set(expected) == {"G0", "G1c"} and expected["G0"][0] > 10, expected
    assert all(errors == 0 for _, errors in expected.values())
    result = check(history)
    assert spark_counts(result) == expected
    assert result.valid is True
