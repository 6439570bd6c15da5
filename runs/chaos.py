"""One chaos run in one call: a fresh cluster, a workload, a nemesis, the check, a result.

This is what the pytest plugin's `chaos_run` fixture calls (frontends/pytest_plugin.py); plain
Python can call `chaos_run` too. Every call starts its own cluster, as Jepsen does for every
test: a run never inherits a broker another run broke.

    result = chaos_run(ClusterSpec("4.3.1"), Path("store"), "my-test", nemesis="kill,pause", time_limit=60)
    result.valid        # True, False or "unknown" (the checker's verdict)
    result.anomalies    # {"lost-write": 191}: error anomalies and their instances
    result.report       # store/my-test/<time>/report.html

It returns the run's one result (runs/result.py's RunResult), as `run()` does; chaos tests know
it as `ChaosResult`, the name its repr shows under a failed assert.
"""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.errors import KafkaChaosError, UsageError
from kafka_chaos.history.reporter import Reporter
from kafka_chaos.nemesis.plan import nemesis_plan
from kafka_chaos.runs.result import RunResult
from kafka_chaos.runs.run import run
from kafka_chaos.runs.scenario import run_once, scenario_spec
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.scenarios.registry import get
from kafka_chaos.workloads.options import WorkloadOptions

#: What chaos tests call the result of `chaos_run`: the one result of every run.
ChaosResult = RunResult


def workload_options(overrides: dict[str, Any]) -> WorkloadOptions:
    """WorkloadOptions from keyword arguments; an unknown one is a UsageError naming it."""
    known = {f.name for f in fields(WorkloadOptions)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise UsageError(f"unknown workload option(s) {', '.join(unknown)}: expected WorkloadOptions fields")
    if "acks" in overrides:
        overrides = {**overrides, "acks": str(overrides["acks"])}  # acks=1 as a number reads naturally
    return WorkloadOptions(**overrides)  # checked with the rest of the run (RunSpec.validate)


def chaos_run(
    spec: ClusterSpec,
    store: Path,
    name: str,
    *,
    nemesis: str | list[str] | None = None,
    interval: float = 10.0,
    nemesis_start: float | None = None,
    nemesis_targets: str = "any",
    nemesis_mix: str = "serial",
    script: list[dict] | str | Path | None = None,
    scenario: str | None = None,
    config: dict[str, str] | None = None,
    seed: int | None = None,
    reporter: Reporter = print,
    spark_master: str | None = None,
    control_plane: bool = True,
    **workload: Any,
) -> RunResult:
    """Run and check. `nemesis`: faults mixed at random every `interval` s ("kill,pause,partition"),
    the first after `nemesis_start` s of quiet (default `interval`), aimed at `nemesis_targets`
    ("any" node, "brokers", "controllers") where an entry names no target, one at a time or
    overlapping (`nemesis_mix`: "serial" or "overlap", nemesis/overlap.py);
    `script`: timed steps (nemesis/schedule.py); `scenario`: a library scenario or scenario file,
    with its own cluster shape, config and workload (scenarios/); `config`: broker overrides on
    top of the spec's; other keywords are workload options (workloads/options.py), among them
    `client=` ("kafka-python", "librdkafka", "java") and `client_version=`, which a scenario
    takes too. `control_plane=False`: no control-plane evidence (not checked then)."""
    if scenario is not None:
        client = {k: workload.pop(k) for k in ("client", "client_version") if k in workload}
        asked = nemesis or script is not None or nemesis_start is not None or nemesis_targets != "any"
        if asked or nemesis_mix != "serial" or workload or config:
            raise UsageError(
                "a scenario brings its own nemesis, workload and config: pass only scenario= (and client=)"
            )
        chosen = get(scenario)
        run_spec = scenario_spec(
            chosen, spec.version, store, spec.metadata_version, seed, client=client, spark_master=spark_master
        )
        run_spec = replace(run_spec, control_plane=control_plane)
        result = run_once(run_spec, reporter)
        if result.error is not None:
            raise KafkaChaosError(f"scenario {chosen.name} on Kafka {spec.version} could not run: {result.error}")
        return result
    plan = nemesis_plan(nemesis, interval, script, nemesis_start, nemesis_targets, nemesis_mix)
    run_spec = RunSpec(
        spec,
        workload_options(workload),
        plan,
        seed=seed,
        name=name,
        store=store,
        check=True,
        spark_master=spark_master,
        control_plane=control_plane,
    ).with_broker_config(config)
    return run(run_spec, reporter)
