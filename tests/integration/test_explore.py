"""One short real campaign: `explore --runs 2` of 15 s runs on 4.3.1, through the command line,
stopped by Ctrl-C in its second run and resumed. Its directory, table, plot and JSON document,
its exit codes, its disk policy, and nothing left running after the Ctrl-C or at the end. And a
campaign killed with SIGKILL, whose run still removes its own cluster."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafka_chaos.harness.cleanup import find_by_label, owned_by, owner_pid, remove
from tests.integration.leftovers import assert_no_leftovers
from tests.integration.processes import cli, interrupt, kill_and_clean, parent_pid

pytestmark = [pytest.mark.cluster, pytest.mark.spark, pytest.mark.timeout(900)]
CLI = [sys.executable, "-m", "kafka_chaos.frontends.cli"]


def first_run_recorded(store: Path, proc: subprocess.Popen, timeout_s: float) -> Path:
    """The campaign's directory, once its campaign.json holds one run."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1][-4000:]
        for saved in store.glob("explore/2*/campaign.json"):  # not the `latest` link
            try:
                if len(json.loads(saved.read_text())["trials"]) >= 1:
                    return saved.parent
            except ValueError:
                pass  # written as we read: the next look
        time.sleep(0.5)
    proc.kill()
    raise AssertionError(f"no run recorded in {timeout_s:g} s: {proc.communicate()[1][-4000:]}")


def test_a_short_campaign_stopped_and_resumed(docker_api, tmp_path):
    argv = ["explore", "--kafka", "4.3.1", "--runs", "2", "--time-limit", "15", "--rate", "300"]
    argv += ["--concurrency", "8", "--seed", "46", "--no-shrink", "--store", str(tmp_path), "--json", "--quiet"]
    first = cli(argv)
    campaign = first_run_recorded(tmp_path, first, 500)
    code, out, err = interrupt(first, 180)  # in the second run: healed, its cluster removed
    assert code == 130, err[-4000:]
    assert json.loads(out)["interrupted"] is True and json.loads(out)["runs"] == 1
    assert json.loads((campaign / "campaign.json").read_text())["interrupted"] is True
    assert_no_leftovers(docker_api)

    proc = subprocess.run(
        [*CLI, "explore", "--resume", str(campaign), "--runs", "2", "--no-shrink", "--json", "--quiet"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.stdout.strip(), proc.stderr[-4000:]
    doc = json.loads(proc.stdout)  # the whole of stdout is one document
    assert doc["campaign"] == str(campaign)
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
    runs = md.split("## Runs", 1)[1].split("\n## ", 1)[0]  # (a finding's row names its mix too)
    assert runs.count("| explore |") == 2, md
    assert (campaign / "states.svg").read_text().startswith("<svg")

    # Every run's states, and the campaign's distinct states are their union. The run the Ctrl-C
    # stopped keeps its directory, as `run` does, and is not one of the campaign's runs.
    runs = [Path(t["run_dir"]) for t in trials]
    assert set(runs) <= set((campaign / "explore").glob("2*")) and len(list((campaign / "explore").glob("2*"))) <= 3
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


def test_a_campaign_killed_with_sigkill_leaves_its_run_to_clean_up(docker_api, tmp_path):
    """Each run lives in a process of its own (runs/isolated.py), which owns its cluster: the
    campaign's SIGKILL closes the pipe the run reports on, and the run removes its cluster
    itself, with no next run to reap it, long before its 300 s time limit."""
    argv = ["explore", "--kafka", "4.3.1", "--runs", "1", "--time-limit", "300", "--rate", "100"]
    proc = cli([*argv, "--seed", "46", "--no-shrink", "--store", str(tmp_path), "--quiet"])
    run_pid = None
    try:
        deadline = time.monotonic() + 300
        while run_pid is None and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()[1][-4000:]
            for container in find_by_label(docker_api)[0]:
                pid = owner_pid(container.labels)  # the run's process, a child of the fork server
                if pid is not None and parent_pid(parent_pid(pid) or 0) == proc.pid:
                    run_pid = pid
            time.sleep(0.5)
        assert run_pid is not None, "no run's cluster appeared"
        proc.kill()
        proc.wait()  # not communicate(): the run inherits the pipes and holds them until it ends
        deadline = time.monotonic() + 120
        while (parent_pid(run_pid) is not None or owned_by(docker_api, run_pid) != ([], [])) and (
            time.monotonic() < deadline
        ):
            time.sleep(1)
        assert parent_pid(run_pid) is None, "the run's process outlived its campaign"
        assert owned_by(docker_api, run_pid) == ([], [])
    finally:
        kill_and_clean(docker_api, proc)
        if run_pid is not None:
            remove(*owned_by(docker_api, run_pid))
    assert_no_leftovers(docker_api)
