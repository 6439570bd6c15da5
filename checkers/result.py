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

UNKNOWN = "unknown"
#: Why a verdict is "unknown" (results.json's `unknown_reason`, ../shared/anomalies.md "Verdict"
#: step 2): nothing could be proved (no acknowledged send or no ok poll), or the run's control-plane
#: evidence was expected and a control-plane rule could not be checked; or (kafka-chaos's own) a
#: tiered run's log starts could not be judged (checkers/tiered.py). The first wins when several hold.
NOTHING_PROVED, CONTROL_PLANE_INCOMPLETE = "nothing-proved", "control-plane-incomplete"
TIERED_INCOMPLETE = "tiered-incomplete"
UNKNOWN_REASONS = (NOTHING_PROVED, CONTROL_PLANE_INCOMPLETE, TIERED_INCOMPLETE)
#: Each verdict's exit code (README.md, "Exit codes"): an expected rule not checked is 4, whichever.
EXIT_CODES = {True: 0, False: 1, NOTHING_PROVED: 3, CONTROL_PLANE_INCOMPLETE: 4, TIERED_INCOMPLETE: 4}
#: The verdict in words, for the summary and the pytest plugin.
LABELS = {
    True: "VALID",
    False: "INVALID: anomalies found",
    NOTHING_PROVED: "UNKNOWN: nothing could be proved",
    CONTROL_PLANE_INCOMPLETE: "UNKNOWN: the control plane could not be fully checked",
    TIERED_INCOMPLETE: "UNKNOWN: the tiered run's log start offsets could not be checked",
}


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
    #: Ok operations/s before, in and between faults (checkers/measures/liveness.py).
    liveness: dict[str, Any] | None = None
    #: What was found of the control plane beside its anomalies, or why it was not checked
    #: (checkers/control_plane/judge.py); None in a result written before it was checked.
    control_plane: dict[str, Any] | None = None
    #: For how much of a group run its members held the keys, with each key's held spans
    #: (checkers/measures/group_coverage.py); None for a run without group members.
    group_coverage: dict[str, Any] | None = None
    #: Why `valid` is "unknown" (UNKNOWN_REASONS); None when it is not.
    unknown_reason: str | None = None
    #: A share group's deliveries: per value, redeliveries by cause, archived, never
    #: acknowledged (checkers/share/summary.py); None for a run without share consumers.
    share: dict[str, Any] | None = None
    #: A tiered run's log starts at its end and whether `log-start-moved` could judge them
    #: (checkers/tiered.py); None for a run that is not tiered.
    tiered: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.valid == UNKNOWN and self.unknown_reason is None:
            self.unknown_reason = NOTHING_PROVED  # the only reason before the control plane's

    @property
    def outcome(self) -> bool | str:
        """The verdict with an unknown one's reason: True, False, or one of UNKNOWN_REASONS."""
        return self.unknown_reason if self.valid == UNKNOWN and self.unknown_reason else self.valid

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]

    @property
    def label(self) -> str:
        """The verdict in words: "VALID", "INVALID: anomalies found", "UNKNOWN: ..."."""
        return LABELS[self.outcome]

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
            data.get("unknown_reason"),  # absent from a result written before it was kept
            data.get("share"),
            data.get("tiered"),
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
        """The control plane in one line: "not checked" (and why); "ok" when every rule ran and
        none found anything; else the anomalies found with their counts, and "7 of 11 rules, <why
        the others were not>" when some could not be checked."""
        cp = self.control_plane or {}
        if not cp.get("checked") and not cp.get("expected"):
            why = cp.get("why")
            return "not checked" + (f" ({why})" if why else "")
        found = ", ".join(f"{n} {a['count']}" for n, a in self.anomalies.items() if n in CONTROL_NAMES)
        skipped = control_plane_skipped(cp)
        if not skipped:
            return found or "ok"
        reasons = "; ".join(dict.fromkeys(skipped.values()))
        part = f"{len(CONTROL_NAMES) - len(skipped)} of {len(CONTROL_NAMES)} rules, {reasons}"
        return f"{found}; {part}" if found else part

    def brief(self) -> dict[str, Any]:
        """The verdict for machines (`--json`, the pytest plugin): error counts, not examples."""
        return {
            "valid": self.valid,
            "unknown_reason": self.unknown_reason,
            "exit_code": self.exit_code,
            "errors": self.error_counts,
            "values": self.stats.get("values"),
            "warnings": self.warnings,
            "liveness": self.liveness,
            "group_coverage": _without_spans(self.group_coverage),
            "share": self.share,
            "control_plane": self.control_plane_status,
            "history": str(self.history) if self.history else None,
            "results": str(self.results_path) if self.results_path else None,
            "report": str(self.report_path) if self.report_path else None,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "unknown_reason": self.unknown_reason,
            "anomalies": self.anomalies,
            "errors": self.errors,
            "stats": self.stats,
            "warnings": self.warnings,
            "liveness": self.liveness,
            "control_plane": self.control_plane,
            "group_coverage": self.group_coverage,
            **({"share": self.share} if self.share is not None else {}),
            **({"tiered": self.tiered} if self.tiered is not None else {}),
            "history": str(self.history) if self.history else None,
            **({"root_cause": self.root_cause} if self.root_cause is not None else {}),
        }


def control_plane_skipped(cp: dict[str, Any] | None) -> dict[str, str]:
    """The control-plane rules that could not be checked, with why: results.json's `not_checked`;
    every rule, with the reason, when the whole check could not run though its evidence was expected."""
    if not cp:
        return {}
    if not cp.get("checked"):
        why = str(cp.get("why") or "not checked")
        return {name: why for name in CONTROL_NAMES} if cp.get("expected") else {}
    return {str(k): str(v) for k, v in (cp.get("not_checked") or {}).items()}


def with_coverage(cp: dict[str, Any], expected: bool) -> dict[str, Any]:
    """results.json's `control_plane` object with whether the run expected its control plane
    checked (`expected`) and how many of the rules were (`rules_checked` of `rules`); a run that
    expected it and could not check it at all lists every rule in `not_checked`. A run that did
    not expect it and was not checked keeps its two keys (`checked`, `why`)."""
    if not cp.get("checked") and not expected:
        return cp
    skipped = control_plane_skipped({**cp, "expected": expected})
    out = {**cp, "expected": expected, "rules": len(CONTROL_NAMES)}
    out["rules_checked"] = len(CONTROL_NAMES) - len(skipped) if cp.get("checked") else 0
    if not cp.get("checked"):
        out["not_checked"] = skipped
    return out


def _without_spans(coverage: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if coverage is None else {k: v for k, v in coverage.items() if k != "spans"}


def describe_cycle(example: dict[str, Any]) -> str:
    """A transaction cycle example (checkers/txn/cycles.py) on one line: `12 -wr t/0-> 15 -ww t/1-> 12`
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
