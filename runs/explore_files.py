"""A campaign's files (runs/explore.py, whose Campaign each function reads): the disk policy of
its run directories, the table of runs and findings (explore.md, explore.json), the plot of
distinct states over time (states.svg), and a finding's script.

Disk policy, per run directory (docs/explore.md):
- ALL: a run that found an error anomaly keeps everything (history, evidence, the nodes' data and
  logs, report.html);
- EVIDENCE: a sampled run (one that reached a new state, one that failed to run, and 1 in
  explore.SAMPLE_EVERY of the others) keeps its history and control-plane evidence but not the
  nodes' data and logs (cluster/);
- SUMMARY: every other run keeps config.json, summary.json, results.json and states.json: what
  it ran, how it went, its verdict and the states it reached; a few kB.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from kafka_chaos.checkers.measures.states import State, state_text
from kafka_chaos.checkers.report.svg import Chart
from kafka_chaos.history.run_dir import CONFIG, RESULTS, RunDir
from kafka_chaos.history.run_dir import SUMMARY as SUMMARY_FILE
from kafka_chaos.nemesis.space import Move

#: The mixes of a campaign: explore's schedules, and today's random mix beside them (`--baseline`).
EXPLORE, BASELINE = "explore", "baseline"
MIXES = (EXPLORE, BASELINE)
ALL, EVIDENCE, SUMMARY = "all", "evidence", "summary"
STATES = "states.json"
KEPT_BY_SUMMARY = {CONFIG, SUMMARY_FILE, RESULTS, STATES}
TABLE_MD, TABLE_JSON, PLOT = "explore.md", "explore.json", "states.svg"
_SVG_STYLE = (
    "<style>svg{font:11px sans-serif}.grid{stroke:#eee}.frame{fill:none;stroke:#999}"
    ".title{font-size:13px;font-weight:600}</style>"
)


def write_states(run_dir: Path, states: frozenset[State] | set[State]) -> Path:
    """states.json: the run's features (checkers/measures/states.py), one line of text each."""
    path = run_dir / STATES
    path.write_text(json.dumps(sorted(state_text(s) for s in states), indent=1) + "\n")
    return path


def prune(run_dir: Path, policy: str) -> None:
    """Remove what `policy` does not keep of a run directory."""
    if policy == ALL or not run_dir.is_dir():
        return
    run = RunDir(run_dir)
    shutil.rmtree(run.cluster, ignore_errors=True)
    if policy == EVIDENCE:
        return
    for path in run_dir.iterdir():
        if path.name in KEPT_BY_SUMMARY:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _schedule(trial: dict[str, Any]) -> str:
    if trial.get("schedule") is None:
        return "random mix"
    chain = f"[{trial['chain']}] " if trial.get("chain") else ""  # a fresh draw's shape
    return chain + ("; ".join(Move.from_json(m).label() for m in trial["schedule"]) or "none")


