"""Control-plane evidence a run expected and could not collect whole is recorded in
control-plane/gaps.json (harness/evidence_gaps.py), never only logged: a sampler that did not start
or died, the nodes' metadata logs not decoded (all, or one node's). And the samplers' hold: after
a fault, sampling goes on until the window after the last heal, not after a block that raised, not
without a fault. On a stand-in cluster of host folders (tests/unit/test_control_plane_sampler.py)
and a faked decoder, without Docker."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from kafka_chaos.harness import control_plane
from kafka_chaos.harness.control_plane import ControlPlaneSampler
from kafka_chaos.harness.evidence_gaps import GapNotRecorded, record_gap, undecoded_logs
from kafka_chaos.harness.quorum_state import METADATA_DIR
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.history.events import FAIL, NEMESIS, OK
from kafka_chaos.history.evidence import read_gaps
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.history.run_dir import GAP_KINDS, RunDir
from kafka_chaos.runs import run as runs
from tests.unit.test_control_plane_sampler import ANSWER, Admin, Cluster


@pytest.fixture
def run(tmp_path: Path) -> RunDir:
    r = RunDir(tmp_path / "run")
    r.control_plane.mkdir(parents=True)
    return r


def test_gaps_are_one_line_per_kind_and_absent_when_none(run):
    assert read_gaps(run) == {} and not run.control_plane_gaps.exists()
    record_gap(run, "views", "the view sampler exited -9\nbefore the run's end")
    record_gap(run, "views", "the view sampler exited -9 before the run's end")  # said once
    record_gap(run, "views", "it did not stop")
    record_gap(run, "metadata", "metadata not decoded: RuntimeError: boom")
    assert json.loads(run.control_plane_gaps.read_text()) == {
        "metadata": "metadata not decoded: RuntimeError: boom",
        "views": "the view sampler exited -9 before the run's end; it did not stop",
    }
    with pytest.raises(ValueError, match="unknown evidence kind"):
        record_gap(run, "quorum", "?")


@pytest.mark.parametrize("text", ['{"views": "the view sampler exi', "[]", '"views"'], ids=["cut", "list", "string"])
def test_a_gaps_file_that_cannot_be_read_is_a_gap_of_every_kind(run, text):
    """anomalies.md, "Control plane" (amended 2026-12-06): a sampler's gap file that cannot be read
    counts as a gap over the whole run. Near miss: no gaps file at all is no gap."""
    assert read_gaps(run) == {}
    run.control_plane_gaps.write_text(text)
    gaps = read_gaps(run)
    assert set(gaps) == set(GAP_KINDS), gaps
    assert all(why.startswith("gaps.json could not be read (") for why in gaps.values()), gaps
    record_gap(run, "views", "it did not stop")  # a later gap keeps what was lost before it
    again = read_gaps(run)
    assert set(again) == set(GAP_KINDS) and again["views"] == f"{gaps['views']}; it did not stop"


def jam_gaps_file(run: RunDir) -> None:
    """gaps.json cannot be written (its temporary file's name is taken by a folder: root too fails)."""
    run.control_plane_gaps.with_suffix(".json.tmp").mkdir()


def test_a_gap_that_cannot_be_recorded_is_raised_not_dropped(run):
    jam_gaps_file(run)
    with pytest.raises(GapNotRecorded, match=r"views: the view sampler exited -9\).*IsADirectoryError"):
        record_gap(run, "views", "the view sampler exited -9")
    assert read_gaps(run) == {}  # nothing says so in the run directory: only the raise does


def sampled(run: RunDir, cluster, events, window_s: float = 30.0, inside=None) -> float:
    """Seconds the sampling block took: `events` (process, type, f) written into the history."""
    sampler = ControlPlaneSampler(cluster, run, view_period_s=0.05, quorum_period_s=0.05, window_s=window_s)
    started = time.monotonic()
    with HistoryWriter(run.history, tap=sampler.saw) as history, sampler.running(history):
        for process, type, f in events:
            history.write(process, type, f, {"nodes": ["kafka-1"]})
        if inside is not None:
            inside(sampler)
    return time.monotonic() - started


def test_without_a_fault_sampling_is_not_held(run, tmp_path):
    took = sampled(run, Cluster(tmp_path / "c", Admin()), [(0, OK, "send"), (NEMESIS, FAIL, "kill")])
    assert took < 30  # a nemesis operation that failed did nothing: no window to hold
    sampling = json.loads(run.control_plane_nodes.read_text())["sampling"]
    assert sampling["last_heal"] is None and not run.control_plane_gaps.exists()


def test_a_block_that_raised_stops_sampling_at_once(run, tmp_path):
    def interrupted(_):
        raise KeyboardInterrupt

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sampled(run, Cluster(tmp_path / "c", Admin()), [(NEMESIS, OK, "kill")], inside=interrupted)
    assert time.monotonic() - started < 30
    sampling = json.loads(run.control_plane_nodes.read_text())["sampling"]
    assert sampling["ended"] < sampling["last_heal"] + 30e9  # what the checker's stuck rule reads as cut short


def test_the_hold_says_so_and_ends_with_an_answer_from_after_the_window(run, tmp_path):
    said: list[str] = []
    sampler = ControlPlaneSampler(Cluster(tmp_path / "c", Admin()), run, said.append, 0.05, 0.2, window_s=0.5)
    with HistoryWriter(run.history, tap=sampler.saw) as history, sampler.running(history):
        heal = history.write(NEMESIS, OK, "start", {"nodes": ["kafka-1"]})
    assert [m for m in said if m.startswith("control plane: sampling 0.5 s after the last heal")], said
    answered = [json.loads(line)["time"] for line in run.quorum_replication.read_text().splitlines()]
    assert answered[-1] >= heal["time"] + 500_000_000  # the stuck rule reads up to the last answer


def test_a_view_sampler_that_died_is_a_gap(run, tmp_path):
    def kill_views(sampler):
        os.kill(sampler._views.pid, signal.SIGKILL)
        sampler._views.wait()

    sampled(run, Cluster(tmp_path / "c", Admin()), [(0, OK, "send")], inside=kill_views)
    assert read_gaps(run)["views"].startswith("the view sampler exited -9 before the run's end")


def test_a_view_sampler_that_died_where_its_gap_cannot_be_recorded_fails_the_stop(run, tmp_path):
    """Both samplers stopped first (nodes.json says until when), then the gap raised. Near miss:
    the same death recorded (test_a_view_sampler_that_died_is_a_gap) raises nothing."""

    def kill_views(sampler):
        jam_gaps_file(run)
        os.kill(sampler._views.pid, signal.SIGKILL)
        sampler._views.wait()

    with pytest.raises(GapNotRecorded, match="the view sampler exited -9 before the run's end"):
        sampled(run, Cluster(tmp_path / "c", Admin()), [(0, OK, "send")], inside=kill_views)
    assert json.loads(run.control_plane_nodes.read_text())["sampling"]["ended"] > 0


def test_a_quorum_sampler_that_crashed_is_a_gap(run, tmp_path):
    class Broken(Admin):
        def describe_metadata_quorum(self):
            answer = json.loads(json.dumps(ANSWER))
            answer["topics"][0]["partitions"][0]["high_watermark"] = object()  # not JSON: the sampler's own bug
            return answer

    sampled(run, Cluster(tmp_path / "c", Broken()), [(0, OK, "send")], inside=lambda _: time.sleep(0.3))
    assert read_gaps(run)["replication"].startswith("the DescribeQuorum sampler stopped at ")
    assert "TypeError" in read_gaps(run)["replication"] and "views" not in read_gaps(run)


def test_sampling_that_did_not_start_is_a_gap_of_both(run, tmp_path):
    cluster = Cluster(tmp_path / "c", Admin())
    cluster.quorum = object()  # nodes.json cannot be written
    sampled(run, cluster, [(0, OK, "send")])
    gaps = read_gaps(run)
    assert set(gaps) == {"views", "replication"} and gaps["views"].startswith("control-plane sampling did not start")


def node_logs(run: RunDir, sizes: dict[str, int]) -> None:
    """Each node's metadata log folder with one segment of `size` bytes."""
    for alias, size in sizes.items():
        folder = run.cluster / alias / "data" / METADATA_DIR
        folder.mkdir(parents=True)
        (folder / "00000000000000000000.log").write_bytes(b"x" * size)


def test_a_node_whose_log_decoded_to_nothing_is_found(run):
    node_logs(run, {"kafka-1": 100, "kafka-2": 100, "kafka-3": 0})  # kafka-3: wiped, an empty segment
    run.metadata_log("kafka-1").parent.mkdir(parents=True)
    run.metadata_log("kafka-1").write_text('{"offset":0}\n')
    run.metadata_log("kafka-2").write_text("")
    run.metadata_log("kafka-3").write_text("")
    assert undecoded_logs(run) == ["kafka-2"]


def test_a_run_whose_metadata_decode_fails_records_it(run, monkeypatch):
    node_logs(run, {"kafka-1": 100})

    def fails(version, directory, requests):
        raise RuntimeError("DumpLogSegments exited 1")

    monkeypatch.setattr(runs, "dump_all", fails)
    said: list[str] = []
    runs.collect_evidence(run.path, KafkaVersion.parse("4.3.1"), said.append, scenario=False, nodes=True)
    assert read_gaps(run) == {"metadata": "metadata not decoded: RuntimeError: DumpLogSegments exited 1"}
    assert said == ["could not decode the nodes' logs: RuntimeError: DumpLogSegments exited 1"]


def test_a_node_the_decoder_skipped_is_recorded(run, monkeypatch):
    node_logs(run, {"kafka-1": 100, "kafka-2": 100})
    run.config.write_text(json.dumps({"history_started_unix_ms": 0}))
    one = "Dumping /logs/kafka-1/data/__cluster_metadata-0/00000000000000000000.log\n"
    one += "| offset: 0 CreateTime: 5 keySize: -1 valueSize: 10 sequence: -1 headerKeys: [] payload: {}\n"
    monkeypatch.setattr(runs, "dump_all", lambda version, directory, requests: [one for _ in requests])
    runs.collect_evidence(run.path, KafkaVersion.parse("4.3.1"), lambda _m: None, scenario=False, nodes=True)
    assert read_gaps(run) == {"metadata": "metadata not decoded for kafka-2: no record came out"}


def test_a_complete_decode_leaves_no_gaps_file(run, monkeypatch):
    node_logs(run, {"kafka-1": 100})
    run.config.write_text(json.dumps({"history_started_unix_ms": 0}))
    one = "Dumping /logs/kafka-1/data/__cluster_metadata-0/00000000000000000000.log\n"
    one += "| offset: 0 CreateTime: 5 keySize: -1 valueSize: 10 sequence: -1 headerKeys: [] payload: {}\n"
    monkeypatch.setattr(runs, "dump_all", lambda version, directory, requests: [one for _ in requests])
    runs.collect_evidence(run.path, KafkaVersion.parse("4.3.1"), lambda _m: None, scenario=False, nodes=True)
    assert not run.control_plane_gaps.exists()


def test_the_last_time_of_a_jsonl_file(tmp_path):
    path = tmp_path / "x.jsonl"
    assert control_plane._last_time(path) is None
    path.write_text('{"time":1}\n{"time":2}\n{"time":3')  # a truncated last line
    assert control_plane._last_time(path) == 2
