"""Every node's metadata log decoded for the control plane: DumpLogSegments' output (excerpts of
real runs, each across a quorum election: metadata_dump_<version>.txt) parsed with each batch's
leader epoch, written as control-plane/metadata/<alias>.jsonl; every node in one run of the tool, whose
decoding the scenario evidence's timeline reads too."""

import json
from pathlib import Path

from kafka_chaos.harness.logdump import DumpRequest, decoded
from kafka_chaos.harness.metadata_log import (
    by_node,
    node_log_lines,
    node_logs_request,
    timeline_request,
    write_timeline,
)
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.runs import run as run_mod

HERE = Path(__file__).parent
DUMP_3 = (HERE / "metadata_dump_3.6.2.txt").read_text()  # 3 controllers + 3 brokers, controller 2 killed
DUMP_4 = (HERE / "metadata_dump_4.3.1.txt").read_text()  # 3 combined nodes, kafka-2 (the leader) killed


def test_each_record_carries_its_batchs_leader_epoch():
    records = list(decoded(DUMP_3))
    assert [(r["offset"], r["batch_epoch"]) for r in records] == [(0, 2), (18, 2), (19, 2), (42, 2), (43, 4), (44, 4)]
    partition = records[2]
    assert {k: v for k, v in partition.items() if k != "data"} == {
        "offset": 19,
        "batch_epoch": 2,
        "create_time_ms": 1795709920835,
        "type": "PARTITION_RECORD",
        "version": 0,
    }
    assert (partition["data"]["replicas"], partition["data"]["leader"]) == ([5, 6, 4], 5)


def test_a_control_record_keeps_the_type_the_tool_printed():
    # 3.x prints only the control record's type; 4.x its type and JSON.
    assert next(decoded(DUMP_3)) == {
        "offset": 0,
        "batch_epoch": 2,
        "create_time_ms": 1795709916467,
        "type": "LEADER_CHANGE",
        "version": None,
        "data": None,
    }
    change = [r for r in decoded(DUMP_4) if r["offset"] == 50][0]
    assert (change["type"], change["version"], change["batch_epoch"]) == ("LeaderChange", 0, 3)
    assert change["data"]["leaderId"] == 1 and change["data"]["grantingVoters"] == [{"voterId": 1}, {"voterId": 3}]
    assert [r["batch_epoch"] for r in decoded(DUMP_4)] == [1] * 11 + [3, 3]


def test_a_payload_that_is_not_a_metadata_record_is_kept_raw():
    line = "| offset: 7 CreateTime: 1000 keySize: -1 valueSize: 5 sequence: -1 headerKeys: [] payload: hello"
    assert list(decoded(line)) == [
        {"offset": 7, "batch_epoch": None, "create_time_ms": 1000, "type": None, "version": None, "data": None}
        | {"raw": "hello"}
    ]


def test_a_nodes_lines_are_in_offset_order_on_the_historys_clock():
    lines = node_log_lines(DUMP_4, t0_ms=1795709780000)
    assert [line["offset"] for line in lines] == [*range(10), 49, 50, 56]
    assert list(lines[0]) == ["offset", "batch_epoch", "create_time_ms", "time", "type", "version", "data"]
    assert lines[0]["time"] == 917_000_000 and lines[-1]["time"] == 13_651_000_000
    assert node_log_lines(DUMP_4, None)[0]["time"] is None


def run_dir(tmp_path: Path) -> Path:
    """A finished run's folder: three nodes, kafka-3 wiped and never started again (no log)."""
    for alias, segments in (("kafka-1", 2), ("kafka-2", 1), ("kafka-3", 0)):
        log = tmp_path / "cluster" / alias / "data" / "__cluster_metadata-0"
        log.mkdir(parents=True)
        for i in range(segments):
            (log / f"{i * 100:020d}.log").write_bytes(b"x" * (10 + i))
    (tmp_path / "config.json").write_text(json.dumps({"history_started_unix_ms": 1795709780000}))
    return tmp_path


