"""The control-plane samplers: each node's quorum-state read into quorum-views.jsonl (every period
and right after each nemesis completion), DescribeQuorum into quorum-replication.jsonl, and
nodes.json; on a stand-in cluster of host folders, without Docker."""

import json
import os
import time
from pathlib import Path

import pytest
from kafka.errors import RequestTimedOutError

from kafka_chaos.harness.config import ClusterShape
from kafka_chaos.harness.control_plane import ControlPlaneSampler, describe_nodes, replication
from kafka_chaos.harness.quorum_state import leader_claims, parse_quorum_state, read_view
from kafka_chaos.history.events import INFO, NEMESIS, OK
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.history.kraft import caught_up
from kafka_chaos.history.run_dir import RunDir

#: A 4.3.1 node's quorum-state, as Kafka wrote it during a run (data_version 0, static voters).
QUORUM_STATE = (
    '{"clusterId":"","leaderId":2,"leaderEpoch":3,"votedId":2,"appliedOffset":0,'
    '"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}'
)
#: kafka-python 3.0.12's describe_metadata_quorum() on a 3-node 4.3.1 cluster, trimmed to one
#: voter and one observer.
ANSWER = {
    "topics": [
        {
            "topic_name": "__cluster_metadata",
            "partitions": [
                {
                    "partition_index": 0,
                    "leader_id": 1,
                    "leader_epoch": 5,
                    "high_watermark": 812,
                    "current_voters": [
                        {
                            "replica_id": 1,
                            "replica_directory_id": "AAAAAAAAAAAAAAAAAAAAAA",
                            "log_end_offset": 812,
                            "last_fetch_timestamp": -1,
                            "last_caught_up_timestamp": 1764170000123,
                        }
                    ],
                    "observers": [
                        {
                            "replica_id": 4,
                            "replica_directory_id": "AAAAAAAAAAAAAAAAAAAAAA",
                            "log_end_offset": 800,
                            "last_fetch_timestamp": 1764170000100,
                            "last_caught_up_timestamp": 1764170000050,
                        }
                    ],
                    "error": None,
                }
            ],
        }
    ],
    "nodes": [],
}


def test_a_quorum_state_file_gives_the_leader_epoch_and_vote_the_node_holds(tmp_path):
    assert parse_quorum_state(QUORUM_STATE) == {"leader_id": 2, "leader_epoch": 3, "voted_id": 2}
    # A node that knows no leader and has not voted: Kafka's defaults, -1.
    assert parse_quorum_state('{"leaderEpoch":7,"data_version":1}') == {
        "leader_id": -1,
        "leader_epoch": 7,
        "voted_id": -1,
    }
    path = tmp_path / "quorum-state"
    assert read_view(path) == {
        "leader_id": None,
        "leader_epoch": None,
        "voted_id": None,
        "error": "no quorum-state file",
        "mtime_ns": None,
    }
    path.write_text('{"leaderId": 1, "leaderE')  # not what Kafka writes (it renames a whole file in place)
    view = read_view(path)
    assert view["leader_id"] is None and view["error"].startswith("bad quorum-state")
    path.write_text("[1, 2]")
    assert read_view(path)["error"] == "bad quorum-state: not a JSON object"
    path.write_text(QUORUM_STATE)
    os.utime(path, ns=(1_700_000_000_123_456_789, 1_700_000_000_123_456_789))
    assert read_view(path) == {
        "leader_id": 2,
        "leader_epoch": 3,
        "voted_id": 2,
        "error": None,
        "mtime_ns": 1_700_000_000_123_456_789,
    }


