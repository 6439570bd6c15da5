"""A real run whose nodes' metadata logs could not be decoded (the decoder made to fail, as a
DumpLogSegments that exits non-zero does): the run records it in control-plane/gaps.json, and its
check cannot run the rules that read the logs, so its verdict is unknown with exit code 4, and the
status line says which rules ran and why. No fault: the run is short, and not held after a heal."""

import json
import subprocess

import pytest

from kafka_chaos.checkers.anomalies import CONTROL_NAMES
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.reporter import silent
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.runs import run as runs
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions

pytestmark = [pytest.mark.cluster, pytest.mark.spark]


def test_a_run_whose_metadata_was_not_decoded_is_unknown(tmp_path, monkeypatch, docker_api, assert_nothing_left):
    def fails(version, directory, requests):
        raise subprocess.CalledProcessError(1, ["kafka-dump-log"])

    monkeypatch.setattr(runs, "dump_all", fails)
    opts = WorkloadOptions(time_limit=4, concurrency=4, rate=100, replication_factor=1, min_insync_replicas=1)
    spec = RunSpec(ClusterSpec(DEFAULT_VERSION, nodes=1), opts, seed=1, store=tmp_path, check=True, report=False)
    result = runs.run(spec, silent)
    files = RunDir(result.run_dir)
    why = "metadata not decoded: CalledProcessError: Command '['kafka-dump-log']' returned non-zero exit status 1."
    assert json.loads(files.control_plane_gaps.read_text()) == {"metadata": why}
    assert result.anomalies == {}, result.explain()
    assert result.valid == "unknown" and result.unknown_reason == "control-plane-incomplete", result.explain()
    assert result.exit_code == 4
    skipped = result.control_plane["not_checked"]
    assert "leader-not-in-isr" in skipped and skipped["leader-not-in-isr"] == why, skipped
    assert result.control_plane["rules_checked"] == len(CONTROL_NAMES) - len(skipped) < len(CONTROL_NAMES)
    assert result.control_plane_status.endswith(f"of {len(CONTROL_NAMES)} rules, {why}"), result.control_plane_status
    assert result.verdict().startswith("UNKNOWN: control plane ")
    properties = dict(result.properties())
    assert properties["kafka_chaos.valid"] == "unknown" and properties["kafka_chaos.exit_code"] == "4"
    assert_nothing_left(json.loads(files.config.read_text())["run_id"])
