"""One short real campaign: `explore --runs 2` of 20 s runs on 4.3.1, through the command line.
Its directory, table, plot and JSON document, its exit code, its disk policy, and nothing left
running afterwards."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.leftovers import assert_no_leftovers

pytestmark = [pytest.mark.cluster, pytest.mark.spark, pytest.mark.timeout(900)]
CLI = [sys.executable, "-m", "kafka_chaos.frontends.cli"]


def test_a_short_campaign(docker_api, tmp_path):
    argv = ["explore", "--kafka", "4.3.1", "--runs", "2", "--time-limit", "20", "--rate", "300"]
    argv += ["--concurrency", "8", "--seed", "46", "--no-shrink", "--store", str(tmp_path), "--json", "--quiet"]
    proc = subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=800)
    assert proc.stdout.strip(), proc.stderr[-4000:]
    doc = json.loads(proc.stdout)  # the whole of stdout is one document
    assert [line for line in proc.stderr.splitlines() if line.startswith("kafka-chaos:")] == []
    assert set(doc) >= {"runs", "states", "findings"} and doc["runs"] == 2 and not doc["interrupted"]
    for finding in doc["findings"]:
        assert set(finding) == {"run", "anomalies", "script", "reproduced"} and finding["anomalies"]
        assert Path(finding["script"]).is_file() and finding["reproduced"] is None  # --no-shrink
    assert proc.returncode == doc["exit_code"] == (1 if doc["findings"] else doc["exit_code"])
    assert proc.returncode in (0, 1, 3, 4), proc.stderr[-4000:]

    campaign = Path(doc["campaign"])
    assert campaign.parent == tmp_path / "explore"
    assert {"campaign.json", "explore.md", "explore.json", "states.svg"} <= {p.name for p in campaign.iterdir()}
    table = json.loads((campaign / "explore.json").read_text())
    trials = table["trials"]
    assert [t["run"] for t in trials] == [1, 2] and all(t["error"] is None for t in trials), trials
    assert all(t["schedule"] and t["verdict"] for t in trials)
    md = (campaign / "explore.md").read_text()
    assert "## Runs" in md and md.count("| explore |") == 2
    assert (campaign / "states.svg").read_text().startswith("<svg")

    # Every run's states, and the campaign's distinct states are their union.
    runs = sorted((campaign / "explore").glob("2*"))
    assert [str(r) for r in runs] == [t["run_dir"] for t in trials]
    reached = set()
    for run, trial in zip(runs, trials, strict=True):
        names = {p.name for p in run.iterdir()}
        assert {"config.json", "summary.json", "results.json", "states.json"} <= names
        reached |= set(json.loads((run / "states.json").read_text()))
        if trial["anomalies"]:
            assert trial["kept"] == "all" and "cluster" in names and "report.html" in names
        else:  # the first run is sampled: its evidence kept, its nodes' data not
            assert "cluster" not in names
            assert ("history.jsonl" in names) == (trial["kept"] == "evidence")
    assert trials[0]["kept"] in ("evidence", "all")
    assert doc["states"] == len(reached) >= 1
    assert_no_leftovers(docker_api)
