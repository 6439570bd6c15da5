"""What a run made: one result for every way of running (the CLI's `run`, `chaos_run`, a
scenario's run, `reproduce`, `bisect`), with the views each caller needs derived from it: the
verdict, the lost writes, the version table's row, the JUnit properties.

    result = run(spec)
    result.valid        # True, False or "unknown" (the checker's verdict); None: not checked
    result.unknown_reason   # why "unknown": "nothing-proved" or "control-plane-incomplete"
    result.anomalies    # {"lost-write": 191}: error anomalies and their instances
    result.report       # store/<name>/<time>/report.html
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_chaos.checkers.check import format_summary
from kafka_chaos.checkers.result import CONTROL_PLANE_INCOMPLETE, CheckResult, control_plane_skipped
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.history.events import NEMESIS, OK
from kafka_chaos.history.file import read_history
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.scenarios.base import LOSS
from kafka_chaos.workloads.runner import WorkloadSummary

LOST_WRITE = "lost-write"


@dataclass
class RunResult:
    """A run's directory, its spec, and what each phase made; it fills as the run goes, so a run
    that raised still says how far it got."""

    #: None when the run could not even make its directory.
    run_dir: Path | None
    spec: RunSpec
    #: The workload's summary; None when the workload phase did not finish (the cluster did not
    #: start, a crash).
    summary: WorkloadSummary | None = None
    #: The checker's result, when the run was checked.
    check: CheckResult | None = None
    #: A scenario's report (scenario.json): how its script went.
    scenario: dict[str, Any] | None = None
    #: Why the run could not be made (a scenario's run keeps this as an outcome of its table).
    error: str | None = None
    wall_s: float = 0.0

    # The verdict and its anomalies.

    @property
    def valid(self) -> bool | str | None:
        """The checker's verdict: True, False or "unknown" (nothing could be proved, or the control
        plane could not be fully checked: `unknown_reason`); None: not checked."""
        return self.check.valid if self.check is not None else None

    @property
    def unknown_reason(self) -> str | None:
        """Why the verdict is "unknown" (checkers/result.py UNKNOWN_REASONS); None when it is not."""
        return self.check.unknown_reason if self.check is not None and self.valid == "unknown" else None

    @property
    def exit_code(self) -> int | None:
        """The check's exit code (README.md, "Exit codes"); None: not checked."""
        return self.check.exit_code if self.check is not None else None

    @property
    def anomalies(self) -> dict[str, int]:
        """Error anomalies (../shared/anomalies.md names) and their instances; empty when valid."""
        return self.check.error_counts if self.check is not None else {}

    @property
    def lost(self) -> int:
        """Acknowledged writes lost (the lost-write anomaly's instances)."""
        return self.anomalies.get(LOST_WRITE, 0)

    @property
    def control_plane(self) -> dict[str, Any] | None:
        """results.json's `control_plane` object (checked or why not, how many rules of how many,
        which could not be and why, the reaction times); None: not checked at all. Its anomalies
        are among `anomalies`, by name."""
        return self.check.control_plane if self.check is not None else None

    @property
    def control_plane_status(self) -> str:
        """The control plane in one line: "ok", the anomalies found, "7 of 11 rules, <why>", or
        "not checked (<why>)" (CheckResult.control_plane_status)."""
        return self.check.control_plane_status if self.check is not None else "not checked"

    @property
    def report(self) -> Path | None:
        return self.check.report_path if self.check is not None else None

    @property
    def results(self) -> Path | None:
        return self.check.results_path if self.check is not None else None

    @property
    def liveness(self) -> dict[str, Any] | None:
        """Ok operations/s before, in and between faults, with a warning when the workload stalled
        (checkers/measures/liveness.py): how much a VALID verdict is worth. The check's, else the workload's."""
        if self.check is not None and self.check.liveness is not None:
            return self.check.liveness
        return self.summary.liveness if self.summary is not None else None

    @property
    def group_coverage(self) -> dict[str, Any] | None:
        """For how much of a group run its members held every key, some key (and the rest of
        checkers/measures/group_coverage.py's measures); None without group members."""
        return self.summary.group_coverage if self.summary is not None else None

    @property
    def stalled(self) -> bool:
        """The workload fell under half its pre-fault rate between faults."""
        return bool(self.liveness and self.liveness.get("warning"))

    @property
    def workload(self) -> dict[str, Any]:
        """The workload's counts and timings, as summary.json holds them."""
        return self.summary.to_json() if self.summary is not None else {}

    @property
    def faults(self) -> Counter:
        """Nemesis operations that succeeded, by name (kill, start, pause, ...), read from the history."""
        if self.run_dir is None:
            return Counter()
        events = read_history(RunDir(self.run_dir).history)
        return Counter(e["f"] for e in events if e["process"] == NEMESIS and e["type"] == OK)

    # What ran.

    @property
    def version(self) -> str:
        return self.spec.cluster.version

    @property
    def nemesis(self) -> str:
        """The nemesis in a few words: "kill,pause", "script", "scenario:NAME", or "none"."""
        return self.spec.nemesis.short() if self.spec.nemesis else "none"

    @property
    def script(self) -> str | None:
        """How a scenario's script ended ("completed" when it went as written)."""
        return self.scenario["outcome"] if self.scenario is not None else None

    @property
    def script_error(self) -> str | None:
        return self.scenario["error"] if self.scenario is not None else None

    # Views for each caller.

    def verdict(self) -> str:
        if self.check is None:
            return "NOT CHECKED"
        if self.valid is False:
            return "INVALID: " + ", ".join(f"{n} {c:,}" for n, c in self.anomalies.items())
        if self.unknown_reason == CONTROL_PLANE_INCOMPLETE:
            return f"UNKNOWN: control plane {self.control_plane_status}"
        return self.check.label

    def __repr__(self) -> str:
        # What pytest shows under a failed `assert result.valid`: the verdict and where to look,
        # under the name chaos tests know it by (runs/chaos.py).
        return f"ChaosResult(Kafka {self.version}, nemesis {self.nemesis}: {self.verdict()}; report {self.report})"

    def explain(self) -> str:
        """The anomaly summary and the report's path, for a failed test's output."""
        body = format_summary(self.check) if self.check is not None else f"run directory: {self.run_dir}"
        if self.scenario is not None and self.script != "completed":
            body += f"\nscenario script: {self.script} ({self.script_error})"
        return "\n".join([f"Kafka {self.version}, nemesis {self.nemesis}: {self.verdict()}", body])

    def properties(self, prefix: str = "kafka_chaos") -> list[tuple[str, str]]:
        """(name, value) pairs for the JUnit XML <properties> of the test."""
        valid = {True: "true", False: "false"}.get(self.valid, str(self.valid))  # type: ignore[arg-type]
        anomalies = ";".join(f"{n}={c}" for n, c in self.anomalies.items()) or "none"
        pairs = [
            ("version", self.version),
            ("nemesis", self.nemesis),
            ("valid", valid),
            ("anomalies", anomalies),
            ("lost", str(self.lost)),
            ("unknown_reason", self.unknown_reason or ""),
            ("exit_code", "" if self.exit_code is None else str(self.exit_code)),
            ("control_plane", self.control_plane_status),
            ("run_dir", str(self.run_dir)),
            ("report", str(self.report or "")),
        ]
        if self.liveness and self.liveness.get("first_fault_s") is not None:
            kept = self.liveness["ratios"]["ops_per_s"]["between_faults"]
            pairs += [
                ("kept_between_faults", "" if kept is None else str(kept)),
                ("stalled", str(self.stalled).lower()),
            ]
        return [(f"{prefix}.{k}", v) for k, v in pairs]

    # The version table's terms (reproduce, bisect): a scenario's run.

    @property
    def expected(self) -> str:
        """LOSS or SAFE: what the scenario expects of this version (LOSS for a run of no scenario)."""
        scenario = self.spec.scenario
        if scenario is None:
            return LOSS
        return scenario.expectation(KafkaVersion.parse(self.version), self.spec.cluster.metadata_version)

    @property
    def shows(self) -> tuple[str, ...]:
        """The anomalies that show the scenario's bug."""
        return self.spec.scenario.shows if self.spec.scenario is not None else (LOST_WRITE,)

    @property
    def observed(self) -> dict[str, int]:
        """The scenario's own findings (scenario.json's `observed`, Script.observe) and how many."""
        found: dict[str, int] = {}
        for item in (self.scenario or {}).get("observed", []):
            found[item["finding"]] = found.get(item["finding"], 0) + 1
        return found

    @property
    def reproduced(self) -> bool:
        """The scenario's bug was seen: one of its anomalies found by the checker, or one of its
        own findings observed by its script (any error anomaly for a scenario that names none: a
        measure, expected clean)."""
        if not self.shows:
            return bool(self.anomalies)
        return any(self.anomalies.get(name, 0) or self.observed.get(name, 0) for name in self.shows)

    @property
    def as_expected(self) -> bool:
        """The outcome the scenario expects, from a run whose script went as written: a script
        that stopped early (its fault could not be set up) proves nothing either way."""
        if self.error is not None or self.valid is None or self.script != "completed":
            return False
        if not self.reproduced and self.unchecked_shows:  # what would show the bug was not checked
            return False
        return self.reproduced == (self.expected == LOSS)

    @property
    def unchecked_shows(self) -> list[str]:
        """The anomalies that show the scenario's bug whose control-plane rule could not be checked
        in this run (results.json's `not_checked`): their absence proves nothing."""
        return [name for name in self.shows if name in control_plane_skipped(self.control_plane)]

    def table_row(self) -> dict[str, Any]:
        """One run of reproduce.json's table."""
        return {
            "scenario": self.spec.scenario.name if self.spec.scenario is not None else self.spec.run_name,
            "version": self.version,
            "metadata_version": self.spec.cluster.metadata_version,
            "expected": self.expected,
            "run_dir": str(self.run_dir) if self.run_dir is not None else "",
            "verdict": self.valid,
            "unknown_reason": self.unknown_reason,
            "control_plane": self.control_plane_status,
            "lost": self.lost,
            "anomalies": {n: c for n, c in self.anomalies.items() if n != LOST_WRITE},
            "observed": self.observed,
            "script": self.script or "",
            "script_error": self.script_error,
            "wall_s": self.wall_s,
            "error": self.error,
            "shows": self.shows,
            "reproduced": self.reproduced,
            "as_expected": self.as_expected,
        }
