"""The host stall of a window, from the probe's wakes (../shared/anomalies.md, amended 2026-12-06)."""

from __future__ import annotations

from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.history.stall import read_wakes, stall_within, wake_line

MS = 1_000_000


def wakes(*ms: int) -> list[int]:
    return [m * MS for m in ms]


def test_no_probe_and_regular_wakes_add_nothing():
    assert stall_within(None, 0, 10_000 * MS) == 0
    assert stall_within(wakes(*range(0, 5000, 100)), 0, 5000 * MS) == 0


def test_an_interval_over_150_ms_adds_its_length_less_100_ms():
    assert stall_within(wakes(0, 100, 1100, 1200), 0, 2000 * MS) == 900 * MS
    # 150 ms is not over 150 ms; 151 ms is
    assert stall_within(wakes(0, 150), 0, 1000 * MS) == 0
    assert stall_within(wakes(0, 151), 0, 1000 * MS) == 51 * MS


def test_only_the_part_inside_the_window_counts():
    ws = wakes(0, 2000)  # one 2 s stall
    assert stall_within(ws, 1000 * MS, 5000 * MS) == 900 * MS
    assert stall_within(ws, 2000 * MS, 5000 * MS) == 0
    assert stall_within(ws, 3000 * MS, 5000 * MS) == 0


def test_the_probe_file_is_read_in_order_and_a_torn_line_skipped(tmp_path):
    run = RunDir(tmp_path)
    assert read_wakes(run) is None
    run.host_stall.parent.mkdir(parents=True)
    run.host_stall.write_text(wake_line(200) + wake_line(100) + '{"time": 3')
    assert read_wakes(run) == [100, 200]
