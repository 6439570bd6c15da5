"""Every control-plane anomaly: a hand-made run directory that has it, and a near-identical one that
does not (tests/checkers/cp_cases.py); and a run without the evidence, checked as before."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kafka_chaos.checkers.anomalies import CONTROL_NAMES
from kafka_chaos.checkers.check import check_history, format_summary
from kafka_chaos.history.run_dir import RunDir
from tests.checkers import cp_cases
from tests.checkers.cp_builder import Run, change, fence, rec
from tests.checkers.histories import lost_write

pytestmark = pytest.mark.spark

CASES = [(name, build) for name, builds in cp_cases.CASES.items() for build in builds]


@pytest.fixture
def check_run(spark_session, tmp_path: Path):
    counter = iter(range(1_000_000))

    def run(r: Run):
        n = next(counter)
        history = r.write(tmp_path / f"run-{n}")
        return check_history(history, report=False, session=spark_session)

    return run


def test_every_control_plane_anomaly_has_a_case():
    assert set(cp_cases.CASES) == set(CONTROL_NAMES)


@pytest.mark.parametrize(("name", "build"), CASES, ids=[f"{n}-{b.__name__}" for n, b in CASES])
def test_control_plane_anomaly_and_its_near_miss(check_run, name, build):
    bad = check_run(build(True))
    assert set(bad.anomalies) == {name}, (bad.anomalies, bad.control_plane["not_checked"])
    assert bad.anomalies[name]["errors"] == bad.anomalies[name]["count"] >= 1
    assert bad.valid is False and bad.exit_code == 1
    assert f"control plane: {name}" in format_summary(bad)
    assert bad.brief()["errors"][name] >= 1
    good = check_run(build(False))
    assert good.anomalies == {}, good.anomalies
    assert good.valid is True
    assert good.control_plane["checked"] is True and good.control_plane["not_checked"] == {}
    assert "control plane: ok" in format_summary(good) and good.brief()["control_plane"] == "ok"


def test_a_bare_history_is_not_checked_and_says_so(check):
    result = check(lost_write(False))
    assert result.control_plane == {"checked": False, "why": "no control-plane evidence in the run directory"}
    assert "control plane: not checked" in format_summary(result)
    assert result.brief()["control_plane"].startswith("not checked")
    assert json.loads(result.results_path.read_text())["control_plane"]["checked"] is False


def test_results_hold_what_the_contract_reports_beside_the_anomalies(check_run):
    result = check_run(cp_cases.split_brain(True))
    cp = json.loads(result.results_path.read_text())["control_plane"]
    assert cp["slack_s"] == 5.0 and cp["settings"]["controller.quorum.fetch.timeout.ms"] == 2000
    assert cp["bounds_s"]["quorum-split-brain"] == 8.0
    partition = next(f for f in cp["faults"] if f["f"] == "partition")
    assert partition["active_controller"] == "kafka-1"
    assert partition["next_quorum_leader_after_s"] == pytest.approx(1.99, abs=0.02)
    heal = next(h for h in cp["heals"] if h["f"] == "heal")
    assert (heal["epoch_before"], heal["epoch_after"], heal["epochs_added"]) == (2, 2, 0)
    assert set(cp["metadata_lag"]) == {"kafka-1", "kafka-2", "kafka-3"}
    example = result.anomalies["quorum-split-brain"]["examples"][0]
    assert example["nodes"] == ["kafka-1", "kafka-2"] and example["epochs"] == [1, 2]
    assert example["from_s"] == 12.0 and example["to_s"] == 40.0
    assert example["since_s"][1] == 12.0 and example["since_s"][0] < 10.0  # kafka-1 led before the cut
    assert example["cut_off"] == {"kafka-1": ["kafka-2", "kafka-3"], "kafka-2": ["kafka-1"]}


def test_reaction_times_of_a_killed_broker(check_run):
    result = check_run(cp_cases.unfenced_down_broker(False))
    kill = next(f for f in result.control_plane["faults"] if f["f"] == "kill")
    assert kill["fenced_after_s"] == {"kafka-3": pytest.approx(8.99, abs=0.01)}
    assert kill["isr_shrinks"] == [
        {"node": "kafka-3", "partition": "chaos/0", "after_s": pytest.approx(8.99, abs=0.01)}
    ]


def test_rules_without_their_evidence_are_listed(spark_session, tmp_path):
    history = Run().write(tmp_path / "partial")
    (history.parent / "control-plane" / "quorum-replication.jsonl").unlink()
    result = check_history(history, report=False, session=spark_session)
    missing = result.control_plane["not_checked"]
    assert set(missing) == {"metadata-divergence", "unfenced-down-broker", "stale-isr-member", "stuck-broker-metadata"}
    assert set(missing.values()) == {"no quorum-replication.jsonl"}
    # Evidence there is expected, config.json silent or not (anomalies.md, amended 2026-12-06).
    assert result.valid == "unknown" and result.control_plane["expected"] is True


def test_the_report_has_a_control_plane_timeline_per_node(spark_session, tmp_path):
    history = cp_cases.split_brain(True).write(tmp_path / "run")
    result = check_history(history, report=True, session=spark_session)
    html = result.report_path.read_text()
    assert 'id="control-plane"' in html and 'id="a-quorum-split-brain"' in html
    for node in ("kafka-1", "kafka-2", "kafka-3"):
        assert f'aria-label="{node}: quorum epoch and role, fencing, metadata lag"' in html
    assert 'class="fault fault-partition"' in html.split('id="control-plane"')[1]


@pytest.mark.parametrize("touched", [None, "kill", "partition", "registered"])
def test_live_brokers_fenced_while_the_active_controller_is_paused_are_reported(check_run, touched):
    """kafka-1, the quorum leader, paused from 10 s to 18 s; broker 2 fenced at 15 s: spurious
    (KAFKA-17793) when no fault touched it, not when it was killed or cut off itself, and a new
    incarnation's fenced registration is no fencing (its kill ended before the pause)."""
    r = Run().fault("pause", ["kafka-1"], 10).fault("resume", ["kafka-1"], 18)
    if touched == "kill":
        r.fault("kill", ["kafka-2"], 12).fault("start", ["kafka-2"], 30)
    elif touched == "partition":
        cut = {"kafka-2": ["kafka-3"], "kafka-3": ["kafka-2"]}
        r.fault("partition", ["kafka-2", "kafka-3"], 12, grudge=cut, shape="cut").fault("heal", list(r.logs), 30)
    if touched == "registered":
        r.fault("kill", ["kafka-2"], 4).fault("start", ["kafka-2"], 8)
        r.add(rec(8, 15, "REGISTER_BROKER_RECORD", brokerId=2, brokerEpoch=8, fenced=True))
    else:
        r.add(fence(8, 15, 2))
    cp = json.loads(check_run(r).results_path.read_text())["control_plane"]
    pause = next(f for f in cp["faults"] if f["f"] == "pause")
    assert pause["active_controller"] == "kafka-1"
    assert pause["live_brokers_fenced_after_s"] == (
        {"kafka-2": pytest.approx(4.99, abs=0.02)} if touched is None else {}
    )


