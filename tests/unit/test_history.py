import json
import time

import pytest

from kafka_chaos.history.file import FLUSH_S, HistoryFormatError, HistoryWriter, ReadReport, read_history


def write_example(path):
    with HistoryWriter(path) as h:
        h.invoke(0, "send", [["send", "t/0", 1]])
        h.write(0, "ok", "send", [["send", "t/0", [0, 1]]])
        h.invoke(1, "poll", [["poll"]])
        h.write(1, "ok", "poll", [["poll", {"t/0": [[0, 1]]}]])
        h.invoke("nemesis", "kill", {"nodes": ["kafka-2"]})
        h.write(1, "info", "poll", [["poll"]], error="KafkaTimeoutError")


def test_events_have_consecutive_indices_and_increasing_times(tmp_path):
    write_example(tmp_path / "h.jsonl")
    events = list(read_history(tmp_path / "h.jsonl"))
    assert [e["index"] for e in events] == list(range(6))
    assert all(a["time"] <= b["time"] for a, b in zip(events, events[1:], strict=False))
    assert events[1] == {**events[1], "process": 0, "type": "ok", "f": "send", "value": [["send", "t/0", [0, 1]]]}
    assert events[4]["process"] == "nemesis"
    assert events[5]["error"] == "KafkaTimeoutError"
    assert "error" not in events[0]


def test_each_event_is_on_disk_within_the_flush_interval(tmp_path):
    # No close needed: a run killed outright keeps all but its last FLUSH_S, a valid prefix (a
    # suffix lost is the run dying that much earlier; its open operations count as info).
    path = tmp_path / "h.jsonl"
    h = HistoryWriter(path)
    h.invoke(0, "poll", [["poll"]])
    deadline = time.monotonic() + 50 * FLUSH_S
    while not path.read_text() and time.monotonic() < deadline:
        time.sleep(FLUSH_S / 4)
    assert len(path.read_text().splitlines()) == 1
    h.close()


def test_round_trip_through_reader_and_writer(tmp_path):
    write_example(tmp_path / "a.jsonl")
    original = list(read_history(tmp_path / "a.jsonl"))
    with HistoryWriter(tmp_path / "b.jsonl") as h:
        for e in original:
            h.write(e["process"], e["type"], e["f"], e["value"], e.get("error"))
    copy = list(read_history(tmp_path / "b.jsonl"))
    strip = lambda events: [{k: v for k, v in e.items() if k != "time"} for e in events]  # noqa: E731
    assert strip(copy) == strip(original)


def test_truncated_last_line_is_dropped_with_a_warning(tmp_path):
    path = tmp_path / "h.jsonl"
    write_example(path)
    text = path.read_text()
    path.write_text(text + '{"index":6,"time":1,"proc')
    report = ReadReport()
    events = list(read_history(path, report))
    assert len(events) == 6
    assert report.warnings == ["line 7: truncated last line ignored"]


def test_complete_last_line_without_newline_is_kept(tmp_path):
    path = tmp_path / "h.jsonl"
    write_example(path)
    path.write_text(path.read_text().rstrip("\n"))
    report = ReadReport()
    assert len(list(read_history(path, report))) == 6 and report.warnings == []


def test_garbage_in_the_middle_is_an_error(tmp_path):
    path = tmp_path / "h.jsonl"
    write_example(path)
    lines = path.read_text().splitlines()
    lines.insert(2, "not json")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(HistoryFormatError, match="line 3: not JSON"):
        list(read_history(path))


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ([1, 2], "must be a JSON object"),
        ({"index": 0, "time": 0, "process": 0, "f": "send"}, "missing field"),
        ({"index": 0, "time": 0, "process": 0, "type": "maybe", "f": "send"}, "unknown type"),
    ],
)
def test_events_must_have_the_contract_fields(tmp_path, event, message):
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(event) + "\n")
    with pytest.raises(HistoryFormatError, match=message):
        list(read_history(path))


def test_writer_refuses_unknown_types(tmp_path):
    with HistoryWriter(tmp_path / "h.jsonl") as h, pytest.raises(ValueError):
        h.write(0, "done", "send", [])


def test_a_closed_writer_leaves_the_columnar_copy_the_checker_reads(tmp_path):
    import pyarrow.parquet as pq

    from kafka_chaos.history import columns

    path = tmp_path / "history.jsonl"
    with HistoryWriter(path) as w:
        w.invoke(0, "send", [["send", "t/0", 7]])
        w.write(0, "ok", "send", [["send", "t/0", [0, 7]]])
        w.invoke(1, "poll", [["poll"]])  # never completed: info
    assert columns.current(path) == tmp_path / "history.parquet"
    rows = pq.read_table(tmp_path / "history.parquet").to_pylist()
    got = sorted((r["kind"], r["op"], r["type"], r["key"], r["offset"], r["value"]) for r in rows)
    ops = [("op", 1, "ok", None, None, None), ("op", 2, "info", None, None, None)]
    assert got == [*ops, ("send", 1, "ok", "t/0", 0, 7)]
    assert [r["error"] for r in rows if r["op"] == 2] == ["no completion"]
    bare = tmp_path / "bare.jsonl"
    with HistoryWriter(bare, columns=False) as w:
        w.invoke(0, "poll", [["poll"]])
    assert not (tmp_path / "bare.parquet").exists()
