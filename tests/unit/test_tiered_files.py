"""A tiered run's files typed on floor 0 (history/tiered.py): log-starts.json and summary.json's
`tiered_reads` as the harness makes them read back the same, and a document not of their shape is
refused whole (the checker then says log-starts.json could not be read)."""

import json

import pytest

from kafka_chaos.checkers.tiered import _read, format_reads
from kafka_chaos.harness import tiered
from kafka_chaos.harness.tiered import ReadSources
from kafka_chaos.history.tiered import LogStarts, TieredReads
from kafka_chaos.workloads.runner import WorkloadSummary


def test_log_starts_as_written_read_back_the_same(tmp_path):
    answer = {"chaos/0": {"log_start": 0, "local_log_start": 9}, "chaos/1": {"log_start": None, "error": {"x": 6}}}
    made = tiered.log_starts(lambda b: answer, None, [1], ["chaos/0", "chaos/1"], tmp_path)
    path = tmp_path / "log-starts.json"
    path.write_text(json.dumps(made.to_json(), indent=2, sort_keys=True) + "\n")  # as runs/run.py writes it
    assert _read(path) == made == LogStarts.from_json(made.to_json())
    assert made.partitions["chaos/1"].replicas["1"].error == {"x": 6}


@pytest.mark.parametrize(
    "bad",
    [
        {"partitions": []},
        {"partitions": {"chaos/0": {"replicas": [1, 2]}}},
        {"partitions": {"chaos/0": {"replicas": {"1": {"log_start": "0"}}}}},
        {"partitions": {"chaos/0": {"replicas": {}, "remote": {"segments": None}}}},
    ],
)
def test_a_document_not_of_log_starts_shape_is_not_read(tmp_path, bad):
    with pytest.raises(ValueError):
        LogStarts.from_json(bad)
    path = tmp_path / "log-starts.json"
    path.write_text(json.dumps(bad))
    assert "log-starts.json is not a listing of log starts" in _read(path)


def _summary(**kw):
    return WorkloadSummary(1, {}, 1.0, 1.0, True, **kw)


def test_tiered_reads_as_the_run_writes_them_in_summary_json():
    sources = ReadSources()
    sources.begin({"chaos/0": 2})
    sources.add({"type": "ok", "f": "poll", "process": 1, "value": [["poll", {"chaos/0": [[1, 5], [2, 6]]}]]})
    reads = sources.measure()
    written = _summary(tiered_reads=reads).to_json()["tiered_reads"]
    assert TieredReads.from_json(written) == reads and (reads.from_remote, reads.from_local) == (1, 1)
    assert (
        format_reads(reads)
        == format_reads(written)
        == ("tiered: the final read got 1 records from remote storage and 1 from local logs")
    )
    assert "tiered_reads" not in _summary().to_json()
    with pytest.raises(ValueError):
        TieredReads.from_json({"from_remote": "1", "from_local": 1})
