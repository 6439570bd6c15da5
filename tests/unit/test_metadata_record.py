"""A metadata record's `data` as the writer writes it (history/evidence.py): the decoded JSON
object, or null where the tool printed none; the readers take just that (explore's states read
the object, Spark its JSON text), and the writer refuses any other `data`."""

import json
from pathlib import Path

import pytest

from kafka_chaos.checkers.measures.states import read_records
from kafka_chaos.harness.metadata_log import by_node, node_log_lines
from kafka_chaos.history.evidence import RECORD_SCHEMA, record_data, record_line

DUMP = (Path(__file__).parent / "metadata_dump_4.3.1.txt").read_text()
CONTROL_3X = (
    "Dumping /logs/kafka-1/data/__cluster_metadata-0/00000000000000000000.log\n"
    "baseOffset: 0 lastOffset: 0 count: 1 partitionLeaderEpoch: 1 isControl: true CreateTime: 5\n"
    "| offset: 0 CreateTime: 5 keySize: 4 valueSize: 10 sequence: -1 headerKeys: [] controlType: LEADER_CHANGE(2)\n"
)


def written(output: str, tmp_path: Path) -> Path:
    path = tmp_path / "kafka-1.jsonl"
    lines = node_log_lines(by_node(output)["kafka-1"], 0.0)
    path.write_text("".join(record_line(**line) for line in lines))  # as harness/metadata_log.py writes it
    return path


def test_a_record_as_written_holds_its_data_as_an_object(tmp_path):
    path = written(DUMP, tmp_path)
    on_file = [json.loads(line) for line in path.read_text().splitlines()]
    assert all(isinstance(r["data"], dict) for r in on_file)
    first = next(read_records(path))
    assert first["type"] == "LeaderChange" and first["data"]["leaderId"] == 2


def test_a_record_the_tool_printed_no_data_for_is_written_null_and_read_empty(tmp_path):
    path = written(CONTROL_3X, tmp_path)
    assert json.loads(path.read_text())["data"] is None
    assert next(read_records(path))["data"] == {}


def test_the_writer_refuses_data_that_is_not_an_object():
    with pytest.raises(ValueError):
        record_line(offset=0, type="X", data=json.dumps({"leaderId": 2}))
    assert record_data({"data": '{"leaderId": 2}'}) == {}  # never written: nothing taken from it


def test_spark_reads_the_object_as_its_json_text():
    assert "`data` string" in RECORD_SCHEMA
