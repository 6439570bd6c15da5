"""A check's result: the verdict, every anomaly, the stats; what results.json holds.

Its own module so that what reads a result (the report, the runs, the pytest plugin) does not
import the pipeline that produced it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_chaos.checkers.anomalies import CONTROL_NAMES
from kafka_chaos.history.run_dir import REPORT

EXIT_CODES = {True: 0, False: 1, "unknown": 3}


@dataclass
class CheckResult:
    valid: bool | str
    anomalies: dict[str, dict[str, Any]]
    stats: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    history: Path | str | None = None  # a local file, or the URI Spark read
    results_path: Path | None = None
    report_path: Path | None = None
    #: Lost writes explained by the metadata timeline, when the run directory has one (root_cause.py).
    root_cause: dict[str, Any] | None = None
    #: Ok operations/s before, in and between faults (checkers/liveness.py).
    liveness: dict[str, Any] | None = None
    #: What was found of the control plane beside its anomalies, or why it was not checked
    #: (checkers/control_plane.py); None in a result written before it was checked.
    control_plane: dict[str, Any] | None = None
    #: For how much of a group run its members held the keys, with each key's held spans
    #: (checkers/group_coverage.py); None for a run without group members.
    group_coverage: dict[str, Any] | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.valid]

    @classmethod
    def load(cls, results: Path) -> CheckResult:
        """The result a check wrote (results.json), with the report beside it if there is one."""
        data = json.loads(Path(results).read_text(encoding="utf-8"))
        report = Path(results).with_name(REPORT)
        return cls(
            data["valid"],
            data["anomalies"],
            data["stats"],
            data.get("warnings", []),
            Path(data["history"]) if data.get("history") else None,
            Path(results),
            report if report.exists() else None,
            data.get("root_cause"),
            data.get("liveness"),
            data.get("control_plane"),
            data.get("group_coverage"),
        )

    @property
    def errors(self) -> list[str]:
        return list(self.error_counts)

    @property
    def error_counts(self) -> dict[str, int]:
        """Anomaly name -> its error instances, for the anomalies that have any."""
        return {n: int(a["errors"]) for n, a in self.anomalies.items() if a["errors"]}

    @property
    def control_plane_status(self) -> str:
        """ "not checked" (and why), "ok", or the control-plane anomalies found, with their counts."""
        cp = self.control_plane
        if not cp or not cp.get("checked"):
            why = cp.get("why") if cp else None
            return "not checked" + (f" ({why})" if why else "")
        found = {n: a["count"] for n, a in self.anomalies.items() if n in CONTROL_NAMES}
        return ", ".join(f"{n} {c}" for n, c in found.items()) if found else "ok"

    def brief(self) -> dict[str, Any]:
        """The verdict for machines (`--json`, the pytest plugin): error counts, not examples."""
        return {
            "valid": self.valid,
            "errors": self.error_counts,
            "values": self.stats.get("values"),
            "warnings": self.warnings,
            "liveness": self.liveness,
            "group_coverage": _without_spans(self.group_coverage),
            "control_plane": self.control_plane_status,
            "history": str(self.history) if self.history else None,
            "results": str(self.results_path) if self.results_path else None,
            "report": str(self.report_path) if self.report_path else None,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "anomalies": self.anomalies,
            "errors": self.errors,
            "stats": self.stats,
            "warnings": self.warnings,
            "liveness": self.liveness,
            "control_plane": self.control_plane,
            "group_coverage": self.group_coverage,
            "history": str(self.history) if self.history else None,
            **({"root_cause": self.root_cause} if self.root_cause is not None else {}),
        }


def _without_spans(coverage: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if coverage is None else {k: v for k, v in coverage.items() if k != "spans"}


def describe_cycle(example: dict[str, Any]) -> str:
    """A transaction cycle example (checkers/cycles.py) on one line: `12 -wr t/0-> 15 -ww t/1-> 12`
    (history indices)."""
    edges = example["edges"]
    if not edges:
        return ""
    parts = [str(edges[0]["from"])]
    for e in edges:
        label = e["kind"] + (f" {e['key']}" if e.get("key") else "")
        parts.append(f"-{label}-> {e['to']}")
    return " ".join(parts)


def describe_example(example: dict[str, Any]) -> str:
    """A control-plane example on one line: its facts as `name value`, lists and records short."""
    parts = []
    for k, v in example.items():
        if k == "allowed":
            continue
        text = json.dumps(v, separators=(",", ":")) if isinstance(v, (dict, list)) else str(v)
        parts.append(f"{k} {text if len(text) <= 80 else text[:77] + '...'}")
    return " ".join(parts)
