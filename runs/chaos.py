"""One chaos run in one call: a fresh cluster, a workload, a nemesis, the check, a result.

This is what the pytest plugin's `chaos_run` fixture calls (frontends/pytest_plugin.py); plain
Python can call `chaos_run` too. Every call starts its own cluster, as Jepsen does for every
test: a run never inherits a broker another run broke.

    result = chaos_run(ClusterSpec("4.3.1"), Path("store"), "my-test", nemesis="kill,pause", time_limit=60)
    result.valid        # True, False or "unknown" (the checker's verdict)
    result.anomalies    # {"lost-write": 191}: error anomalies and their instances
    result.report       # store/my-test/<time>/report.html
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from kafka_chaos.checkers.check import CheckResult, format_summary
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.errors import KafkaChaosError, UsageError
from kafka_chaos.harness.images import Log
from kafka_chaos.history.events import NEMESIS, OK
from kafka_chaos.history.file import read_history
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.nemesis.plan import nemesis_plan
from kafka_chaos.runs.run import run
from kafka_chaos.runs.scenario import run_once
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.scenarios.registry import get
from kafka_chaos.workloads.options import WorkloadOptions


@dataclass
class ChaosResult:
    """What a chaos run showed. `assert result.valid` fails with the anomalies and the report in its message."""

    version: str
    nemesis: str
    run_dir: Path
    #: The checker's verdict: True, False or "unknown" (nothing could be proved); None: not checked.
    valid: bool | str | None
    #: Error anomalies (../shared/anomalies.md names) and their instances; empty when valid.
    anomalies: dict[str, int] = field(default_factory=dict)
    report: Path | None = None
    results: Path | None = None
    #: The checker's one-screen summary (checkers/check.py format_summary).
    summary: str = ""
    #: The workload's counts and timings (summary.json).
    workload: dict[str, Any] = field(default_factory=dict)
    #: For a scenario: how its script ended ("completed" when it went as written).
    script: str | None = None
    #: Ok operations/s before, in and between faults, with a warning when the workload stalled
    #: (checkers/liveness.py): how much a VALID verdict is worth.
    liveness: dict[str, Any] | None = None

    @property
    def stalled(self) -> bool:
        """The workload fell under half its pre-fault rate between faults."""
        return bool(self.liveness and self.liveness.get("warning"))

    @property
    def lost(self) -> int:
        """Acknowledged writes lost (the lost-write anomaly's instances)."""
        return self.anomalies.get("lost-write", 0)

    @property
    def faults(self) -> Counter:
        """Nemesis operations that succeeded, by name (kill, start, pause, ...), read from the history."""
        return Counter(
            e["f"] for e in read_history(RunDir(self.run_dir).history) if e["process"] == NEMESIS and e["type"] == OK
        )

    def verdict(self) -> str:
        if self.valid is True:
            return "VALID"
        if self.valid is False:
            return "INVALID: " + ", ".join(f"{n} {c:,}" for n, c in self.anomalies.items())
        return "UNKNOWN: nothing could be proved" if self.valid == "unknown" else "NOT CHECKED"

    def __repr__(self) -> str:
        # What pytest shows under a failed `assert result.valid`: the verdict and where to look.
        return f"ChaosResult(Kafka {self.version}, nemesis {self.nemesis}: {self.verdict()}; report {self.report})"

    def explain(self) -> str:
        """The anomaly summary and the report's path, for a failed test's output."""
        head = f"Kafka {self.version}, nemesis {self.nemesis}: {self.verdict()}"
        return "\n".join([head, self.summary or f"run directory: {self.run_dir}"])

    def properties(self, prefix: str = "kafka_chaos") -> list[tuple[str, str]]:
        """(name, value) pairs for the JUnit XML <properties> of the test."""
        valid = {True: "true", False: "false"}.get(self.valid, str(self.valid))  # type: ignore[arg-type]
        anomalies = ";".join(f"{n}={c}" for n, c in self.anomalies.items()) or "none"
        pairs = [
            ("version", self.version), ("nemesis", self.nemesis), ("valid", valid), ("anomalies", anomalies),
            ("lost", str(self.lost)), ("run_dir", str(self.run_dir)), ("report", str(self.report or "")),
        ]  # fmt: skip
        if self.liveness and self.liveness.get("first_fault_s") is not None:
            kept = self.liveness["ratios"]["ops_per_s"]["between_faults"]
            pairs += [
                ("kept_between_faults", "" if kept is None else str(kept)),
                ("stalled", str(self.stalled).lower()),
            ]
        return [(f"{prefix}.{k}", v) for k, v in pairs]


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
    script: list[dict] | str | Path | None = None,
    scenario: str | None = None,
    config: dict[str, str] | None = None,
    seed: int | None = None,
    log: Log = print,
    progress: Callable[[str], None] | None = None,
    spark_master: str | None = None,
    **workload: Any,
) -> ChaosResult:
    """Run and check. `nemesis`: faults mixed at random every `interval` s ("kill,pause,partition"),
    the first after `nemesis_start` s of quiet (default `interval`);
    `script`: timed steps (nemesis/schedule.py); `scenario`: a library scenario or scenario file,
    with its own cluster shape, config and workload (scenarios/); `config`: broker overrides on
    top of the spec's; other keywords are workload options (workloads/options.py), among them
    `client=` ("kafka-python", "librdkafka", "java") and `client_version=`, which a scenario
    takes too."""
    if scenario is not None:
        client = {k: workload.pop(k) for k in ("client", "client_version") if k in workload}
        if nemesis or script is not None or nemesis_start is not None or workload or config:
            raise UsageError(
                "a scenario brings its own nemesis, workload and config: pass only scenario= (and client=)"
            )
        return _scenario_run(spec, store, scenario, seed, log, progress, spark_master, client)
    plan = nemesis_plan(nemesis, interval, script, nemesis_start)
    run_spec = RunSpec(
        spec, workload_options(workload), plan, seed=seed, name=name, store=store,
    ).with_broker_config(config)  # fmt: skip
    done = run(run_spec, log, progress, check=True, spark_master=spark_master, check_progress=progress or log)
    label = run_spec.nemesis.short() if run_spec.nemesis else "none"
    checked: CheckResult = done.check  # type: ignore[assignment] (check=True)
    workload_json = done.summary.to_json() if done.summary is not None else {}
    return _result(spec.version, label, done.run_dir, checked, format_summary(checked), workload_json)


