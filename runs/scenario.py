"""One run of a scenario on one Kafka version: the cluster, the workload with the scenario's
script as its nemesis, the check, and the evidence that explains a loss (the metadata
timeline and the replicas' logs, read from the run directory after the cluster is gone).
"""

from __future__ import annotations

import time
from pathlib import Path

from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.history.reporter import Reporter
from kafka_chaos.nemesis.plan import NemesisPlan
from kafka_chaos.runs.result import RunResult
from kafka_chaos.runs.run import Run
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.scenarios.base import Scenario, ScenarioSchedule
from kafka_chaos.workloads.options import WorkloadOptions


def scenario_spec(
    scenario: Scenario,
    version: str,
    store: Path,
    metadata_version: str | None = None,
    seed: int | None = None,
    evidence: bool = True,
    client: dict[str, str] | None = None,
    spark_master: str | None = None,
) -> RunSpec:
    """The run of a scenario on one version: its cluster, its workload, its script as the nemesis.
    `metadata_version`: the caller's, else the scenario's. Its workload options are checked with
    the rest of the run (RunSpec.validate). `client`: the client library the workload speaks
    (`client`, `client_version`), over the scenario's. The run is checked: the version table is
    made of verdicts."""
    mv = metadata_version or scenario.metadata_version
    opts = WorkloadOptions(**{**scenario.workload, **(client or {})})
    cluster = ClusterSpec(
        version,
        nodes=scenario.brokers,
        controllers=scenario.controllers,
        brokers=scenario.brokers,
        config=scenario.broker_config,
        metadata_version=mv,
        quorum=scenario.quorum,
        disk=scenario.disk,
        tiered=scenario.tiered,
    )
    plan = NemesisPlan(
        custom=lambda nemesis: ScenarioSchedule(nemesis, scenario.script, opts.topic, opts), label=scenario.name
    )
    name = f"{scenario.name}/{version}" + (f"-mv{mv}" if mv else "")
    return RunSpec(
        cluster,
        opts,
        plan,
        seed=seed,
        name=name,
        store=store,
        evidence=evidence,
        check=True,
        spark_master=spark_master,
        scenario=scenario,
    )


def run_once(spec: RunSpec, reporter: Reporter = print) -> RunResult:
    """One scenario run, for the version table: never raises for what Kafka did; a run that could
    not be made (a cluster that did not start) says so in `.error`. Bad input still raises."""
    job = Run(spec, reporter)
    started = time.monotonic()
    try:
        return job.execute()
    except UsageError:
        raise  # bad input (a port in use, no Docker engine): the command's exit 2, not an outcome
    except Exception as exc:  # a cluster that did not start is an outcome of the table
        result = job.result or RunResult(None, job.spec)
        result.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        result.wall_s = round(time.monotonic() - started, 1)
        return result
