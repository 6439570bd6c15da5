"""bench/plain_checker.py, the baseline bench/check_scale.py times the checker against, counts what
the oracle (tests/checkers/oracle.py, another program written from the contract) counts, rule by
rule, on the hand-made histories of tests/checkers/histories.py: each data-plane anomaly's case and
its near miss, and a generated consistent history. No Spark."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from bench import plain_checker
from bench.check_scale import generate
from tests.checkers import oracle
from tests.checkers.histories import CASES
from tests.checkers.test_properties import INJECTIONS, MODELS, PROVEN_INFO

DATA_PLANE = [name for name in CASES if name in plain_checker.RULES]


def _oracle(events: list[dict]) -> dict[str, list[int]]:
    return {n: [f.count, f.errors] for n, f in oracle.check(events).items() if n in plain_checker.RULES}


def test_it_covers_every_data_plane_rule_that_has_cases():
    assert set(DATA_PLANE) == set(plain_checker.RULES)


@pytest.mark.parametrize("name", list(CASES))
def test_the_plain_checker_counts_what_the_oracle_counts(tmp_path: Path, name: str):
    """Every case, the share and transaction ones too (their data-plane counts: a key only share
    consumers read is the share rules' alone)."""
    for n, (build, _) in enumerate(CASES[name]):
        for bad in (True, False):
            history = build(bad)
            path = history.write(tmp_path / f"{n}-{bad}.jsonl")
            got = plain_checker.check_file(path)
            assert got == _oracle(history.events), (name, n, bad)
            if bad and name in plain_checker.RULES:
                assert got.get(name, [0])[0] > 0, (name, n)  # the case fires the rule


def test_a_consistent_generated_history_has_nothing(tmp_path: Path):
    path = tmp_path / "history.jsonl"
    generate(path, 3_000)
    assert plain_checker.check_file(path) == {}
    assert {n: [f.count, f.errors] for n, f in oracle.check_file(path).items()} == {}


INJECTED = [(n, inject) for n, inject in INJECTIONS.items() if n in plain_checker.RULES]
INJECTED += [(f"{n} (info)", inject) for n, inject in PROVEN_INFO.items()]


@pytest.mark.parametrize(("name", "inject"), INJECTED, ids=[n for n, _ in INJECTED])
@settings(max_examples=25, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(m=MODELS)
def test_on_generated_histories_with_an_anomaly_injected_too(tmp_path_factory, name, inject, m):
    """test_properties.py's generated histories (consistent, then one anomaly injected)."""
    inject(m)
    path = m.h.write(tmp_path_factory.mktemp("h") / "history.jsonl")
    assert plain_checker.check_file(path) == _oracle(m.h.events)