def test_nodes_json_names_each_node_the_voters_and_the_settings_in_effect():
    dedicated = describe_nodes(
        ClusterShape(brokers=2, controllers=3).nodes(), {"broker.session.timeout.ms": "4000"}
    ).to_json()
    assert dedicated["nodes"] == {
        "controller-1": {"id": 1, "roles": ["controller"]},
        "controller-2": {"id": 2, "roles": ["controller"]},
        "controller-3": {"id": 3, "roles": ["controller"]},
        "broker-4": {"id": 4, "roles": ["broker"]},
        "broker-5": {"id": 5, "roles": ["broker"]},
    }
    assert dedicated["voters"] == [1, 2, 3]
    assert dedicated["settings"] == {
        "controller.quorum.fetch.timeout.ms": 2000,
        "broker.session.timeout.ms": 4000,
        "replica.lag.time.max.ms": 30000,
        "controller.quorum.election.timeout.ms": 1000,
        "broker.heartbeat.interval.ms": 2000,
    }
    combined = describe_nodes(ClusterShape(brokers=3).nodes(), {}).to_json()
    assert combined["nodes"]["kafka-2"] == {"id": 2, "roles": ["broker", "controller"]}
    assert combined["voters"] == [1, 2, 3]


def test_a_describe_quorum_answer_becomes_one_replication_line():
    assert replication(ANSWER) == {
        "leader_id": 1,
        "leader_epoch": 5,
        "high_watermark": 812,
        "voters": [{"id": 1, "log_end_offset": 812, "last_fetch_unix_ms": -1, "last_caught_up_unix_ms": 1764170000123}],
        "observers": [
            {
                "id": 4,
                "log_end_offset": 800,
                "last_fetch_unix_ms": 1764170000100,
                "last_caught_up_unix_ms": 1764170000050,
            }
        ],
        "error": None,
    }
    failed = json.loads(json.dumps(ANSWER))
    failed["topics"][0]["partitions"][0]["error"] = "[Error 6] NotLeaderOrFollowerError: "
    assert replication(failed) == {"error": "[Error 6] NotLeaderOrFollowerError: "}


class Node:
    def __init__(self, spec, root: Path):
        self.spec, self.alias, self.node_id = spec, spec.alias, spec.node_id
        self.data_dir = root / spec.alias / "data"


class Admin:
    """describe_metadata_quorum() as kafka-python answers it, or raising as it does on a faulted cluster."""

    def __init__(self, error: Exception | None = None):
        self.error, self.closed = error, False

    def describe_metadata_quorum(self):
        if self.error is not None:
            raise self.error
        return ANSWER

    def close(self):
        self.closed = True


