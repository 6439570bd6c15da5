"""Every anomaly: a hand-made history that has it, and a near-identical one that does not."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kafka_chaos.checkers import anomalies
from kafka_chaos.checkers.anomalies import (
    BY_NAME,
    CONTRACT_NAMES,
    CONTROL_NAMES,
    NAMES,
    PENDING,
    SHARE_NAMES,
    pending_warnings,
)
from tests.checkers import cp_cases
from tests.checkers import histories as H

pytestmark = pytest.mark.spark

CASES = [(name, build, extra) for name, cases in H.CASES.items() for build, extra in cases]


#: Anomalies whose case needs a run directory's control-plane evidence, not a bare history.
WITH_EVIDENCE = {
    "share-redelivered-on-failover": "tests/checkers/test_share.py",
    "log-start-moved": "tests/checkers/test_tiered.py",
}


def test_every_anomaly_has_a_case():
    """The history's anomalies here, the control plane's in test_control_plane.py."""
    assert set(H.CASES) | set(cp_cases.CASES) | set(WITH_EVIDENCE) == set(NAMES)
    assert set(cp_cases.CASES) == set(CONTROL_NAMES)


@pytest.mark.parametrize(("name", "build", "extra"), CASES, ids=[f"{n}-{b.__name__}" for n, b, _ in CASES])
def test_anomaly_and_its_near_miss(check, name, build, extra):
    bad = check(build(True))
    assert set(bad.anomalies) == {name} | extra, bad.anomalies
    error = BY_NAME[name].error != "never" and build not in H.ALLOWED
    assert bool(bad.anomalies[name]["errors"]) == error
    assert bad.valid is (False if error or extra else True)
    assert bad.exit_code == (1 if error or extra else 0)
    good = check(build(False))
    assert good.anomalies == {}, good.anomalies
    assert good.valid is True and good.exit_code == 0


def test_subscribe_makes_poll_skip_allowed(check):
    result = check(H.poll_skip(True, f="subscribe"))
    assert result.anomalies["poll-skip"]["count"] == 1
    assert result.anomalies["poll-skip"]["errors"] == 0
    assert result.anomalies["poll-skip"]["examples"][0]["allowed"] is True
    assert result.valid is True


def test_lost_write_example_names_key_offsets_values_and_ops(check):
    h = H.lost_write(True)
    result = check(h)
    second_send = h.events[3]  # the ok completion of value 2 at offset 1
    assert second_send["value"] == [["send", "t/0", [1, 2]]]
    assert result.anomalies["lost-write"] == {
        "count": 1,
        "errors": 1,
        "examples": [{"key": "t/0", "offsets": [1], "values": [2], "ops": [3], "process": 0}],
    }
    v = result.stats["values"]
    assert (v["acknowledged"], v["read"], v["lost"], v["unseen"]) == (3, 2, 1, 0)
    saved = json.loads(result.results_path.read_text())
    assert saved["valid"] is False and saved["anomalies"]["lost-write"]["count"] == 1
    assert saved["stats"]["operations"]["send"] == {"ok": 3}


def _shared_contract() -> Path | None:
    """../shared/anomalies.md, beside this checkout or in it."""
    root = Path(__file__).resolve().parents[2]
    places = (root.parent / "shared" / "anomalies.md", root / "shared" / "anomalies.md")
    return next((p for p in places if p.exists()), None)


def test_names_match_the_shared_contract():
    """The anomaly table is the checker's copy of ../shared/anomalies.md; they must agree."""
    shared = _shared_contract()
    if shared is None:
        pytest.skip("../shared/anomalies.md is not beside this checkout")
    # Every backticked name in the first column of a table row (a row may name two).
    rows = re.findall(r"^\| (`[^|]+)\|", shared.read_text(), re.M)
    contract = {name for row in rows for name in re.findall(r"`([^`]+)`", row)}
    # And the ones its prose adds ("Added 2026-11-27, an error: `commit-lost` — ...").
    contract |= set(re.findall(r"an error: `([^`]+)`", shared.read_text()))
    # Every name the contract tables give is judged, or pending with the issue that brings it.
    assert contract == set(CONTRACT_NAMES) | (contract & set(PENDING)) and not set(NAMES) & set(PENDING)
    assert not contract & (set(NAMES) - set(CONTRACT_NAMES))  # the project's own are not the contract's
    assert all(name in shared.read_text() for name in PENDING)


def test_the_share_rules_are_the_contracts_share_groups():
    """The table marks a share rule as one (SHARE_MODULES): exactly the anomalies the contract lists
    under "Share groups" that the checker judges."""
    shared = _shared_contract()
    if shared is None:
        pytest.skip("../shared/anomalies.md is not beside this checkout")
    section = re.search(r"^## Share groups.*?(?=^## )", shared.read_text(), re.M | re.S)
    assert section is not None
    listed = set(re.findall(r"^\| `([^`]+)` \|", section.group(0), re.M))
    assert set(SHARE_NAMES) == listed & set(NAMES) and "share-lost" in SHARE_NAMES
    assert "lost-write" not in SHARE_NAMES  # a data-plane rule of the same pass that is not a share rule


def test_a_history_with_operations_of_a_pending_rule_says_it_was_not_checked(monkeypatch):
    monkeypatch.setattr(anomalies, "PENDING", {"a-rule": ("issue 99", ("commit",)), "b-rule": ("issue 98", ("x",))})
    assert pending_warnings({"send": {}, "poll": {}}) == []
    (warning,) = pending_warnings({"send": {}, "commit": {"ok": 3}})
    assert warning.startswith("not checked yet (issue 99): a-rule")


def test_docs_show_the_anomaly_table():
    from kafka_chaos.checkers.anomalies import markdown_table

    docs = Path(__file__).resolve().parents[2] / "docs" / "checker.md"
    assert markdown_table() in docs.read_text()


def _group_handover(bad: bool) -> H.History:
    """A consumer group hands key t/0 from member 1 to member 2: member 1 read values 1 and 2 and
    committed {t/0: 2} (bad: 3, past what it was given); member 2 resumes at the commit."""
    h = H.History()
    h.op(1, "subscribe", [], [])
    h.op(2, "subscribe", [], [])
    h.op(1, "subscribe", [H.K], [H.K])  # a rebalance member 1 saw, recorded after its poll
    for v in range(1, 5):
        h.send(0, H.K, [(v, v - 1)])
    h.poll(1, {H.K: [(0, 1), (1, 2)]})
    h.op(1, "commit", {H.K: 3 if bad else 2}, {H.K: 3 if bad else 2})
    h.op(1, "subscribe", [], [])
    h.op(2, "subscribe", [H.K], [H.K])
    h.poll(2, {H.K: [(3, 4)]} if bad else {H.K: [(2, 3), (3, 4)]})
    h.op(2, "commit", {H.K: 4}, {H.K: 4})
    return h


def test_a_group_that_commits_past_what_it_delivered_loses_the_record(check):
    """The group-level check (../shared/anomalies.md, "Consumer groups"): a member that resumes
    at a commit past an undelivered record skips it, and the record is lost to the application;
    commit operations themselves are carried, never an anomaly."""
    bad = check(_group_handover(True))
    assert set(bad.anomalies) == {"lost-write"}, bad.anomalies
    assert bad.anomalies["lost-write"]["examples"][0]["values"] == [3]
    assert bad.stats["operations"]["commit"] == {"ok": 2}
    good = check(_group_handover(False))
    assert good.anomalies == {} and good.valid is True, good.anomalies
