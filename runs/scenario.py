"""One run of a scenario on one Kafka version: the cluster, the workload with the scenario's
script as its nemesis, the check, and the evidence that explains a loss (the metadata
timeline and the replicas' logs, read from the run directory after the cluster is gone).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from kafka_chaos.checkers.check import check_history
from kafka_chaos.checkers.result import CheckResult
from kafka_chaos.checkers.run_dir import RunDir
from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.images import Log
from kafka_chaos.harness.metadata_log import write_timeline
from kafka_chaos.harness.replica_logs import write_replicas
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.runs.run import NemesisPlan, run
from kafka_chaos.scenarios.base import LOSS, Scenario, ScenarioSchedule
from kafka_chaos.workloads.options import WorkloadOptions


@dataclass
class RunOutcome:
    """What one run showed, in the terms of the version table."""

    scenario: str
    version: str
    metadata_version: str | None
    expected: str  # LOSS or SAFE
    run_dir: str
    verdict: bool | str | None = None  # the checker's `valid`; None when the run itself failed
    lost: int = 0
    anomalies: dict[str, int] = field(default_factory=dict)  # error anomalies other than lost-write
    script: str = ""  # how the scenario's script ended
    script_error: str | None = None
    wall_s: float = 0.0
    error: str | None = None  # the run could not be made (cluster did not start, ...)
    #: The check itself, for callers that need more than the table's terms (the pytest plugin's
    #: chaos_run); not part of the table's JSON.
    check: CheckResult | None = field(default=None, repr=False, compare=False)

    @property
    def reproduced(self) -> bool:
        """The scenario's loss was seen: its anomaly found by the checker."""
        return self.lost > 0

    @property
    def as_expected(self) -> bool:
        """The outcome the scenario expects, from a run whose script went as written: a script
        that stopped early (its fault could not be set up) proves nothing either way."""
        if self.error is not None or self.verdict is None or self.script != "completed":
            return False
        return self.reproduced == (self.expected == LOSS)

    def to_json(self) -> dict[str, Any]:
        table = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "check"}
        return {**table, "reproduced": self.reproduced, "as_expected": self.as_expected}


def workload_options(scenario: Scenario) -> WorkloadOptions:
    return WorkloadOptions(**scenario.workload).validate()


def build_cluster(scenario: Scenario, version: str, metadata_version: str | None) -> KafkaCluster:
    """`metadata_version`: as run_once decided it (the caller's, else the scenario's)."""
    spec = ClusterSpec(
        version, nodes=scenario.brokers, controllers=scenario.controllers, brokers=scenario.brokers,
        config=scenario.broker_config, metadata_version=metadata_version,
    )  # fmt: skip
    return spec.build()


def run_once(
    scenario: Scenario,
    version: str,
    store: Path,
    *,
    metadata_version: str | None = None,
    log: Log = print,
    progress=None,
    seed: int | None = None,
    spark_master: str | None = None,
    evidence: bool = True,
) -> RunOutcome:
    """One run: never raises for what Kafka did; a run that could not be made says so in .error."""
    parsed = KafkaVersion.parse(version)
    mv = metadata_version or scenario.metadata_version
    opts = workload_options(scenario)
    cluster = build_cluster(scenario, version, mv)
    schedules: list[ScenarioSchedule] = []

    def schedule(nemesis) -> ScenarioSchedule:
        schedules.append(ScenarioSchedule(nemesis, scenario.script, opts.topic))
        return schedules[-1]

    plan = NemesisPlan(custom=schedule, label=scenario.name)
    name = f"{scenario.name}/{version}" + (f"-mv{mv}" if mv else "")
    started = time.monotonic()
    outcome = RunOutcome(scenario.name, version, mv, scenario.expectation(parsed, mv), "")
    run_dir: Path | None = None
    try:
        run_dir, _summary = run(cluster, opts, store, name, log, progress, seed, plan)
    except UsageError:
        raise  # bad input (a port in use, no Docker engine): the command's exit 2, not an outcome
    except Exception as exc:  # noqa: BLE001 (a cluster that did not start is an outcome of the table)
        outcome.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        latest = (store / name / "latest").resolve()
        run_dir = latest if latest.exists() else None
    outcome.run_dir = str(run_dir) if run_dir else ""
    if schedules:
        report = schedules[0].report()
        outcome.script, outcome.script_error = report["outcome"], report["error"]
        if run_dir is not None:
            RunDir(run_dir).scenario.write_text(
                json.dumps({"scenario": scenario.name, "version": version, "metadata_version": mv, **report}, indent=2)
                + "\n"
            )
    if outcome.error is None and run_dir is not None:
        if evidence:
            collect_evidence(run_dir, parsed, log)
        result = check_history(run_dir, master=spark_master, report=True)
        outcome.check = result
        outcome.verdict = result.valid
        outcome.lost = int(result.anomalies.get("lost-write", {}).get("errors", 0))
        outcome.anomalies = {n: c for n, c in result.error_counts.items() if n != "lost-write"}
    outcome.wall_s = round(time.monotonic() - started, 1)
    return outcome


def collect_evidence(run_dir: Path, version: KafkaVersion, log: Log) -> None:
    """metadata-timeline.json and replicas.json beside the history; a failure here is logged, not fatal."""
    for what, job in (("metadata timeline", write_timeline), ("replica logs", write_replicas)):
        try:
            job(run_dir, version)
        except Exception as exc:  # noqa: BLE001 (evidence is a bonus; the verdict stands without it)
            log(f"could not read the {what}: {type(exc).__name__}: {exc}")
