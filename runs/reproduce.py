"""`kafka-chaos reproduce`: a scenario on several Kafka versions, N runs each, as a version x
outcome table (Markdown on stdout and in reproduce.md, everything in reproduce.json).

The scenario may also be a nemesis script, a JSON list of timed steps (what `run
--nemesis-script` takes and shrinking writes: runs/shrink.py), played as a scenario that expects
the loss: `--like RUN_DIR` takes the cluster, its settings and the workload from that run's
config.json (the run that found it), `--shows` the anomalies that count (default: any error).

A version may carry the metadata version to format at: `3.5.2@3.4-IV0`. A row is as expected
when every run's outcome matches the scenario's expectation for that version: loss seen
where loss is expected, none where it is not. A scenario that never finds its bug fails. A run
that shows no bug but could not check a control-plane rule that would show it (results.json's
`not_checked`) proves nothing, and is not as expected.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kafka_chaos.checkers.anomalies import CONTROL_NAMES
from kafka_chaos.checkers.control_plane.causes import explain
from kafka_chaos.checkers.result import CONTROL_PLANE_INCOMPLETE, control_plane_skipped
from kafka_chaos.harness.config import FAULT_DETECTION
from kafka_chaos.harness.engine import docker_client
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.fsync_disk import PAGE_CACHE
from kafka_chaos.harness.images import ensure_image
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.history.reporter import Reporter
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.nemesis.schedule import load_script
from kafka_chaos.runs.result import LOST_WRITE, RunResult
from kafka_chaos.runs.scenario import run_once, scenario_spec
from kafka_chaos.scenarios.base import LOSS, Scenario
from kafka_chaos.scenarios.files import TAIL_S, steps_script
from kafka_chaos.scenarios.registry import get


def is_script(name_or_path: str) -> bool:
    """Whether the argument names a nemesis script: a .json file holding a list (a scenario file
    holds a mapping)."""
    path = Path(name_or_path)
    if path.suffix != ".json" or not path.is_file():
        return False
    try:
        return isinstance(json.loads(path.read_text()), list)
    except (OSError, ValueError):
        return False


def script_scenario(path: Path, like: Path | None = None, shows: tuple[str, ...] = ()) -> Scenario:
    """A nemesis script played as a scenario that expects its loss on every version, so that
    `reproduce` and `bisect` take a shrunk finding as they take a library scenario. `like`: a run
    directory (or its config.json) whose cluster, broker settings and workload to use; without
    one, three combined nodes with a nemesis run's fast failure detection and the safe workload."""
    steps = load_script(path)
    config = RunConfig()
    if like is not None:
        run_dir = like.parent if like.name == "config.json" else like
        config = RunConfig.load(run_dir)
        if not config.known:
            raise UsageError(f"--like {like}: no config.json of a run there")
    end = max((st.at + (st.hold or 0) for st in steps), default=0.0)
    workload = dict(config.workload)
    workload["time_limit"] = max(float(workload.get("time_limit") or 0), end + TAIL_S + 30.0)
    shape = config.shape or {"brokers": 3, "controllers": 0}
    return Scenario(
        name=path.stem,
        story=f"The nemesis script {path}" + (f", on the cluster and workload of {like}" if like else ""),
        script=steps_script(steps),
        controllers=int(shape.get("controllers") or 0),
        brokers=int(shape.get("brokers") or 3),
        broker_config={str(k): str(v) for k, v in (config.broker_config or FAULT_DETECTION).items()},
        workload=workload,
        metadata_version=config.metadata_version,
        quorum=config.quorum,
        disk=config.disk or PAGE_CACHE,
        expect=lambda version, mv: LOSS,
        shows=shows,
    )


def scenario_of(name_or_path: str, like: Path | None = None, shows: tuple[str, ...] = ()) -> Scenario:
    """A library scenario, a scenario file, or a nemesis script (`script_scenario`); `like` and
    `shows` go with a script only."""
    if is_script(name_or_path):
        return script_scenario(Path(name_or_path), like, shows)
    if like is not None or shows:
        raise UsageError("--like and --shows go with a nemesis script (a JSON list of steps), not a scenario")
    return get(name_or_path)


@dataclass(frozen=True)
class Target:
    version: str
    metadata_version: str | None = None

    @property
    def label(self) -> str:
        return self.version + (f" @ {self.metadata_version}" if self.metadata_version else "")


def parse_targets(text: str) -> list[Target]:
    targets = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        version, _, mv = item.partition("@")
        KafkaVersion.parse(version)  # UsageError for a malformed one
        targets.append(Target(version.strip(), mv.strip() or None))
    if not targets:
        raise UsageError("--kafka needs at least one version, e.g. 3.4.1,3.5.2")
    return targets


