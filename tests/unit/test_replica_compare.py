"""Replica logs against each other and against what clients saw."""

import json

from kafka_chaos.harness.replica_logs import against_clients, compare, replica_values, write_replicas
from kafka_chaos.history.run_config import RunConfig


def test_compare_finds_offsets_where_replicas_disagree():
    same = compare({"a": {0: 1, 1: 2}, "b": {0: 1, 1: 2, 2: 3}})
    assert same["divergent_count"] == 0 and same["replicas"]["b"] == {"first": 0, "last": 2, "records": 3}
    differ = compare({"a": {0: 1, 1: 2}, "b": {0: 1, 1: 9}})
    assert differ["divergent"] == [{"offset": 1, "values": {"a": 2, "b": 9}}]


def test_replica_values_keeps_integers_and_skips_control_records():
    entries = [{"offset": 0, "payload": "5"}, {"offset": 1, "payload": None}, {"offset": 2, "payload": "x"}]
    assert replica_values(entries) == {0: 5, 2: "x"}


def test_clients_that_saw_what_the_replicas_no_longer_hold(tmp_path):
    events = [
        {"index": 1, "type": "ok", "f": "send", "process": 0, "value": [["send", "t/0", [0, 10]]]},
        {
            "index": 3,
            "type": "ok",
            "f": "poll",
            "process": 1,
            "value": [["poll", {"t/0": [[0, 10], [1, 11], [2, 12]]}]],
        },
        {"index": 5, "type": "info", "f": "poll", "process": 2, "value": [["poll", {"t/0": [[1, 99]]}]]},
    ]
    history = tmp_path / "history.jsonl"
    history.write_text("".join(json.dumps(e) + "\n" for e in events) + '{"index": 6, "ty')  # truncated tail
    out = against_clients(history, {"t/0": {"a": {0: 10, 1: 21}, "b": {0: 10, 1: 21}}})["t/0"]
    assert (out["rewritten"], out["gone"]) == (1, 1)
    assert out["examples"][0] == {"offset": 1, "client_saw": 11, "op": 3, "replicas_hold": {"a": 21, "b": 21}}
    # Near miss: replicas that hold what clients saw.
    clean = against_clients(history, {"t/0": {"a": {0: 10, 1: 11, 2: 12}}})["t/0"]
    assert (clean["rewritten"], clean["gone"]) == (0, 0)


def _tool_output(node: str, partition: int, values: list[int]) -> str:
    """DumpLogSegments --print-data-log as it prints one node's segment (the mounted cluster folder)."""
    lines = [f"Dumping /logs/{node}/data/chaos-{partition}/00000000000000000000.log", "Log starting offset: 0"]
    lines.append(f"baseOffset: 0 lastOffset: {len(values) - 1} count: {len(values)} baseSequence: -1")
    lines += [
        f"| offset: {i} CreateTime: 1700000000000 keySize: -1 valueSize: 2 payload: {v}" for i, v in enumerate(values)
    ]
    return "\n".join(lines) + "\n"


def test_one_dump_of_every_node_splits_into_nodes_and_partitions(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"workload": {"topic": "chaos"}}))
    output = (
        _tool_output("broker-1", 0, [10, 11]) + _tool_output("broker-2", 0, [10, 12]) + _tool_output("broker-2", 1, [7])
    )
    keys = json.loads(write_replicas(tmp_path, output, RunConfig.load(tmp_path)).read_text())["keys"]
    assert sorted(keys) == ["chaos/0", "chaos/1"]
    assert keys["chaos/0"]["divergent"] == [{"offset": 1, "values": {"broker-1": 11, "broker-2": 12}}]
    assert keys["chaos/1"]["replicas"] == {"broker-2": {"first": 0, "last": 0, "records": 1}}
    # Near miss: the same values on both nodes.
    same = _tool_output("broker-1", 0, [10, 11]) + _tool_output("broker-2", 0, [10, 11])
    assert (
        json.loads(write_replicas(tmp_path, same, RunConfig.load(tmp_path)).read_text())["keys"]["chaos/0"][
            "divergent_count"
        ]
        == 0
    )
