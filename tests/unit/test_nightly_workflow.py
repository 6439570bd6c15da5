"""The nightly workflow (.github/workflows/nightly.yml) cannot run here; what can drift is its
use of the command line, so every kafka-chaos command in it must parse, for every matrix cell."""

import itertools
import re
import shlex
from pathlib import Path

import pytest
import yaml

from kafka_chaos.frontends.cli import build_parser
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.nemesis.schedule import parse_fault_list
from kafka_chaos.workloads.clients.api import CLIENTS
from kafka_chaos.workloads.options import SHARE_CLIENTS, SHARE_GROUPS_GA

WORKFLOW = Path(__file__).parents[2] / ".github" / "workflows" / "nightly.yml"
SCENARIOS = Path(__file__).parents[1] / "integration" / "test_scenarios.py"


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def commands(job: dict) -> list[str]:
    lines = []
    for step in job["steps"]:
        for line in step.get("run", "").splitlines():
            if "kafka-chaos " in line:
                lines.append(line[line.index("kafka-chaos ") + len("kafka-chaos ") :])
    return lines


def argv(line: str, values: dict[str, str], env: dict[str, str]) -> list[str]:
    """The command's arguments, with the matrix values, step outputs and env variables put in."""
    line = re.sub(r"\$\{\{\s*matrix\.(\w+)\s*\}\}", lambda m: values[m.group(1)], line)
    line = re.sub(r"\$\{\{\s*steps\.cell\.outputs\.slug\s*\}\}", lambda m: slug(values), line)
    env = {**env, "TIME_LIMIT": "300"}  # its expression falls back to 300
    line = re.sub(r"\$(\w+)", lambda m: env[m.group(1)], line)
    words = []
    for word in shlex.split(line):
        if word in (">", "||", ";", "&&", "|") or word.startswith(">"):
            break
        words.append(word)
    return words


def slug(values: dict[str, str]) -> str:
    """The `cell` step's slug, as its shell line makes it."""
    text = values["nemesis"] + ("-share" if "share" in values["workload"] else "")
    text += "-tiered" if "tiered" in values["workload"] else ""
    return text.replace(",", "-").translate(str.maketrans(":/@", "___"))


def cells(matrix: dict) -> list[dict[str, str]]:
    """The matrix's jobs: its product, and the `include` entries (each a job of its own here: every
    one sets `cluster` or `workload` to a value the product does not have, so none merges into a
    cell of the product)."""
    keys = [k for k in matrix if k != "include"]
    product = [dict(zip(keys, values, strict=True)) for values in itertools.product(*(matrix[k] for k in keys))]
    extra = matrix.get("include", [])
    own = lambda e: e["cluster"] not in matrix["cluster"] or e["workload"] not in matrix["workload"]  # noqa: E731
    assert all(own(e) and set(e) == set(keys) for e in extra), extra
    return product + extra


def test_the_matrix_is_versions_by_nemeses_by_clients(workflow):
    matrix = workflow["jobs"]["chaos"]["strategy"]["matrix"]
    assert len(matrix["kafka"]) >= 3 and len(matrix["nemesis"]) >= 3
    assert tuple(matrix["client"]) == CLIENTS
    for version in matrix["kafka"]:
        KafkaVersion.parse(version)
    for cell in cells(matrix):
        parse_fault_list(cell["nemesis"])
    dedicated = [c for c in cells(matrix) if "--controllers 3" in c["cluster"]]
    assert {c["kafka"] for c in dedicated} >= {matrix["kafka"][-1]}  # the newest release, at least
    assert all("--nemesis-targets controllers" in c["cluster"] and "@controller" in c["nemesis"] for c in dedicated)


def test_every_command_parses_for_every_matrix_cell(workflow):
    matrix = workflow["jobs"]["chaos"]["strategy"]["matrix"]
    lines = commands(workflow["jobs"]["chaos"]) + commands(workflow["jobs"]["trend"])
    assert any(line.startswith("run ") for line in lines) and any(line.startswith("trend ") for line in lines)
    for values in cells(matrix):
        for line in lines:
            args = build_parser().parse_args(argv(line, values, workflow["env"]))
            if args.command == "run":
                assert args.kafka == values["kafka"] and args.nemesis == values["nemesis"] and args.check and args.json
                assert args.client == values["client"]
                dedicated = "--controllers 3" in values["cluster"]
                assert (args.controllers, args.nemesis_targets) == ((3, "controllers") if dedicated else (0, "any"))
                assert args.consumer == ("share" if "--consumer share" in values["workload"] else "assign")
                assert args.tiered == ("--tiered" in values["workload"])
        assert not set(slug(values)) & set(' :/@"<>|*?\\'), slug(values)  # an artifact's name