@dataclass
class Row:
    target: Target
    expected: str
    runs: list[RunResult] = field(default_factory=list)

    @property
    def reproduced(self) -> int:
        return sum(r.reproduced for r in self.runs)

    @property
    def as_expected(self) -> bool:
        return bool(self.runs) and all(r.as_expected for r in self.runs)

    def verdicts(self) -> str:
        counts: dict[str, int] = {}
        for r in self.runs:
            v = "error" if r.error else {True: "valid", False: "invalid"}.get(r.valid, str(r.valid))  # type: ignore[arg-type]
            if r.unknown_reason == CONTROL_PLANE_INCOMPLETE:
                v = "unknown (control plane incomplete)"
            counts[v] = counts.get(v, 0) + 1
        return ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))

    def time_to_reproduce(self) -> float | None:
        times = [r.wall_s for r in self.runs if r.reproduced]
        return round(statistics.median(times), 1) if times else None

    def other_anomalies(self) -> dict[str, int]:
        """The error anomalies other than lost writes, and the scenario's own findings
        (Script.observe), summed over the runs."""
        total: dict[str, int] = {}
        for r in self.runs:
            for name, n in [*r.anomalies.items(), *r.observed.items()]:
                if name != LOST_WRITE:
                    total[name] = total.get(name, 0) + n
        return total

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.target.version,
            "metadata_version": self.target.metadata_version,
            "expected": self.expected,
            "runs": [r.table_row() for r in self.runs],
            "reproduced": self.reproduced,
            "reproduction_rate": self.reproduced / len(self.runs) if self.runs else None,
            "median_lost": statistics.median([r.lost for r in self.runs]) if self.runs else None,
            "time_to_reproduce_s": self.time_to_reproduce(),
            "other_anomalies": self.other_anomalies(),
            "as_expected": self.as_expected,
        }


def markdown(scenario: Scenario, rows: list[Row]) -> str:
    lines = [
        f"## {scenario.name}",
        "",
        "| Kafka | expected | verdicts | lost writes (median, max) | other anomalies | reproduced | "
        "time to reproduce (median) | as expected |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lost = [r.lost for r in row.runs]
        others = ", ".join(f"{n} {c}" for n, c in sorted(row.other_anomalies().items())) or "none"
        ttr = row.time_to_reproduce()
        lines.append(
            f"| {row.target.label} | {row.expected} | {row.verdicts()} | "
            f"{statistics.median(lost) if lost else '-'}, {max(lost) if lost else '-'} | {others} | "
            f"{row.reproduced}/{len(row.runs)} | {f'{ttr:g} s' if ttr is not None else '-'} | "
            f"{'yes' if row.as_expected else 'NO'} |"
        )
    causes = [
        f"- {row.target.label}, run {n}: `{name}`: {explain(name, found['examples'][0])}"
        for row in rows
        for n, r in enumerate(row.runs, 1)
        if r.check is not None
        for name, found in r.check.anomalies.items()
        if name in CONTROL_NAMES and found.get("errors") and found.get("examples")
    ]
    if causes:
        lines += ["", "Control-plane anomalies, the first example of each run, from its records and samples:", *causes]
    incomplete = [
        f"- {row.target.label}, run {n}: control plane {r.control_plane_status}"
        + (f" (not checked: {', '.join(r.unchecked_shows)})" if r.unchecked_shows else "")
        for row in rows
        for n, r in enumerate(row.runs, 1)
        if control_plane_skipped(r.control_plane)
    ]
    if incomplete:
        lines += ["", "Runs whose control plane could not be fully checked:", *incomplete]
    failed = [r for row in rows for r in row.runs if r.error or r.script_error]
    if failed:
        lines += ["", "Runs that did not go as scripted:"]
        lines += [f"- {r.version}: {r.error or r.script_error} ({r.run_dir})" for r in failed]
    return "\n".join(lines) + "\n"


def prepare_images(targets: list[Target], reporter: Reporter) -> None:
    """Build (or find) every version's image first: its time is not a run's, and a version that
    does not exist stops the command (exit 2) before anything runs."""
    client = docker_client()
    for version in dict.fromkeys(t.version for t in targets):
        ensure_image(client, KafkaVersion.parse(version), reporter)


def reproduce(
    scenario: Scenario,
    targets: list[Target],
    runs: int,
    store: Path,
    reporter: Reporter = print,
    spark_master: str | None = None,
    out: Path | None = None,
    client: dict[str, str] | None = None,
) -> tuple[list[Row], Path]:
    """`runs` runs of `scenario` on each target, in order; the table is also written into `out`.
    `client`: the client library the workload speaks (`client`, `client_version`), over the
    scenario's."""
    if runs < 1:
        raise UsageError(f"--runs must be at least 1, got {runs}")
    for target in targets:  # a release the scenario cannot be told on is bad input before any image is built
        scenario_spec(scenario, target.version, store, target.metadata_version, client=client).validate()
    prepare_images(targets, reporter)  # a version with no artifacts is bad input before any run starts
    out = out or store / scenario.name / f"reproduce-{datetime.now().strftime('%Y%m%dT%H%M%S')}"
    rows = []
    for target in targets:
        row = Row(target, scenario.expectation(KafkaVersion.parse(target.version), target.metadata_version))
        rows.append(row)
        for n in range(1, runs + 1):
            reporter(f"{scenario.name} on Kafka {target.label}: run {n} of {runs}")
            spec = scenario_spec(
                scenario, target.version, store, target.metadata_version, spark_master=spark_master, client=client
            )
            outcome = run_once(spec, reporter)
            row.runs.append(outcome)
            seen = "reproduced" if outcome.reproduced else "not reproduced"
            seen_here = {**outcome.anomalies, **outcome.observed}
            found = ", ".join(f"{n} {c}" for n, c in sorted(seen_here.items())) or "no anomaly"
            reporter(f"  {seen} ({found}), verdict {outcome.valid}, {outcome.wall_s:g} s")
            if control_plane_skipped(outcome.control_plane):
                reporter(f"  control plane: {outcome.control_plane_status}")
            reporter(f"  run directory: {outcome.run_dir}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "reproduce.md").write_text(markdown(scenario, rows))
    (out / "reproduce.json").write_text(
        json.dumps({"scenario": scenario.name, "runs_per_version": runs, "rows": [r.to_json() for r in rows]}, indent=2)
        + "\n"
    )
    return rows, out
