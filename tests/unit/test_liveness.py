"""Liveness from hand-made histories with controlled rates (checkers/measures/liveness.py): each rule has a
history that triggers it and a near-identical one that does not."""

from __future__ import annotations

import threading

import pytest

from kafka_chaos.checkers.measures.liveness import EventCounter, count_events, format_liveness, measure
from kafka_chaos.history.file import HistoryWriter, read_history
from tests.checkers.builder import TimedHistory


def run_with(between_per_s: float, in_fault_per_s: float = 50, writes_between: float | None = None) -> dict:
    """10 s at 100 sends/s and 100 polls/s, then two 5 s kills with 5 s of quiet after each."""
    h = TimedHistory()
    h.ops("send", 0, 10, 100, process=1)
    h.ops("poll", 0, 10, 100, process=2)
    for start in (10, 20):
        h.fault("kill", "start", start, start + 5)
        h.ops("send", start, start + 5, in_fault_per_s / 2, process=1)
        h.ops("poll", start, start + 5, in_fault_per_s / 2, process=2)
        h.ops("send", start + 5, start + 10, writes_between if writes_between is not None else between_per_s / 2, 1)
        h.ops("poll", start + 5, start + 10, between_per_s / 2, process=2)
    return measure(count_events(h.history()))


def test_a_workload_that_keeps_its_rate_has_no_warning():
    live = run_with(between_per_s=200)
    assert live["first_fault_s"] == 10.0
    assert live["ops_per_s"]["before_faults"] == pytest.approx(200, rel=0.02)
    assert live["ops_per_s"]["in_faults"] == pytest.approx(50, rel=0.05)
    assert live["ops_per_s"]["between_faults"] == pytest.approx(200, rel=0.05)
    assert live["writes_per_s"]["before_faults"] == pytest.approx(100, rel=0.02)
    assert live["ratios"]["ops_per_s"]["in_faults"] == pytest.approx(0.25, rel=0.05)
    assert live["seconds"]["in_faults"] == pytest.approx(10, abs=0.1)
    assert live["seconds"]["between_faults"] == pytest.approx(10, abs=0.1)
    assert live["warning"] is None and live["stalled_since_s"] is None


def test_a_workload_that_falls_under_half_between_faults_is_warned_of():
    live = run_with(between_per_s=80)
    assert live["ratios"]["ops_per_s"]["between_faults"] == pytest.approx(0.4, rel=0.05)
    assert live["stalled_since_s"] == pytest.approx(15, abs=0.05)  # the first fault-free stretch after a fault
    assert "stalled" in live["warning"] and "ok operations" in live["warning"] and "15.0 s" in live["warning"]


def test_the_threshold_is_half_of_the_rate_before_faults():
    assert run_with(between_per_s=110)["warning"] is None  # 55 %
    assert run_with(between_per_s=90)["warning"] is not None  # 45 %


def test_writes_that_stop_while_polls_go_on_are_a_stall_too():
    live = run_with(between_per_s=200, writes_between=0)
    assert live["ratios"]["ops_per_s"]["between_faults"] == pytest.approx(0.5, rel=0.05)
    assert live["ratios"]["writes_per_s"]["between_faults"] == 0
    assert "acknowledged writes" in live["warning"]
    assert run_with(between_per_s=200, writes_between=60)["warning"] is None  # 60 % of writes: kept


def test_the_stall_starts_at_the_first_stretch_that_stays_under_half():
    h = TimedHistory()
    h.ops("send", 0, 10, 100)
    h.fault("pause", "resume", 10, 15)
    h.ops("send", 15, 20, 100)  # recovered after the first fault
    h.fault("pause", "resume", 20, 25)
    h.ops("send", 25, 60, 5)  # then stopped for good
    live = measure(count_events(h.history()))
    assert live["stalled_since_s"] == pytest.approx(25, abs=0.05)


def test_the_final_read_is_not_part_of_the_workload_phase():
    h = TimedHistory()
    h.ops("send", 0, 10, 100)
    h.fault("kill", "start", 10, 15)
    h.ops("send", 15, 30, 10)  # stalled
    h.ops("poll", 30, 40, 1000, process=5, phase="final")  # a fast final read must not hide it
    live = measure(count_events(h.history()))
    assert live["workload_end_s"] == pytest.approx(29.9, abs=0.01)  # the workload's last invoke
    assert live["warning"] is not None
    unmarked = [{k: v for k, v in e.items() if k != "phase"} for e in h.history()]
    fooled = measure(count_events(unmarked))  # near miss: without the marker the final read counts
    assert fooled["workload_end_s"] == pytest.approx(40, abs=0.01)
    assert fooled["ratios"]["ops_per_s"]["between_faults"] > 1