def as_node(dump: str, alias: str) -> str:
    return dump.replace("/logs/kafka-1/", f"/logs/{alias}/").replace("/logs/controller-1/", f"/logs/{alias}/")


def test_every_nodes_log_is_decoded_in_one_run_of_the_tool_and_split_by_node(tmp_path, monkeypatch):
    path = run_dir(tmp_path)
    request = node_logs_request(path)
    assert request == DumpRequest(
        (
            "kafka-1/data/__cluster_metadata-0/00000000000000000000.log",
            "kafka-1/data/__cluster_metadata-0/00000000000000000100.log",
            "kafka-2/data/__cluster_metadata-0/00000000000000000000.log",
        ),
        ("--cluster-metadata-decoder",),
    )
    assert timeline_request(path).files == request.files[:2]  # the longest log
    output = as_node(DUMP_4, "kafka-1") + as_node(DUMP_3, "kafka-2")
    assert by_node(output) == {"kafka-1": as_node(DUMP_4, "kafka-1"), "kafka-2": as_node(DUMP_3, "kafka-2")}

    asked = []

    def dump_all(version, directory, wanted):
        asked.append(wanted)
        return [output for _ in wanted]

    monkeypatch.setattr(run_mod, "dump_all", dump_all)
    monkeypatch.setattr(
        run_mod, "write_timeline", lambda run_dir, version, out, config: (run_dir / "timeline").write_text(out)
    )
    monkeypatch.setattr(run_mod, "replicas_request", lambda run_dir, config: None)
    run_mod.collect_evidence(path, KafkaVersion(4, 3, 1), print, scenario=True, nodes=True)
    assert asked == [[request]]  # one container, one JVM: the timeline reads the same decoding
    assert (path / "timeline").read_text() == output
    files = RunDir(path)
    assert set(files.metadata_logs()) == {"kafka-1", "kafka-2", "kafka-3"}
    assert files.metadata_log("kafka-3").read_text() == ""
    kafka_2 = [json.loads(line) for line in files.metadata_log("kafka-2").read_text().splitlines()]
    assert [(r["offset"], r["batch_epoch"], r["type"]) for r in kafka_2][-3:] == [
        (42, 2, "NO_OP_RECORD"),
        (43, 4, "LEADER_CHANGE"),
        (44, 4, "NO_OP_RECORD"),
    ]
    assert kafka_2[0]["time"] == (1795709916467 - 1795709780000) * 1_000_000
    assert len(files.metadata_log("kafka-1").read_text().splitlines()) == 13


def test_a_run_whose_logs_could_not_be_decoded_says_so_and_writes_none(tmp_path, monkeypatch):
    path = run_dir(tmp_path)
    monkeypatch.setattr(run_mod, "dump_all", lambda version, directory, wanted: [RuntimeError("exit 1")])
    said = []
    run_mod.collect_evidence(path, KafkaVersion(4, 3, 1), said.append, scenario=False, nodes=True)
    assert said == ["could not read the nodes' metadata logs: RuntimeError: exit 1"]
    assert RunDir(path).metadata_logs() == {}


def test_the_timeline_reads_the_longest_logs_part_of_every_nodes_decoding(tmp_path):
    path = run_dir(tmp_path)
    config = {"history_started_unix_ms": 1795709780000, "workload": {"topic": "__kafka_chaos_ready"}}
    (path / "config.json").write_text(json.dumps(config))
    write_timeline(
        path, KafkaVersion(3, 6, 2), as_node(DUMP_4, "kafka-2") + as_node(DUMP_3, "kafka-1"), RunConfig.load(path)
    )
    timeline = json.loads(RunDir(path).timeline.read_text())
    assert timeline["source"] == "cluster/kafka-1/data/__cluster_metadata-0"
    assert [(e["offset"], e["kind"], e["leader"]) for e in timeline["events"]] == [(19, "partition", 5)]
