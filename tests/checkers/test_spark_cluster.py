"""The checker beyond one machine, for real: a Spark standalone master and two workers started
from the `pyspark` package's own classes on 127.0.0.1, `check` and `trend` run on it through the
command line, with the history and the store given as file:// URIs (what a cluster's executors
read), and their results compared with local mode's."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_chaos.frontends.cli import main
from tests.checkers import histories as H
from tests.checkers.standalone import cluster
from tests.checkers.test_trend import make_run
from tests.integration.processes import ONE_NODE

# One standalone cluster (a module fixture) serves the module: its tests share an xdist worker.
# Nightly (tests/conftest.py: `--nightly`): a standalone cluster's start and its runs were 400
# test-seconds of the suite (docs/measurements.md, 2026-12-07).
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.nightly, pytest.mark.xdist_group("spark-standalone")]
ROOT = Path(__file__).resolve().parents[2]
CLI = "import sys; from frontends.cli import main; sys.exit(main())"


@pytest.fixture(scope="module")
def standalone(tmp_path_factory) -> Iterator[str]:
    """spark://127.0.0.1:PORT with two workers of one core each; every process stopped after."""
    with cluster(tmp_path_factory.mktemp("spark-standalone")) as master:
        yield master


def kafka_chaos(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLI, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def local_and_cluster(command: str, path: Path, master: str, out: Path, written: str, code: int) -> tuple[dict, dict]:
    """`command` on `path` in local mode, then on the cluster with `path` as a file:// URI: the
    JSON file (`written`) each wrote into its --out. Local mode runs in this process, on the
    worker's own session (a fresh JVM costs about 16 s of CPU; the command line is the same); the
    cluster's driver is a process of its own, as a user's would be."""
    assert main([command, str(path), "--out", str(out / "local"), "--json", "--quiet"]) == code
    remote = ["--out", str(out / "cluster"), "--spark-master", master, "--json", "--quiet"]
    done = kafka_chaos(command, path.as_uri(), *remote)
    assert done.returncode == code, done.stderr
    return tuple(json.loads((out / name / written).read_text()) for name in ("local", "cluster"))


def test_check_on_a_standalone_cluster_reads_a_uri_and_agrees_with_local_mode(standalone, tmp_path: Path):
    history = H.lost_write(True).write(tmp_path / "history.jsonl")
    mine, theirs = local_and_cluster("check", history, standalone, tmp_path, "results.json", 1)
    assert theirs.pop("history") == "file:" + str(history)
    mine.pop("history")
    assert theirs == mine
    assert mine["errors"] == ["lost-write"]


def test_trend_on_a_standalone_cluster_reads_a_uri_and_agrees_with_local_mode(standalone, tmp_path: Path):
    store = tmp_path / "store"
    make_run(store, "a/run1", valid=False, errors={"lost-write": 2})
    make_run(store, "a/run2")
    make_run(store, "b/run3", version="3.9.1", valid="unknown")
    mine, theirs = local_and_cluster("trend", store, standalone, tmp_path, "trend.json", 0)
    assert theirs.pop("store") == store.as_uri()
    mine.pop("store")
    assert theirs == mine
    assert mine["runs"] == 3 and len(mine["invalid_runs"]) == 1


def test_a_remote_uri_needs_out_and_an_unreadable_one_is_one_line(tmp_path: Path):
    no_out = kafka_chaos("check", "hdfs://127.0.0.1:1/run/history.jsonl")
    assert no_out.returncode == 2
    assert no_out.stderr.strip().splitlines()[-1] == (
        "kafka-chaos: error: hdfs://127.0.0.1:1/run/history.jsonl: a history at a URI needs --out "
        "(a local directory for the results)"
    )
    unknown = kafka_chaos("check", "nosuch://bucket/history.jsonl", "--out", str(tmp_path / "o"))
    assert unknown.returncode == 2
    last = unknown.stderr.strip().splitlines()[-1]
    assert last.startswith("kafka-chaos: error: cannot read nosuch://bucket/history.jsonl: "), unknown.stderr
    assert "Traceback" not in unknown.stderr


@pytest.mark.cluster
def test_run_check_hands_its_spark_master_to_the_check(tmp_path: Path):
    """`run --check --spark-master` hands the master to the check (it was parsed and dropped once).
    A master other than the default shows that; `check` on the standalone cluster above shows the
    check itself there, without a Kafka run beside its executors."""
    master = "local[1]"
    done = kafka_chaos(
        "run",
        *ONE_NODE,
        "--time-limit",
        "6",
        "--rate",
        "100",
        "--check",
        "--spark-master",
        master,
        "--json",
        "--store",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"check: starting Spark ({master})" in done.stderr, done.stderr[-3000:]
    assert json.loads(done.stdout)["check"]["valid"] is True
