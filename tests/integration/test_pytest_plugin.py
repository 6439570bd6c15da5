"""The pytest plugin on real clusters: a generated chaos test file run by pytest (pytester, in a
subprocess, so the plugin is loaded through its entry point as a user's pytest loads it).

One test passes on a valid run under kills; one uses a started cluster; one fails on a real
loss (acks=1 under leader kills) and must print the anomaly summary and the report path; both
chaos runs land in the JUnit XML properties. `kafka-chaos trend` then reads the run directories
those runs made. One pytest session for all of it: each chaos run costs a minute or two."""

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kafka_chaos.checkers.anomalies import CONTROL_NAMES
from kafka_chaos.harness.versions import DEFAULT_VERSION
from tests.integration.leftovers import assert_no_leftovers

pytestmark = [pytest.mark.cluster, pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(1500)]

CHAOS_TESTS = """
import pytest

@pytest.mark.kafka(nodes=3)  # under a nemesis the run gives the brokers fast failure detection
def test_kills_are_survived(chaos_run):
    result = chaos_run(nemesis="kill", interval=4, time_limit=14, rate=200, concurrency=4, seed=3)
    assert result.valid is True
    assert result.faults["kill"] >= 1


@pytest.mark.kafka(nodes=1)
def test_a_started_cluster(kafka_cluster):
    from kafka_chaos.harness.admin import live_brokers

    with kafka_cluster.admin() as admin:
        assert len(live_brokers(admin)) == 1
    kafka_cluster.create_topic("t", 1, 1)


def test_acks1_is_expected_to_be_valid(chaos_run):
    result = chaos_run(scenario="acks1-failover")
    assert result.valid  # it is not: acks=1 loses acknowledged writes under leader kills
"""


def test_a_generated_chaos_suite_passes_and_fails_as_it_should(pytester, docker_api, tmp_path_factory):
    pytester.makepyfile(test_generated_chaos=CHAOS_TESTS)
    store, xml = pytester.path / "store", pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--junitxml={xml}", "--kafka-store", str(store), timeout=1400
    )
    output = result.stdout.str()
    result.assert_outcomes(passed=2, failed=1)
    assert f"FAILED test_generated_chaos.py::test_acks1_is_expected_to_be_valid[kafka-{DEFAULT_VERSION}]" in output
    failure_output(output)
    junit_properties(ET.parse(xml).getroot())
    assert_no_leftovers(docker_api)
    trend_of(store, tmp_path_factory.mktemp("nights"))


def failure_output(output: str) -> None:
    """The failed test's report: pytest's assertion with the result's repr, the kafka-chaos section
    (verdict, the checker's summary, the report path), the progress in the captured log."""
    assert "where False = ChaosResult(Kafka" in output and "INVALID: lost-write" in output, output
    parts = re.split(r"^-+ kafka-chaos -+$", output, flags=re.M)
    assert len(parts) == 2, output  # one section: only the failed test gets one
    section = re.split(r"^(?:-+ Captured|=+ )", parts[1], flags=re.M)[0]
    assert f"Kafka {DEFAULT_VERSION}, nemesis scenario:acks1-failover: INVALID: lost-write" in section, section
    assert "verdict: INVALID: anomalies found" in section and "lost-write" in section
    assert re.search(r"^report: /\S+/report\.html$", section, flags=re.M), section
    assert "nemesis: kill" in output  # live progress, captured in the failed test's log
    assert "kafka-chaos runs" in output  # the session's table of runs


def junit_properties(root: ET.Element) -> None:
    def props(test: str) -> dict[str, str]:
        case = next(c for c in root.iter("testcase") if c.get("name").startswith(test))
        return {p.get("name"): p.get("value") for p in case.iter("property")}

    good, bad = props("test_kills_are_survived"), props("test_acks1_is_expected")
    assert good["kafka_chaos.valid"] == "true" and good["kafka_chaos.anomalies"] == "none"
    assert good["kafka_chaos.version"] == DEFAULT_VERSION and good["kafka_chaos.nemesis"] == "kill"
    for run in (good, bad):  # what the run's own results.json says, not what Kafka should have done
        assert run["kafka_chaos.control_plane"] == control_plane_of(Path(run["kafka_chaos.report"]).parent)
    assert bad["kafka_chaos.valid"] == "false" and int(bad["kafka_chaos.lost"]) > 0
    assert "lost-write=" in bad["kafka_chaos.anomalies"]
    assert bad["kafka_chaos.nemesis"] == "scenario:acks1-failover"
    assert Path(bad["kafka_chaos.report"]).is_file()
    assert 'class="fault fault-kill"' in Path(good["kafka_chaos.report"]).read_text()  # the kills, on the plots
    assert props("test_a_started_cluster") == {}  # no chaos run, no properties


def control_plane_of(run_dir: Path) -> str:
    """The control plane's line as the property spells it, from the run's results.json: "ok", or
    each control-plane anomaly with its count; every rule must have run. A real run under a loaded
    machine's faults may find one (docs/measurements.md, 2026-11-30: `unfenced-down-broker`)."""
    results = json.loads((run_dir / "results.json").read_text())
    cp = results["control_plane"]
    assert cp["checked"] and cp["rules_checked"] == cp["rules"] == len(CONTROL_NAMES), cp
    found = [f"{name} {a['count']}" for name, a in results["anomalies"].items() if name in CONTROL_NAMES]
    return ", ".join(found) or "ok"


def trend_of(store: Path, nights: Path) -> None:
    """`kafka-chaos trend` over the two real runs, plus a copy of one dated a day earlier."""
    shutil.copytree(store, nights / "tonight", symlinks=True)
    configs = (nights / "tonight").rglob("config.json")
    valid_run = next(p.parent for p in configs if json.loads(p.read_text())["nemesis"].get("faults") == ["kill"])
    earlier = nights / "last-night" / "run"
    shutil.copytree(valid_run, earlier, symlinks=True, ignore=shutil.ignore_patterns("cluster"))
    config = json.loads((earlier / "config.json").read_text())
    config["history_started_unix_ms"] -= 86_400_000
    config["run_id"] = "an-earlier-run"
    (earlier / "config.json").write_text(json.dumps(config))

    proc = subprocess.run(
        [sys.executable, "-m", "kafka_chaos.frontends.cli", "trend", str(nights), "--json", "--quiet"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    trend = json.loads(proc.stdout)
    rows = {(r["day"], r["nemesis"]): r for r in trend["rows"]}
    assert trend["runs"] == 3, trend  # the `latest` links do not count runs twice
    days = sorted({day for day, _ in rows})
    assert len(days) == 2
    assert rows[(days[0], "kill")]["valid"] == 1 and rows[(days[1], "kill")]["valid"] == 1
    lossy = rows[(days[1], "scenario:acks1-failover")]
    assert lossy["invalid"] == 1 and lossy["anomalies"]["lost-write"]["runs"] == 1
    assert lossy["anomalies"]["lost-write"]["errors"] > 0
    assert all(r["version"] == DEFAULT_VERSION for r in trend["rows"])
    assert [b["nemesis"] for b in trend["invalid_runs"]] == ["scenario:acks1-failover"]
    files = trend["files"]
    assert "| day | Kafka | nemesis |" in Path(files["md"]).read_text()
    assert Path(files["svg"]).read_text().count("<polyline") == 1  # the invalid share of the one version
    assert "report.html" in Path(files["html"]).read_text()
