"""One run through the command line, held to the run directory the code before issue 35's one
run pipeline wrote for the same command (run_dir_layout.json, made from that code, with issue
36's control-plane/ folder and the `control_plane` of config.json, results.json and `--json`
added, issue 37's `quorum` of config.json, and issue 45's `unknown_reason` of results.json and
`--json` and `exit_code` of `--json`, issue 47's share-group options of config.json and `share`
of `--json`, issue 48's `topic_config` of config.json's workload, issue 49's history.parquet),
then run again from its recorded seed through `run(spec)`: the same faults on the same nodes.
The command is `run --check --json --quiet`: what it prints, and `check` of its directory."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_chaos.frontends.cli import main
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.history.events import NEMESIS, OK
from kafka_chaos.history.file import read_history
from kafka_chaos.history.reporter import silent
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.nemesis.plan import nemesis_plan
from kafka_chaos.runs.run import run
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions
from tests.integration.run_dir_layout import COMMAND, comparable, layout

pytestmark = [pytest.mark.cluster, pytest.mark.spark]
GOLDEN = Path(__file__).with_name("run_dir_layout.json")


def faults(run_dir: Path) -> list[tuple[str, list[str]]]:
    """The nemesis's completed operations, in order, with the nodes each acted on."""
    events = read_history(RunDir(run_dir).history)
    return [(e["f"], e["value"].get("nodes")) for e in events if e["process"] == NEMESIS and e["type"] == OK]


def test_a_run_writes_the_directory_it_wrote_before_and_replays_from_its_seed(tmp_path, docker_api, capsys):
    done = subprocess.run(
        [sys.executable, "-m", "kafka_chaos.frontends.cli", *COMMAND, "--store", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    first = (tmp_path / "layout" / "latest").resolve()
    printed = json.loads(done.stdout)  # the whole of stdout is one document
    assert comparable(layout(first, printed)) == comparable(json.loads(GOLDEN.read_text()))
    # `run --check --json --quiet`: valid, no progress on stderr, results and report in the run directory
    assert printed["check"]["valid"] is True and printed["check"]["errors"] == {}
    assert printed["workload"]["counts"]["ok"] > 0 and printed["workload"]["final_read_complete"] is True
    assert [line for line in done.stderr.splitlines() if line.startswith("kafka-chaos:")] == []
    assert Path(printed["run_dir"]) == first and Path(printed["check"]["results"]) == first / "results.json"
    assert (first / "report.html").exists()
    # `check` of the same directory, for people (through `main`, in this process: its session is
    # the worker's, not a second fresh JVM)
    capsys.readouterr()
    assert main(["check", str(first), "--no-report"]) == 0
    assert "verdict: VALID" in capsys.readouterr().out

    config = json.loads(RunDir(first).config.read_text())
    assert config["seed"] == 5
    spec = RunSpec(
        ClusterSpec(config["kafka_version"]),
        WorkloadOptions(time_limit=12),
        nemesis_plan("kill,pause", 3, None),
        seed=config["seed"],
        name="replay",
        store=tmp_path,
    )
    again = run(spec, silent)
    # The same faults on the same nodes, as far as both runs got: how many fit in 12 s depends on
    # how long each took (under load a run fits one fault more or less than the other).
    one, two = faults(first), faults(again.run_dir)
    common = min(len(one), len(two))
    assert common >= 4 and one[:common] == two[:common], (one, two)  # two faults and their heals