def test_the_wind_down_after_the_last_invoke_is_not_counted():
    h = TimedHistory()
    h.ops("send", 0, 10, 100)
    h.fault("kill", "start", 10, 12)
    h.ops("send", 12, 20, 100)
    h._add(20, process=7, type="invoke", f="send", value=None)  # the last invoke: a straggler
    h._add(31, process=7, type="ok", f="send", value=None)  # done 11 s later, during the heal
    live = measure(count_events(h.history()))
    assert live["workload_end_s"] == pytest.approx(20, abs=0.01)
    assert live["ops_per_s"]["between_faults"] == pytest.approx(100, rel=0.02)
    assert live["seconds"]["between_faults"] == pytest.approx(8, abs=0.05)


def test_start_up_before_the_first_ok_operation_is_not_counted():
    h = TimedHistory()
    h.ops("assign", 0, 2, 5)  # clients starting: no send, poll or txn yet
    h.ops("txn", 2, 10, 50)
    h.fault("kill", "start", 10, 15)
    h.ops("txn", 15, 20, 50)
    live = measure(count_events(h.history()))
    assert live["seconds"]["before_faults"] == pytest.approx(4, abs=0.01)  # the second half of 2 s to 10 s
    assert live["ops_per_s"]["before_faults"] == pytest.approx(50, rel=0.02)
    assert live["writes_per_s"]["between_faults"] == pytest.approx(50, rel=0.02)


def test_the_baseline_is_the_second_half_of_the_quiet_start():
    def live(ramp_until: float) -> dict:
        h = TimedHistory()
        h.ops("send", 0, ramp_until, 20)  # a fresh cluster warming up
        h.ops("send", ramp_until, 10, 100)
        h.fault("kill", "start", 10, 15)
        h.ops("send", 15, 25, 100)
        return measure(count_events(h.history()))

    warm = live(ramp_until=5)  # warm-up within the first half: the baseline is the steady rate
    assert warm["ops_per_s"]["before_faults"] == pytest.approx(100, rel=0.02)
    assert warm["ratios"]["ops_per_s"]["between_faults"] == pytest.approx(1, rel=0.03)
    slow = live(ramp_until=7.5)  # near miss: a slow second half lowers the baseline
    assert slow["ops_per_s"]["before_faults"] == pytest.approx(60, rel=0.03)


def test_a_run_without_faults_has_only_a_rate():
    h = TimedHistory()
    h.ops("send", 0, 10, 100)
    live = measure(count_events(h.history()))
    assert live["first_fault_s"] is None and live["warning"] is None
    assert live["ops_per_s"] == {
        "before_faults": pytest.approx(100, rel=0.02),
        "in_faults": None,
        "between_faults": None,
    }
    assert "no fault" in format_liveness(live)


def test_a_failed_fault_opens_no_window():
    h = TimedHistory()
    h.ops("send", 0, 20, 100)
    h._add(10, process="nemesis", type="invoke", f="kill", value={})
    h._add(10.01, process="nemesis", type="fail", f="kill", value={})
    assert measure(count_events(h.history()))["first_fault_s"] is None


def test_the_summary_line_shows_rates_ratios_and_the_warning():
    line = format_liveness(run_with(between_per_s=80))
    assert line.startswith("liveness: ok ops/s 200 before faults, 50 in faults (25%), 80 between faults (40%)")
    assert line.splitlines()[1].startswith("warning: the workload stalled")
    assert len(format_liveness(run_with(between_per_s=80), warning=False).splitlines()) == 1


def test_the_throughput_plot_shows_a_stall_as_zero():
    import pandas as pd

    from kafka_chaos.checkers.report.series import _zero_filled

    seen = pd.DataFrame({"t": [0.0, 0.5, 2.5], "type": ["ok", "ok", "ok"], "per_s": [10.0, 12.0, 8.0]})
    filled = _zero_filled(seen, 0.5, 6)
    assert filled["t"].tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    assert filled["per_s"].tolist() == [10.0, 12.0, 0.0, 0.0, 0.0, 8.0, 0.0]
    assert _zero_filled(seen.iloc[:0], 0.5, 6).empty


def test_counting_as_the_history_is_written_gives_what_a_read_back_gives(tmp_path):
    """A run's summary counts events through the writer's tap, from many client threads at once,
    instead of reading its history back; both must measure the same."""
    counter = EventCounter()
    path = tmp_path / "history.jsonl"
    with HistoryWriter(path, tap=counter.add) as history:

        def client(process: int) -> None:
            for _ in range(300):
                history.write(process, "invoke", "send", [["send", "t/0", 1]])
                history.write(process, "ok", "send", [["send", "t/0", [0, 1]]])

        history.write("nemesis", "invoke", "kill", {"target": "random", "undone_by": "start"})
        threads = [threading.Thread(target=client, args=(p,)) for p in range(8)]
        for t in threads:
            t.start()
        history.write("nemesis", "ok", "kill", {"target": "random", "undone_by": "start", "nodes": ["kafka-2"]})
        for t in threads:
            t.join()
        history.write("nemesis", "invoke", "start", {"target": "random", "heals": ["kill"]})
    live, read = counter.counts(), count_events(read_history(path))
    assert sum(live.ops.values()) == 8 * 300 and live.nemesis  # every ok send, the kill and the open start
    assert live == read and measure(live) == measure(read)