def test_share_groups_run_through_every_share_client_on_their_ga_releases(workflow):
    matrix = workflow["jobs"]["chaos"]["strategy"]["matrix"]
    share = [c for c in cells(matrix) if "--consumer share" in c["workload"]]
    assert {c["client"] for c in share} == set(SHARE_CLIENTS)
    versions = {KafkaVersion.parse(c["kafka"]) for c in share}
    assert min(versions) >= SHARE_GROUPS_GA and max(versions) == max(map(KafkaVersion.parse, matrix["kafka"]))
    for c in share:
        assert "@leader:" in c["nemesis"] and "@share-coordinator:" in c["nemesis"], c


def test_tiered_storage_runs_on_the_newest_release_with_the_remote_tier_faulted(workflow):
    matrix = workflow["jobs"]["chaos"]["strategy"]["matrix"]
    tiered = [c for c in cells(matrix) if "--tiered" in c["workload"]]
    assert {c["kafka"] for c in tiered} >= {matrix["kafka"][-1]}
    for c in tiered:
        faults = {entry.partition("@")[0] for entry in parse_fault_list(c["nemesis"])}
        assert {"remote-unavailable", "remote-slow"} <= faults and {"kill", "partition"} <= faults, c
    # Its brokers' gates are FUSE mounts: the run needs root and libfuse2 (docs/cluster.md).
    steps = workflow["jobs"]["chaos"]["steps"]
    run = next(s["run"] for s in steps if "kafka-chaos run" in s.get("run", ""))
    assert "${{ contains(matrix.workload, 'tiered') && 'sudo -E' || '' }} .venv/bin/kafka-chaos run" in run
    assert any("libfuse2" in s.get("run", "") for s in steps)


def test_runs_are_uploaded_and_summarized_even_when_they_fail(workflow):
    steps = workflow["jobs"]["chaos"]["steps"]
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    summary = next(s for s in steps if "GITHUB_STEP_SUMMARY" in s.get("run", ""))
    assert upload["if"] == "always()" and summary["if"] == "always()"
    assert upload["with"]["path"] == "store/"
    assert "exit" in steps[-1]["run"]  # the verdict decides the job's colour, after the upload
    assert "cancelled()" in workflow["jobs"]["trend"]["if"]  # the trend runs when some cells failed


def test_each_nightly_scenario_runs_on_an_affected_and_a_fixed_release_and_parses(workflow):
    from kafka_chaos.scenarios.base import LOSS, SAFE
    from kafka_chaos.scenarios.registry import get

    job = workflow["jobs"]["scenarios"]
    (line,) = [c for c in commands(job) if c.startswith("reproduce ")]
    for values in job["strategy"]["matrix"]["include"]:
        args = build_parser().parse_args(argv(line, values, workflow["env"]))
        assert args.scenario == values["scenario"] and args.kafka == values["kafka"]
        scenario = get(values["scenario"])
        outcomes = {scenario.expect(KafkaVersion.parse(v), None) for v in values["kafka"].split(",")}
        assert outcomes == {LOSS, SAFE}, values  # the loss, and its fix, side by side


def test_the_suite_nightly_job_runs_what_the_suite_skips(workflow):
    """The suite skips what is marked `nightly` (tests/conftest.py): the nightly job is where those
    tests run, so it must ask for them and select them by their marker, over the whole suite."""
    (step,) = [s for s in workflow["jobs"]["suite-nightly"]["steps"] if "dev.sh test" in s.get("run", "")]
    words = shlex.split(step["run"])
    assert "--nightly" in words and words[words.index("-m") + 1] == "nightly", words
    assert not [w for w in words[words.index("nightly") + 1 :] if not w.startswith("-")], words  # no paths: all of it
    marked = re.findall(r"@pytest\.mark\.nightly\ndef (test_\w+)", SCENARIOS.read_text())
    assert len(marked) == 10, marked