def _not_checked(check_run, r: Run) -> dict[str, str]:
    result = check_run(r)
    return result.control_plane["not_checked"]


def test_a_rule_whose_window_did_not_elapse_is_not_checked(check_run):
    """The last heal at 50 s, kafka-3 behind at log end 8 from then on while the quorum moves on, and
    the samples ending at 60 s: stuck-broker-metadata needs 35 s after the heal, or every broker seen
    fetching since. Near misses: kafka-3 fetches again at 55 s; every broker caught up all along."""
    r = Run().fault("kill", ["kafka-3"], 10).fault("start", ["kafka-3"], 50)
    r.add(change(8, 15, isr=[2]), fence(9, 15, 3), fence(10, 52, 3, fenced=-1))
    r.until, r.hw_per_s = 60.0, 1
    r.behind("kafka-3", 50, 1000, 8)
    missing = _not_checked(check_run, r)
    assert set(missing) == {"stuck-broker-metadata"}, missing
    why = "end 10.0 s after the last heal, before the rule's 35 s, with kafka-3 not seen fetching since"
    assert why in missing["stuck-broker-metadata"]
    r.leo.clear()
    r.behind("kafka-3", 50, 55, 8)
    assert _not_checked(check_run, r) == {}
    r.leo.clear()
    assert _not_checked(check_run, r) == {}


def test_a_fault_still_in_place_at_the_end_leaves_stuck_unchecked(check_run):
    """kafka-3 killed at 10 s for good: stuck-broker-metadata has no heal to count from, and
    stale-isr-member's bound (1.5 x 30 + 5 s) ends after the evidence does: both said not checked,
    as the contract's oracle says. Near miss: with the 10 s lag setting the bound ends at 30 s,
    inside the evidence, and only stuck-broker-metadata is left unchecked."""
    r = Run().fault("kill", ["kafka-3"], 10).add(change(8, 15, isr=[2]), fence(9, 15, 3))
    missing = _not_checked(check_run, r)
    assert set(missing) == {"stuck-broker-metadata", "stale-isr-member"}, missing
    assert "still in place when the run ended" in missing["stuck-broker-metadata"]
    assert "the evidence ended before its bound elapsed" in missing["stale-isr-member"]
    r.settings["replica.lag.time.max.ms"] = 10000
    assert set(_not_checked(check_run, r)) == {"stuck-broker-metadata"}


def test_the_rules_that_need_node_ids_are_not_checked_without_them(spark_session, tmp_path):
    """metadata-divergence reads no node's id (every log is compared below the final high
    watermark); the rules that name a faulted node's broker do."""
    history = Run().write(tmp_path / "ids")
    nodes = history.parent / "control-plane" / "nodes.json"
    described = json.loads(nodes.read_text())
    described["nodes"] = {a: {"roles": n["roles"]} for a, n in described["nodes"].items()}
    nodes.write_text(json.dumps(described))
    missing = check_history(history, report=False, session=spark_session).control_plane["not_checked"]
    assert set(missing) == {"unfenced-down-broker", "stale-isr-member", "stuck-broker-metadata"}
    assert all("no node ids in nodes.json" in missing[n] for n in missing)


