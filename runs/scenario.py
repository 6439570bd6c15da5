"""One run of a scenario on one Kafka version: the cluster, the workload with the scenario's
script as its nemesis, the check, and the evidence that explains a loss (the metadata
timeline and the replicas' logs, read from the run directory after the cluster is gone).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from kafka_chaos.checkers.result import CheckResult
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.images import Log
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.nemesis.plan import NemesisPlan
from kafka_chaos.runs.run import Run
from kafka_chaos.runs.spec import RunSpec
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
    #: The anomalies that show the scenario's loss (Scenario.shows).
    shows: tuple[str, ...] = ("lost-write",)
    #: The check itself, for callers that need more than the table's terms (the pytest plugin's
    #: chaos_run); not part of the table's JSON.
    check: CheckResult | None = field(default=None, repr=False, compare=False)
    #: The workload's summary (as summary.json holds it), for the same callers; not in the JSON.
    workload: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def reproduced(self) -> bool:
        """The scenario's loss was seen: one of its anomalies found by the checker."""
        return any(self.lost if name == "lost-write" else self.anomalies.get(name, 0) for name in self.shows)

    @property
    def as_expected(self) -> bool:
        """The outcome the scenario expects, from a run whose script went as written: a script
        that stopped early (its fault could not be set up) proves nothing either way."""
        if self.error is not None or self.verdict is None or self.script != "completed":
            return False
        return self.reproduced == (self.expected == LOSS)

    def to_json(self) -> dict[str, Any]:
        table = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("check", "workload")}
        return {**table, "reproduced": self.reproduced, "as_expected": self.as_expected}


def scenario_spec(
    scenario: Scenario,
    version: str,
    store: Path,
    metadata_version: str | None = None,
    seed: int | None = None,
    evidence: bool = True,
    client: dict[str, str] | None = None,
) -> RunSpec:
    """The run of a scenario on one version: its cluster, its workload, its script as the nemesis.
    `metadata_version`: the caller's, else the scenario's. Its workload options are checked with
    the rest of the run (RunSpec.validate). `client`: the client library the workload speaks
    (`client`, `client_version`), over the scenario's."""
    mv = metadata_version or scenario.metadata_version
    opts = WorkloadOptions(**{**scenario.workload, **(client or {})})
    cluster = ClusterSpec(
        version, nodes=scenario.brokers, controllers=scenario.controllers, brokers=scenario.brokers,
        config=scenario.broker_config, metadata_version=mv,
    )  # fmt: skip
    plan = NemesisPlan(
        custom=lambda nemesis: ScenarioSchedule(nemesis, scenario.script, opts.topic), label=scenario.name
    )
    name = f"{scenario.name}/{version}" + (f"-mv{mv}" if mv else "")
    return RunSpec(cluster, opts, plan, seed=seed, name=name, store=store, evidence=evidence)


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
    client: dict[str, str] | None = None,
) -> RunOutcome:
    """One run: never raises for what Kafka did; a run that could not be made says so in .error."""
    spec = scenario_spec(scenario, version, store, metadata_version, seed, evidence, client)
    mv = spec.cluster.metadata_version
    started = time.monotonic()
    outcome = RunOutcome(scenario.name, version, mv, scenario.expectation(KafkaVersion.parse(version), mv), "")
    outcome.shows = scenario.shows
    job = Run(spec, log, progress, check=True, spark_master=spark_master)
    try:
        job.execute()
    except UsageError:
        raise  # bad input (a port in use, no Docker engine): the command's exit 2, not an outcome
    except Exception as exc:  # noqa: BLE001 (a cluster that did not start is an outcome of the table)
        outcome.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    result = job.result
    outcome.run_dir = str(result.run_dir) if result is not None else ""
    if result is not None and result.scenario is not None:
        outcome.script, outcome.script_error = result.scenario["outcome"], result.scenario["error"]
    if result is not None and result.summary is not None:
        outcome.workload = result.summary.to_json()
    if result is not None and result.check is not None:
        outcome.check = result.check
        outcome.verdict = result.check.valid
        outcome.lost = int(result.check.anomalies.get("lost-write", {}).get("errors", 0))
        outcome.anomalies = {n: c for n, c in result.check.error_counts.items() if n != "lost-write"}
    outcome.wall_s = round(time.monotonic() - started, 1)
    return outcome