def _scenario_run(spec, store, name, seed, log, progress, spark_master, client) -> ChaosResult:  # noqa: ANN001
    scenario = get(name)
    outcome = run_once(
        scenario, spec.version, store, metadata_version=spec.metadata_version, log=log, progress=progress,
        seed=seed, spark_master=spark_master, client=client,
    )  # fmt: skip
    if outcome.error is not None:
        raise KafkaChaosError(f"scenario {scenario.name} on Kafka {spec.version} could not run: {outcome.error}")
    run_dir = Path(outcome.run_dir)
    checked = outcome.check
    if checked is None:  # run_once checks every run it made; a run it could not make raised above
        raise KafkaChaosError(f"scenario {scenario.name} on Kafka {spec.version} was not checked ({run_dir})")
    result = _result(
        spec.version, f"scenario:{scenario.name}", run_dir, checked, format_summary(checked), outcome.workload
    )
    result.script = outcome.script
    if outcome.script != "completed":
        result.summary += f"\nscenario script: {outcome.script} ({outcome.script_error})"
    return result


def _result(version: str, label: str, run_dir: Path, checked, summary: str, workload: dict) -> ChaosResult:  # noqa: ANN001
    return ChaosResult(
        version, label, run_dir, checked.valid, checked.error_counts, checked.report_path, checked.results_path,
        summary, workload, liveness=checked.liveness,
    )  # fmt: skip
