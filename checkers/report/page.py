"""report.html: one self-contained page (inline SVG and CSS, no network) to look at a run.

It shows the verdict, the anomalies with their evidence, operation counts and latencies (small
pandas tables), latency and throughput over time with fault windows shaded per fault type, the
unseen count over time, and an offset timeline for each anomalous key.
"""

from __future__ import annotations

import json
import urllib.parse
from html import escape
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import pandas as pd

from kafka_chaos.checkers.anomalies import BY_NAME, EVIDENCE_NAMES
from kafka_chaos.checkers.report import svg
from kafka_chaos.checkers.report.svg import PALETTE, Chart
from kafka_chaos.checkers.result import control_plane_skipped, describe_cycle
from kafka_chaos.checkers.tiered import format_reads, format_status

if TYPE_CHECKING:
    from kafka_chaos.checkers.report.series import Series
    from kafka_chaos.checkers.result import CheckResult

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px}
.verdict{display:inline-block;padding:4px 12px;border-radius:4px;color:#fff;font-weight:600}
.v-true{background:#2ca02c}.v-false{background:#d62728}.v-unknown{background:#7f7f7f}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f3f3f3}.warn{color:#a15c00}
svg.plot{display:block;margin:10px 0;font-size:11px}svg .grid{stroke:#eee}svg .frame{fill:none;stroke:#999}
svg .title{font-size:13px;font-weight:600}
.cycles svg.cycle{display:inline-block;margin-right:12px}
"""
# Proves in a browser test that the page's script ran; counts what it shows.
SCRIPT = """
document.addEventListener('DOMContentLoaded', function () {
  var plots = document.querySelectorAll('svg.plot');
  document.body.setAttribute('data-plots', String(plots.length));
  document.body.setAttribute('data-rendered', 'yes');
});
"""


#: Cycles drawn per anomaly (the rest are listed).
MAX_DRAWN = 4


def _table(df: pd.DataFrame) -> str:
    return df.to_html(index=False, border=0, escape=True, na_rep="")


def _verdict(result: CheckResult) -> str:
    label = {True: "valid", False: "invalid", "unknown": "unknown"}[result.valid]
    out = f'<span class="verdict v-{str(result.valid).lower()}">{label}</span>'
    if result.valid == "unknown":  # and why: nothing proved, or the control plane not fully checked
        out += f" ({escape(result.label.partition(': ')[2])})"
    return out


def _anomaly_tables(anomalies: dict[str, dict[str, Any]]) -> str:
    if not anomalies:
        return "<p>No anomalies.</p>"
    summary = pd.DataFrame(
        [
            {"anomaly": n, "count": a["count"], "errors": a["errors"], "holds when": BY_NAME[n].holds_when}
            for n, a in anomalies.items()
        ]
    )
    parts = [_table(summary)]
    for name, a in anomalies.items():
        if name in EVIDENCE_NAMES:  # facts of the control plane or the log starts, not keys and values
            parts.append(f'<h3 id="a-{escape(name)}">{escape(name)}: {a["count"]} ({a["errors"]} errors)</h3>')
            parts.append(_table(pd.DataFrame([{k: _cell(v) for k, v in ex.items()} for ex in a["examples"]])))
            continue
        rows = [
            {
                "key": ex["key"],
                "offsets": ", ".join("?" if v is None else str(v) for v in ex["offsets"]),
                "values": ", ".join(str(v) for v in ex["values"]),
                "operations (history index)": ", ".join(str(v) for v in ex["ops"]),
                "process": ex.get("process", ""),
                "allowed": "yes" if ex.get("allowed") else "",
            }
            for ex in a["examples"]
        ]
        parts.append(f'<h3 id="a-{escape(name)}">{escape(name)}: {a["count"]} ({a["errors"]} errors)</h3>')
        cycles = [ex for ex in a["examples"] if "edges" in ex]
        if cycles:  # transaction cycles: each drawn, with its edges in a line
            parts.append(
                _table(
                    pd.DataFrame(
                        [
                            {
                                "cycle (history indices)": describe_cycle(ex),
                                "allowed": "yes" if ex.get("allowed") else "",
                            }
                            for ex in cycles
                        ]
                    )
                )
            )
            parts.append('<div class="cycles">' + "".join(svg.cycle(ex) for ex in cycles[:MAX_DRAWN]) + "</div>")
            continue
        parts.append(_table(pd.DataFrame(rows)))
    return "".join(parts)


def _cell(v: Any) -> str:
    return json.dumps(v, separators=(", ", ": ")) if isinstance(v, (dict, list)) else str(v)


def _per_node(seconds: dict[str, float | None]) -> str:
    """ "kafka-2 5.8, kafka-3 not fenced": a fault's times per node, for a table cell."""
    return ", ".join(f"{node} {'not fenced' if t is None else t}" for node, t in sorted(seconds.items()))


def _control_plane(result: CheckResult, series: Series | None) -> str:
    """The control plane: what was checked (its status line, and each rule that was not, with
    why), and one timeline per node under the fault bands."""
    cp = result.control_plane
    skipped = control_plane_skipped(cp)
    if not cp or (not cp.get("checked") and not skipped):
        why = cp.get("why") if cp else "not checked"
        return f"<p>Not checked: {escape(str(why))}.</p>"
    out = [f'<p class="cp-status">{escape(result.control_plane_status)}</p>']
    if skipped:
        rows = [{"rule": k, "not checked because": v} for k, v in skipped.items()]
        out.append(_table(pd.DataFrame(rows)))
    if not cp.get("checked"):
        return "".join(out)
    if cp.get("faults"):
        rows = [
            {
                "fault": f"{f['f']} {', '.join(f['nodes'])}",
                "took effect (s)": f["took_effect_s"],
                "fenced after (s)": _per_node(f["fenced_after_s"]),
                "ISR shrinks": len(f["isr_shrinks"]),
                "next quorum leader after (s)": f.get("next_quorum_leader_after_s", ""),
                "live brokers fenced after (s)": _per_node(f.get("live_brokers_fenced_after_s") or {}),
            }
            for f in cp["faults"]
        ]
        out.append(_table(pd.DataFrame(rows)))
    out.append(_judged_windows(cp))
    if series is None:
        return "".join(out)
    faults = series.faults
    for node, tl in series.control.items():
        y_max = max([e for _, e in tl["epochs"]] + [lag for _, lag in tl["lag"]] + [1])
        fenced = [
            {"f": "fenced", "start": a, "end": b, "colour": "#000000"}
            for a, b in tl["fenced"] + ([(tl["fenced_since"], series.end_s)] if tl["fenced_since"] is not None else [])
        ]
        chart = Chart(
            f"{node}: quorum epoch and role, fencing, metadata lag", series.end_s, float(y_max), "time (s)", ""
        )
        chart.windows(faults).windows(fenced)
        chart.line(tl["epochs"], "epoch held", "#1f77b4").dots(tl["led"], "leader", "#d62728", r=2.2)
        chart.line(tl["lag"], "metadata lag (records)", "#2ca02c")
        out.append(chart.render())
    return "".join(out)


def _judged_windows(cp: dict[str, Any]) -> str:
    """Every timing window judged (results.json's `judged_windows`), found or a near miss, with the
    host stall added to its bound: a reader sees how close each came, and how much a loaded machine
    lengthened it."""
    stall = cp.get("host_stall") or {}
    if not stall.get("probe"):
        probe = "no host stall probe ran: each timing bound is judged with its setting alone"
    else:
        probe = f"host stall probe: {stall.get('wakes', 0)} wakes, measured until {stall.get('until_s')} s"
    rows = [
        {
            "rule": rule,
            "node": e.get("node", ""),
            "fault": e.get("fault", ""),
            "from (s)": e.get("count_from_s", e.get("session_from_s", e.get("from_s", e.get("took_effect_s", "")))),
            "deadline (s)": e.get("deadline_s", ""),
            "stall added (s)": e.get("stall_s", ""),
            "judged": "FOUND" if e.get("found") else ("not judged: " + e["why"] if e.get("why") else "near miss"),
        }
        for rule, entries in sorted((cp.get("judged_windows") or {}).items())
        for e in entries
    ]
    out = [f'<p class="host-stall">{escape(probe)}</p>']
    if rows:
        out.append('<h3 id="judged-windows">Timing windows judged</h3>' + _table(pd.DataFrame(rows)))
    return "".join(out)


def _stats_tables(stats: dict[str, Any]) -> str:
    if not stats:
        return ""
    ops = pd.DataFrame(stats["operations"]).T.fillna(0).astype(int).reset_index(names="f")
    lat = pd.DataFrame(stats["latency_ms"]).T.reset_index(names="f (ok, ms)")
    values = pd.DataFrame([stats["values"]])
    return (
        "<h2>Operations</h2>"
        + _table(ops)
        + "<h2>Latency of ok operations</h2>"
        + _table(lat)
        + "<h2>Values</h2>"
        + _table(values)
    )


def _liveness(live: dict[str, Any]) -> str:
    """Beside the throughput plot: what the plot shows, as numbers (checkers/measures/liveness.py)."""
    names = {
        "before_faults": "before the first fault (its steady second half)",
        "in_faults": "in fault windows",
        "between_faults": "between faults, after the first",
    }
    rows = []
    for stretch, label in names.items():
        ratio = {k: live["ratios"][k].get(stretch) if stretch != "before_faults" else None for k in live["ratios"]}
        rows.append(
            {
                "stretch": label,
                "seconds": live["seconds"][stretch],
                "ok ops/s": live["ops_per_s"][stretch],
                "ops vs before": "" if ratio["ops_per_s"] is None else f"{ratio['ops_per_s']:.0%}",
                "acknowledged writes/s": live["writes_per_s"][stretch],
                "writes vs before": "" if ratio["writes_per_s"] is None else f"{ratio['writes_per_s']:.0%}",
            }
        )
    warn = f'<p class="warn">{escape(live["warning"])}</p>' if live["warning"] else ""
    return '<h3 id="liveness">Liveness: did the workload keep its rate?</h3>' + warn + _table(pd.DataFrame(rows))


#: Members named in the ownership strip's legend (the rest share its colours).
MAX_MEMBERS_NAMED = 8


def _ownership(series: Series, coverage: dict[str, Any]) -> str:
    """Under the throughput plot: which member held each key when (a share group's: which
    member was handed its records when), with the fault bands (checkers/measures/
    group_coverage.py's and share_coverage.py's spans), and the coverage as numbers."""
    from kafka_chaos.checkers.measures.group_coverage import format_coverage

    spans = coverage.get("spans") or {}
    keys = sorted(spans, key=_key_order)
    members = sorted({p for held in spans.values() for p, _, _ in held}, key=str)
    colour = {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(members)}
    n = max(len(keys), 1)
    share = coverage.get("mode") == "share"
    title = (
        "Who was handed each key's records (a bar per member's deliveries; a gap: nobody)"
        if share
        else "Who held each key (a bar per member's hold; a gap: nobody)"
    )
    chart = Chart(
        title,
        series.end_s,
        n - 0.5,
        "time (s)",
        "key",
        y_min=-0.5,
        y_labels=[(n - 1 - i, k) for i, k in enumerate(keys)],
    ).windows(series.faults)
    chart.bars(
        [
            (a, b, n - 1 - i, colour[p], f"{k}: member {p} {a:.1f}-{b:.1f} s")
            for i, k in enumerate(keys)
            for p, a, b in spans[k]
        ]
    )
    for p in members[:MAX_MEMBERS_NAMED]:
        chart.key(colour[p], f"member {p}")
    if len(members) > MAX_MEMBERS_NAMED:
        chart.key("#ffffff", f"{len(members) - MAX_MEMBERS_NAMED} more")
    warn = f'<p class="warn">{escape(coverage["warning"])}</p>' if coverage.get("warning") else ""
    return chart.render() + f'<p id="group-coverage">{escape(format_coverage(coverage))}</p>' + warn


def _key_order(key: str) -> tuple[str, int]:
    """t/2 before t/10."""
    topic, _, part = key.rpartition("/")
    return (topic, int(part)) if part.isdigit() else (key, -1)


def _plots(series: Series, live: dict[str, Any] | None = None, coverage: dict[str, Any] | None = None) -> str:
    out = []
    lat = series.latency
    y_max = float(lat["p99"].max()) if len(lat) else 1.0
    chart = Chart("Latency of ok operations (p50 solid, p99 dashed)", series.end_s, y_max, "time (s)", "ms")
    chart.windows(series.faults)
    for i, (f, part) in enumerate(lat.groupby("f")):
        colour = PALETTE[i % len(PALETTE)]
        chart.line(list(zip(part["t"], part["p50"], strict=True)), f"{f} p50", colour)
        chart.line(list(zip(part["t"], part["p99"], strict=True)), f"{f} p99", colour, dashed=True)
    out.append(chart.render())
    thr = series.throughput
    y_max = float(thr["per_s"].max()) if len(thr) else 1.0
    chart = Chart("Throughput by outcome", series.end_s, y_max, "time (s)", "operations/s").windows(series.faults)
    colours = {"ok": "#2ca02c", "info": "#ff7f0e", "fail": "#d62728"}
    for typ, part in thr.groupby("type"):
        chart.line(list(zip(part["t"], part["per_s"], strict=True)), str(typ), colours.get(str(typ)))
    out.append(chart.render())
    if coverage is not None:
        out.append(_ownership(series, coverage))
    if live is not None:
        out.append(_liveness(live))
    un = series.unseen
    chart = Chart(
        "Acknowledged but not yet read (unseen)", series.end_s, float(un["unseen"].max() or 1), "time (s)", "values"
    )
    chart.windows(series.faults).line(list(zip(un["t"], un["unseen"], strict=True)), "unseen", "#d62728")
    out.append(chart.render())
    return "".join(out)


def _timelines(series: Series, anomalies: dict[str, dict[str, Any]]) -> str:
    out = []
    for key, kinds in series.timelines.items():
        frames = [df for df in kinds.values() if len(df)]
        y_max = max((float(df["offset"].max()) for df in frames), default=1.0)
        chart = Chart(f"Offsets of {key} over time", series.end_s, y_max, "time (s)", "offset").windows(series.faults)
        chart.dots(list(zip(kinds["read"]["t"], kinds["read"]["offset"], strict=True)), "read (ok poll)", "#1f77b4")
        chart.dots(
            list(zip(kinds["acknowledged"]["t"], kinds["acknowledged"]["offset"], strict=True)),
            "acknowledged",
            "#2ca02c",
            2.2,
        )
        marks = []
        # A value acknowledged twice (a duplicate) is marked at its first acknowledgement.
        acked = kinds["acknowledged"].drop_duplicates("value")
        ack = acked.set_index("value") if len(acked) else None
        for name, a in anomalies.items():
            if not a["errors"]:
                continue
            for ex in a["examples"]:
                if ex.get("key") != key:
                    continue
                for off, val in zip(ex["offsets"], ex["values"], strict=False):
                    if off is None:
                        continue
                    t = float(ack.loc[val, "t"]) if ack is not None and val in ack.index else 0.0
                    marks.append((t, float(off), f"{name}: value {val} at offset {off}"))
        if marks:
            chart.marks(marks, "anomaly")
        out.append(chart.render())
    return "".join(out)


def _root_cause(rc: dict[str, Any], series: Series | None) -> str:
    """Lost writes explained, then faults, controller decisions and lost writes on one clock."""
    out = []
    if rc.get("lost_write_groups"):
        rows = [
            {
                "key": g["key"],
                "lost writes": g["count"],
                "offsets": f"{g['offsets'][0]}..{g['offsets'][1]}",
                "acknowledged s": f"{g['acked_s'][0]:.1f}..{g['acked_s'][1]:.1f}",
                "cause": g.get("cause"),
                "explanation": g.get("text"),
            }
            for g in rc["lost_write_groups"]
        ]
        out += ["<h3>Every lost write, by the decisions that dropped it</h3>", _table(pd.DataFrame(rows))]
    if rc.get("lost_writes"):
        rows = [
            {
                "key": x["key"],
                "offsets": x.get("offsets"),
                "values": x.get("values"),
                "acknowledged at s": x["acked_s"],
                "cause": x.get("cause"),
                "explanation": x.get("text"),
            }
            for x in rc["lost_writes"]
        ]
        out += ["<h3>Lost writes and the decisions that dropped them</h3>", _table(pd.DataFrame(rows))]
    rows = []
    for f in series.faults if series is not None else []:
        until = f"until {f['end']:.1f} s" if f.get("end") is not None else "never healed"
        rows.append(
            {
                "t s": round(f["start"], 3),
                "source": "nemesis",
                "what": f["f"],
                "detail": f"{', '.join(f.get('nodes') or [])} {until}",
            }
        )
    for e in rc.get("timeline", []):
        if e["kind"] == "partition":
            detail = f"{e['key']}: leader {e['leader']} (epoch {e['leader_epoch']}), ISR {e['isr']}" + (
                " UNCLEAN" if e.get("unclean") else ""
            )
            what = f"partition {e['change']}"
        else:
            detail, what = f"broker {e.get('broker')} epoch {e.get('broker_epoch')}", f"broker {e['kind']}"
        rows.append({"t s": e["t_s"], "source": "controller", "what": what, "detail": detail})
    for x in rc.get("lost_writes", []):
        rows.append(
            {
                "t s": x["acked_s"],
                "source": "client",
                "what": "lost write acknowledged",
                "detail": f"{x['key']} offsets {x.get('offsets')} values {x.get('values')}",
            }
        )
    if rows:
        table = pd.DataFrame(rows).sort_values("t s", kind="stable")
        out += ["<h3>Timeline: faults, controller decisions, lost writes</h3>", _table(table)]
    divergent = []
    for key, c in rc.get("replicas", {}).items():
        clients = c.get("clients", {})
        divergent.append(
            {
                "key": key,
                "replicas": json.dumps(c.get("replicas")),
                "offsets where replicas differ": c.get("divergent_count", 0),
                "client reads rewritten": clients.get("rewritten", 0),
                "client reads gone": clients.get("gone", 0),
            }
        )
    if divergent:
        out += ["<h3>Replicas after the run, against what clients saw</h3>", _table(pd.DataFrame(divergent))]
    return "".join(out)


def _tiered(tiered: dict[str, Any]) -> str:
    """Where the final read's records came from, and each partition's log starts at the end."""
    out = [f"<p>{escape(line)}</p>" for line in (format_reads(tiered.get("reads")), format_status(tiered)) if line]
    rows = [
        {"partition": key, "where": f"broker {broker}", **{k: v for k, v in replica.items() if k != "error"}}
        for key, partition in sorted(tiered.get("partitions", {}).items())
        for broker, replica in sorted(partition.get("replicas", {}).items())
    ]
    rows += [
        {"partition": key, "where": "remote", "log_start": partition["remote"].get("lowest_offset")}
        for key, partition in sorted(tiered.get("partitions", {}).items())
        if partition.get("remote")
    ]
    if rows:
        out.append(_table(pd.DataFrame(rows)))
    return "".join(out)


def render(result: CheckResult, series: Series | None) -> str:
    run = PurePosixPath(urllib.parse.urlparse(str(result.history)).path).parent.name if result.history else ""
    title = f"kafka-chaos check: {run}"
    warnings = "".join(f'<p class="warn">warning: {escape(w)}</p>' for w in result.warnings)
    body = [
        f"<h1>{escape(title)}</h1>",
        f"<p>Verdict: {_verdict(result)} &nbsp; history: <code>{escape(str(result.history))}</code></p>",
        warnings,
        "<h2>Anomalies</h2>",
        _anomaly_tables(result.anomalies),
    ]
    if series is not None:
        body += ["<h2>Over time</h2>", _plots(series, result.liveness, result.group_coverage)]
        if series.timelines:
            body += ["<h2>Anomalous keys</h2>", _timelines(series, result.anomalies)]
    body += ['<h2 id="control-plane">Control plane</h2>', _control_plane(result, series)]
    if result.tiered is not None:
        body += ['<h2 id="tiered">Tiered storage</h2>', _tiered(result.tiered)]
    if result.root_cause:
        body += ["<h2>Root cause</h2>", _root_cause(result.root_cause, series)]
    body.append(_stats_tables(result.stats))
    data = escape(json.dumps({"valid": result.valid, "unknown_reason": result.unknown_reason, "errors": result.errors}))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>"
        f'<body data-results="{data}">' + "".join(body) + f"<script>{SCRIPT}</script></body></html>\n"
    )


def write(path: Path, result: CheckResult, series: Series | None) -> Path:
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(render(result, series), encoding="utf-8")
    tmp.replace(path)
    return path