class Cluster:
    def __init__(self, root: Path, admin: Admin):
        self.nodes = [Node(spec, root) for spec in ClusterShape(brokers=3).nodes()]
        self.config = {"controller.quorum.fetch.timeout.ms": "1000"}
        self.quorum = "static"
        self.admins = [admin]

    def admin(self, **kwargs):
        return self.admins[-1]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_views_are_sampled_every_period_and_after_each_nemesis_completion(tmp_path):
    run = RunDir(tmp_path / "run")
    run.path.mkdir()
    admin = Admin()
    cluster = Cluster(tmp_path / "cluster", admin)
    for node in cluster.nodes[:2]:  # kafka-3 has no quorum-state yet (just wiped)
        (node.data_dir / "__cluster_metadata-0").mkdir(parents=True)
        (node.data_dir / "__cluster_metadata-0" / "quorum-state").write_text(QUORUM_STATE)
    # A short window after the last nemesis completion: sampling goes on that long after it.
    sampler = ControlPlaneSampler(cluster, run, view_period_s=0.05, quorum_period_s=0.1, window_s=1.0)
    with HistoryWriter(run.history, tap=sampler.saw) as history, sampler.running(history):
        deadline = time.monotonic() + 10  # the views' process starting on a loaded machine
        while not (run.quorum_views.is_file() and run.quorum_views.read_text()) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        history.invoke(NEMESIS, "kill", {"target": "kafka-1"})
        killed = history.write(NEMESIS, OK, "kill", {"nodes": ["kafka-1"]})
        history.invoke(0, "send", [])
        rewritten = history.now()  # kafka-2 writes its state again (a new election state, or a restart)
        (cluster.nodes[1].data_dir / "__cluster_metadata-0" / "quorum-state").write_text(QUORUM_STATE)
        broke = history.write(NEMESIS, INFO, "partition", {"nodes": ["kafka-2"]}, "half way")
        time.sleep(0.3)
    closed_at = history.now()
    assert admin.closed
    sampled = run.quorum_views.read_text()
    time.sleep(0.2)
    assert run.quorum_views.read_text() == sampled  # the samplers stopped with the history

    views = lines(run.quorum_views)
    assert {v["node"] for v in views} == {"kafka-1", "kafka-2", "kafka-3"}
    first = next(v for v in views if v["node"] == "kafka-1")
    assert first == {
        "time": first["time"],
        "node": "kafka-1",
        "node_id": 1,
        "leader_id": 2,
        "leader_epoch": 3,
        "voted_id": 2,
        "after": None,
        "error": None,
        "written": first["written"],
    }
    assert first["written"] < first["time"]  # written before the history began, read since
    # when the file was last written, on the history's clock: what tells a dead process's view
    written = [v["written"] for v in views if v["node"] == "kafka-2" and v["time"] > rewritten + 50_000_000]
    assert written and all(abs(w - rewritten) < 50_000_000 for w in written), (rewritten, written)
    missing = next(v for v in views if v["node"] == "kafka-3")
    assert (missing["leader_id"], missing["error"], missing["written"]) == (None, "no quorum-state file", None)
    for completion in (killed, broke):  # one sample per node right after each completion
        after = [v for v in views if v["after"] == completion["index"]]
        assert sorted(v["node"] for v in after) == ["kafka-1", "kafka-2", "kafka-3"]
        assert all(0 < v["time"] - completion["time"] < 500_000_000 for v in after)
    periodic = sorted(v["time"] for v in views if v["node"] == "kafka-1" and v["after"] is None)
    assert len(periodic) >= 8 and max(b - a for a, b in zip(periodic, periodic[1:], strict=False)) < 500_000_000
    assert closed_at - periodic[-1] < 500_000_000  # the last one as the history closed
    held = broke["time"] + 1_000_000_000  # the window after the last nemesis completion
    sampling = json.loads(run.control_plane_nodes.read_text())["sampling"]
    assert (sampling["last_heal"], sampling["window_s"]) == (broke["time"], 1.0) and sampling["ended"] >= held
    assert periodic[-1] >= held  # the views went on after the history's last event, through the window
    assert not run.control_plane_gaps.exists()  # nothing was missed

    replicated = lines(run.quorum_replication)
    assert len(replicated) >= 4 and all(r["error"] is None and r["high_watermark"] == 812 for r in replicated)
    assert json.loads(run.control_plane_nodes.read_text())["settings"]["controller.quorum.fetch.timeout.ms"] == 1000


def test_a_quorum_that_cannot_be_described_is_a_line_with_the_error(tmp_path):
    run = RunDir(tmp_path / "run")
    run.path.mkdir()
    cluster = Cluster(tmp_path / "cluster", Admin(RequestTimedOutError("Request timed out after 1999 ms")))
    sampler = ControlPlaneSampler(cluster, run, view_period_s=0.05, quorum_period_s=0.05)
    with HistoryWriter(run.history, tap=sampler.saw) as history, sampler.running(history):
        time.sleep(0.2)
    replicated = lines(run.quorum_replication)
    assert replicated and all(set(r) == {"time", "error"} for r in replicated)
    assert (
        replicated[0]["error"]
        == "RequestTimedOutError: [Error 7] RequestTimedOutError: Request timed out after 1999 ms"
    )
    assert all(v["error"] == "no quorum-state file" for v in lines(run.quorum_views))


