"""control-plane/nodes.json typed on floor 0 (history/nodes.py): as the harness writes it, as
older runs wrote it, and a file that is not nodes.json refused whole."""

import json

import pytest

from kafka_chaos.harness.config import ClusterShape
from kafka_chaos.harness.control_plane import describe_nodes
from kafka_chaos.history.nodes import HostStall, NodesFile, Sampling
from kafka_chaos.history.run_dir import RunDir


def test_the_file_as_written_reads_back_the_same(tmp_path):
    written = describe_nodes(ClusterShape(brokers=3).nodes(), {}, "dynamic")
    path = tmp_path / "nodes.json"
    written.write(path)
    later = NodesFile.read(path).adding(sampling=Sampling(9, 5, 10.0, 7), host_stall=HostStall(0.2, 0.15, 8))
    later.write(path)
    back = NodesFile.read(path)
    assert back == later and back.quorum == "dynamic" and back.ids == {"kafka-1": 1, "kafka-2": 2, "kafka-3": 3}
    assert json.loads(path.read_text())["sampling"] == {"ended": 9, "last_heal": 5, "window_s": 10.0, "caught_up": 7}


def test_an_older_runs_file_reads_with_defaults():
    old = NodesFile.from_json({"nodes": {"kafka-1": {"id": 1, "roles": ["broker", "controller"]}}, "voters": [1]})
    assert old.quorum == "static" and old.settings == {} and old.sampling is None and old.host_stall is None


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"nodes": {"kafka-1": {"id": "1"}}},
        {"nodes": {"kafka-1": {"id": 1}}, "voters": "1"},
        {"nodes": {}, "settings": {"broker.session.timeout.ms": "9000"}},
        {"nodes": {}, "sampling": {"ended": None}},
    ],
)
def test_a_file_that_is_not_nodes_json_is_refused_whole(bad):
    with pytest.raises(ValueError):
        NodesFile.from_json(bad)


def test_the_checkers_readers_take_what_the_harness_wrote(tmp_path):
    from kafka_chaos.checkers.measures.states import Nodes

    run = RunDir(tmp_path)
    run.control_plane.mkdir(parents=True)
    describe_nodes(ClusterShape(brokers=2, controllers=1).nodes(), {}).write(run.control_plane_nodes)
    assert Nodes.load(run).ids == {"controller-1": 1, "broker-2": 2, "broker-3": 3}
    run.control_plane_nodes.write_text("[]")
    assert Nodes.load(run).ids == {}