def test_a_log_whose_node_no_sample_lists_is_compared_all_the_same(spark_session, tmp_path):
    """kafka-3's log holds another record at offset 8, in the same epoch, and no replication sample
    lists kafka-3 (at 192bec4: not compared, and not said): it is compared below the final high
    watermark, as every log is, whatever it fetched (records of one epoch at one offset must match)."""
    r = Run().add(rec(8, 5, "NO_OP_RECORD"), rec(9, 6, "NO_OP_RECORD"), nodes=("kafka-1", "kafka-2"))
    r.add(rec(8, 5, "TOPIC_RECORD", name="x", topicId="T8"), nodes=("kafka-3",))
    history = r.write(tmp_path / "unsampled")
    path = history.parent / "control-plane" / "quorum-replication.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    for s in lines:
        s["voters"] = [v for v in s["voters"] if v["id"] != 3]
    path.write_text("".join(json.dumps(s) + "\n" for s in lines))
    result = check_history(history, report=False, session=spark_session)
    assert "metadata-divergence" not in result.control_plane["not_checked"]
    assert [e["offset"] for e in result.anomalies["metadata-divergence"]["examples"]] == [8]


TIMING = {"unfenced-down-broker", "stale-isr-member"}


@pytest.mark.parametrize(
    ("gap", "rules"),
    [
        ("metadata", set(CONTROL_NAMES) - {"quorum-split-brain", "quorum-epoch-regression", "stuck-broker-metadata"}),
        ("views", {"quorum-split-brain", "quorum-double-leader", "quorum-epoch-regression"} | TIMING),
        ("replication", {"metadata-divergence", "stuck-broker-metadata"} | TIMING),
    ],
)
def test_evidence_the_run_could_not_collect_whole_leaves_its_rules_unchecked(spark_session, tmp_path, gap, rules):
    """control-plane/gaps.json: the run says which evidence it expected and did not get whole (a
    decode that failed, a sampler that died); every rule that reads it is not checked, with the reason."""
    history = Run().write(tmp_path / gap)
    RunDir(history.parent).control_plane_gaps.write_text(json.dumps({gap: f"{gap} broke: boom"}))
    cp = check_history(history, report=False, session=spark_session).control_plane
    assert set(cp["not_checked"]) == rules
    assert set(cp["not_checked"].values()) == {f"{gap} broke: boom"}
    assert cp["rules_checked"] == len(CONTROL_NAMES) - len(rules)


def test_the_docs_table_is_the_rules():
    from kafka_chaos.checkers.control_plane import rules as cp_rules

    docs = Path(__file__).parents[2] / "docs" / "checker.md"
    assert cp_rules.markdown_table() in docs.read_text()
    assert [r.name for r in cp_rules.RULES] == list(CONTROL_NAMES)


def test_each_judged_window_says_the_host_stall_it_added(check_run):
    """A bound exceeded by 1 s: found without a stall, and a near miss with the 2 s stall the probe
    measured inside its window; results.json gives both, with the stall added."""
    found = check_run(cp_cases.unfenced_under_a_stall(True))
    example = found.anomalies["unfenced-down-broker"]["examples"][0]
    assert example["stall_s"] == 0.0 and example["deadline_s"] == pytest.approx(24.01, abs=0.01)
    spared = check_run(cp_cases.unfenced_under_a_stall(False))
    assert spared.anomalies == {}
    assert spared.control_plane["host_stall"]["probe"] is True
    assert spared.control_plane["host_stall"]["until_s"] > 26.01  # the probe covered the window
    (window,) = spared.control_plane["judged_windows"]["unfenced-down-broker"]
    assert window["found"] is False and window["stall_s"] == pytest.approx(2.0, abs=0.01)
    assert window["deadline_s"] == pytest.approx(26.01, abs=0.01)


def test_the_report_shows_each_judged_window_with_its_stall(check_run):
    """The report's control-plane section lists the judged windows of results.json: the near miss a
    2 s stall spared, with the stall it added, and says when no probe ran."""
    from kafka_chaos.checkers.report.page import _judged_windows

    cp = check_run(cp_cases.unfenced_under_a_stall(False)).control_plane
    html = _judged_windows(cp)
    row = re.search(r"<tr>\s*<td>unfenced-down-broker</td>.*?</tr>", html, flags=re.S)
    assert row is not None, html
    cells = re.findall(r"<td>(.*?)</td>", row.group(0))
    assert cells[-2:] == ["2.0", "near miss"], cells
    assert "host stall probe: " in html
    silent = _judged_windows({**cp, "host_stall": {"probe": False}, "judged_windows": {}})
    assert "no host stall probe ran" in silent and "Timing windows judged" not in silent