class Controller:
    """A controller as leader_claims sees it: its id, its data folder, and whether it runs."""

    def __init__(self, root: Path, node_id: int, view: dict | None, state: str = "running") -> None:
        self.node_id, self.data_dir, self._state = node_id, root / f"c{node_id}", state
        if view is not None:
            (self.data_dir / "__cluster_metadata-0").mkdir(parents=True)
            (self.data_dir / "__cluster_metadata-0" / "quorum-state").write_text(json.dumps(view))

    def state(self) -> str:
        return self._state


def test_the_newest_running_leader_claim_comes_first(tmp_path):
    """A split quorum (KAFKA-15489): node 1, cut off, still holds itself leader of epoch 1 while 2
    leads epoch 3; node 3 follows 2; node 4 was killed holding epoch 5, node 5 has no file yet."""
    nodes = [
        Controller(tmp_path, 1, {"leaderId": 1, "leaderEpoch": 1, "votedId": 1}),
        Controller(tmp_path, 2, {"leaderId": 2, "leaderEpoch": 3, "votedId": 2}),
        Controller(tmp_path, 3, {"leaderId": 2, "leaderEpoch": 3, "votedId": -1}),
        Controller(tmp_path, 4, {"leaderId": 4, "leaderEpoch": 5, "votedId": 4}, state="exited"),
        Controller(tmp_path, 5, None),
    ]
    assert leader_claims(nodes) == [(3, 2), (1, 1)]
    assert leader_claims(nodes[2:]) == []  # mid-election, or only followers running


def quorum_answer(behind: dict[int, int]) -> dict:
    """DescribeQuorum's answer naming brokers 1 to 3 as voters, each at the high watermark 812
    unless `behind` gives its log end offset."""
    answer = json.loads(json.dumps(ANSWER))
    part = answer["topics"][0]["partitions"][0]
    voter = part["current_voters"][0]
    part["current_voters"] = [{**voter, "replica_id": i, "log_end_offset": behind.get(i, 812)} for i in (1, 2, 3)]
    part["observers"] = []
    return answer


class StillAdmin(Admin):
    def __init__(self, answer: dict):
        super().__init__()
        self.answer = answer

    def describe_metadata_quorum(self):
        return self.answer


@pytest.mark.parametrize("behind", [{}, {3: 800}], ids=["every-broker-fetching", "one-stays-behind"])
def test_sampling_stops_once_every_broker_is_seen_fetching_after_the_last_heal(tmp_path, behind):
    """The window after the last heal (2 s here) is held only while some broker has not been seen
    fetching since: at the high watermark, or its log end moved (history/kraft.py caught_up). Near
    miss: broker 3 stays at 800 behind 812, and sampling goes on to the window's end."""
    run = RunDir(tmp_path / "run")
    run.path.mkdir()
    cluster = Cluster(tmp_path / "cluster", StillAdmin(quorum_answer(behind)))
    sampler = ControlPlaneSampler(cluster, run, view_period_s=0.05, quorum_period_s=0.05, window_s=2.0)
    with HistoryWriter(run.history, tap=sampler.saw) as history, sampler.running(history):
        history.invoke(NEMESIS, "start", {"target": "kafka-3"})
        healed = history.write(NEMESIS, OK, "start", {"nodes": ["kafka-3"]})
    sampling = json.loads(run.control_plane_nodes.read_text())["sampling"]
    assert sampling["last_heal"] == healed["time"]
    if behind:
        assert sampling["caught_up"] is None and sampling["ended"] >= healed["time"] + 2_000_000_000
    else:
        assert healed["time"] <= sampling["caught_up"] <= sampling["ended"] < healed["time"] + 1_500_000_000


def test_a_broker_is_caught_up_once_at_the_high_watermark_or_fetching():
    assert caught_up([(800, 812), (812, 815)])  # reached the high watermark
    assert caught_up([(800, 812), (805, 815)])  # fetched, though still behind
    assert not caught_up([(800, 812), (800, 815), (800, 820)])  # stays, the quorum moves on
    assert not caught_up([(None, 812), (800, None)])  # rows that say nothing
    assert not caught_up([])