def markdown(campaign: Any) -> str:
    """explore.md: the campaign, its findings, its runs, the states it reached."""
    c = campaign
    checked = sum(t["check_s"] for t in c.trials)
    share = checked / c.elapsed_s if c.elapsed_s else 0.0
    lines = [
        f"# explore: {c.cluster.describe()}, {c.workload.workload}",
        "",
        f"Seed {c.seed}; {c.runs(EXPLORE)} explore runs"
        + (f" and {c.runs(BASELINE)} baseline runs" if c.baseline is not None else "")
        + f" of {c.workload.time_limit:g} s in {c.elapsed_s / 60:.1f} min"
        + (" (interrupted)" if c.interrupted else "")
        + f"; checking took {checked:.0f} s ({share:.0%} of the campaign).",
        f"Faults: {', '.join(c.space.faults)}; roles: {', '.join(c.space.roles)}.",
        f"Distinct states: explore {len(c.seen[EXPLORE])}"
        + (f", baseline {len(c.seen[BASELINE])}" if c.baseline is not None else "")
        + f"; corpus {len(c.corpus)}. Plot: {PLOT}.",
        "",
        "## Findings",
        "",
    ]
    if c.findings:
        lines += ["| run | mix | anomalies | found at | script | reproduced |", "|---|---|---|---|---|---|"]
        for f in c.findings:
            rep = "-" if f["reproduced"] is None else f"{f['reproduced']}/5"
            script = f["script"] or "-"
            if f["script"] and not f.get("shrunk"):
                script += " (not shrunk)"
            names = ", ".join(f["anomalies"])
            lines.append(f"| {f['run']} | {f['mix']} | {names} | {f['found_s'] / 60:.1f} min | {script} | {rep} |")
    else:
        lines.append("None: no run found an error anomaly.")
    lines += [
        "",
        "## Runs",
        "",
        "| mix | # | schedule | verdict | states | new | check (s) | memory (MB) | kept | run directory |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for t in c.trials:
        verdict = t["error"] or (", ".join(t["anomalies"]) if t["anomalies"] else t["verdict"])
        memory = " + ".join(f"{v:g}" for v in t.get("memory_mb", {}).values()) or "-"
        lines.append(
            f"| {t['mix']} | {t['run']} | {_schedule(t)} | {verdict} | {t['states']} | {t['new']} | "
            f"{t['check_s']:g} | {memory} | {t.get('kept', '-')} | {t['run_dir'] or '-'} |"
        )
    lines += [
        "",
        "## Chain shapes",
        "",
        "The shape each fresh draw took, chosen by the depth toward a loss its runs reached (the",
        "deepest fraction of a progress ladder, 0 to 1): the fresh draws and the mutations of the",
        "corpus members that descend from them.",
        "",
        "| shape | runs | mean depth |",
        "|---|---|---|",
    ]
    for arm in c.chains.arms:
        mean = c.chains.mean(arm)
        lines.append(f"| {arm} | {c.chains.pulls.get(arm, 0)} | {'-' if mean is None else f'{mean:.2f}'} |")
    for mix in (EXPLORE, BASELINE) if c.baseline is not None else (EXPLORE,):
        lines += ["", f"## States reached ({mix})", ""]
        lines += [f"- {state_text(s)} (first: {run})" for s, run in sorted(c.seen[mix].items())] or ["None."]
    return "\n".join(lines) + "\n"


def table(campaign: Any) -> dict[str, Any]:
    """explore.json: the document of `--json`, with every run's row and every state."""
    return {
        **campaign.document(),
        "seed": campaign.seed,
        "elapsed_s": round(campaign.elapsed_s, 1),
        "space": campaign.space.to_json(),
        "trials": campaign.trials,
        "depth": campaign.depth,
        "findings_detail": campaign.findings,
        "states_reached": {m: sorted(state_text(s) for s in campaign.seen[m]) for m in MIXES},
    }


def plot(campaign: Any) -> str:
    """Distinct states over the campaign's minutes, one line per mix, findings marked."""
    mixes = (EXPLORE, BASELINE) if campaign.baseline is not None else (EXPLORE,)
    end = max([campaign.elapsed_s / 60, *(t["ended_s"] / 60 for t in campaign.trials), 0.1])
    most = max([1, *(t["seen"] for t in campaign.trials)])
    chart = Chart("distinct states reached", end, most * 1.1, "campaign minutes", "distinct states")
    for mix, colour in zip(mixes, ("#1f77b4", "#7f7f7f"), strict=False):
        points = [(0.0, 0.0)] + [(t["ended_s"] / 60, t["seen"]) for t in campaign.trials if t["mix"] == mix]
        chart.line(points, f"{mix} ({len(campaign.seen[mix])})", colour, dashed=mix == BASELINE)
    marks = [
        (f["found_s"] / 60, _seen_at(campaign, f), f"{f['mix']}: {', '.join(f['anomalies'])} ({f['run']})")
        for f in campaign.findings
    ]
    if marks:
        chart.marks(marks, "finding")
    return chart.render().replace(">", ">" + _SVG_STYLE, 1)


def _seen_at(campaign: Any, finding: dict[str, Any]) -> float:
    for t in campaign.trials:
        if t["run_dir"] == finding["run"]:
            return float(t["seen"])
    return 0.0


def write_all(campaign: Any) -> dict[str, Path]:
    """explore.md, explore.json and states.svg in the campaign's directory."""
    paths = {"md": campaign.dir / TABLE_MD, "json": campaign.dir / TABLE_JSON, "svg": campaign.dir / PLOT}
    paths["md"].write_text(markdown(campaign))
    paths["json"].write_text(json.dumps(table(campaign), indent=1, default=str) + "\n")
    paths["svg"].write_text(plot(campaign))
    return paths
