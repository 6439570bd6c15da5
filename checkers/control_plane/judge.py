"""The control plane checked: the run directory's `control-plane/` evidence against the rules of
../shared/anomalies.md ("Control plane"), on the history's clock.

On Spark (`queries`, collected with the check's other small results in its one action): every
node's decoded metadata log is one DataFrame, replayed per node by applyInPandas (the record
rules, metadata_rules.py) and compared offset by offset below the quorum's final high watermark
(`metadata-divergence`); each node's quorum views are joined with the history's wipes
(`quorum-epoch-regression`: a wiped node starts again from nothing) and grouped by epoch with the
logs' LeaderChange records (`quorum-double-leader`). In the driver (`judge`), over the collected
samples (a few thousand rows): the rows of rules.py, run in turn (the fault windows of
node_faults.py, quorum_rules.py, fault_timing.py), and the `control_plane` object of results.json.

A run directory without the evidence is checked as before: `absent` says why, and the summary
says "control plane: not checked".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_chaos.checkers.anomalies import CONTROL_NAMES, Fact, is_error
from kafka_chaos.checkers.control_plane import fault_timing, lines, metadata_rules, node_faults, quorum_rules
from kafka_chaos.checkers.control_plane import rules as cp_rules
from kafka_chaos.history.events import NEMESIS
from kafka_chaos.history.evidence import RECORD_SCHEMA, SAMPLE_SCHEMA, VIEW_SCHEMA, read_gaps
from kafka_chaos.history.kraft import KAFKA_TIMING_DEFAULTS as DEFAULTS
from kafka_chaos.history.kraft import SLACK_S
from kafka_chaos.history.metadata_replay import bumps_on_isr_shrink
from kafka_chaos.history.nodes import NodesFile
from kafka_chaos.history.quorum_view import CLAIMS_TO_LEAD_SQL
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.history.stall import covered_until, read_wakes

#: How long after a heal completed its epochs are counted (unless the next nemesis operation comes first).
HEAL_SETTLE_S = 10.0
MAX_EXAMPLES = 10
#: How many judged instances of each timing rule results.json lists (findings and near misses)
MAX_WINDOWS = 50


@dataclass
class Evidence:
    """A run directory's control-plane files, and the run's settings the rules use."""

    run: RunDir
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    voter_ids: list[int] = field(default_factory=list)
    settings: dict[str, int] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # setting -> where its value came from
    metadata_version: str | None = None
    kafka_version: str | None = None
    logs: dict[str, Path] = field(default_factory=dict)
    quorum: str = "static"  # or "dynamic" (KIP-853): a wiped voter comes back an observer
    #: evidence the run expected and could not collect whole (control-plane/gaps.json): kind -> why
    gaps: dict[str, str] = field(default_factory=dict)
    #: the host stall probe's wakes (history/stall.py), read once; None: the run had no probe
    wakes: list[int] | None = None

    @property
    def bump_on_shrink(self) -> bool:
        return bumps_on_isr_shrink(self.metadata_version, self.kafka_version)

    @property
    def has_views(self) -> bool:
        return self.run.quorum_views.is_file()

    @property
    def has_replication(self) -> bool:
        return self.run.quorum_replication.is_file()


def absent(run_dir: Path | None) -> str | None:
    """Why a run cannot have its control plane checked (None: it can)."""
    if run_dir is None:
        return "the history is not in a local run directory"
    if not RunDir(run_dir).control_plane.is_dir():
        return "no control-plane evidence in the run directory"
    return None


def evidence(run_dir: Path, config: RunConfig) -> Evidence:
    """The run directory's control-plane evidence, with the run's config.json (`config`, read once
    by the check)."""
    run = RunDir(run_dir)
    try:
        described = NodesFile.read(run.control_plane_nodes)
    except (OSError, ValueError):  # missing or not nodes.json: every node and setting unknown from it
        described = NodesFile({}, [])
    broker_config = config.broker_config
    given = described.settings
    settings, sources = {}, {}
    for name, default in DEFAULTS.items():
        for source, values in (("nodes.json", given), ("config.json", broker_config)):
            if name in values:
                try:
                    settings[name], sources[name] = int(values[name]), source
                    break
                except (TypeError, ValueError):
                    continue
        else:
            settings[name], sources[name] = default, "Kafka's default"
    return Evidence(
        run,
        {alias: node.to_json() for alias, node in described.nodes.items()},
        list(described.voters),
        settings,
        sources,
        config.metadata_version,
        config.kafka_version,
        run.metadata_logs() if run.control_plane.is_dir() else {},
        described.quorum,
        read_gaps(run),
        read_wakes(run),
    )


def _paths(ev: Evidence) -> dict[str, list[Path]]:
    """Each kind of evidence's files (checkers/control_plane/lines.py)."""
    return {
        cp_rules.VIEWS: [ev.run.quorum_views],
        cp_rules.REPLICATION: [ev.run.quorum_replication],
        cp_rules.METADATA: list(ev.logs.values()),
    }


def _records(recs: DataFrame) -> DataFrame:
    """Every node's records, with the reference mark (the longest log: the timing rules read its states)."""
    return recs.selectExpr(
        "*",
        "xxhash64(coalesce(type, ''), coalesce(CAST(version AS STRING), ''), coalesce(data, ''), coalesce(raw, ''),"
        " coalesce(CAST(batch_epoch AS STRING), '')) AS fingerprint",
        "max(`offset`) OVER (PARTITION BY node) AS node_end",
    ).selectExpr(
        "*",
        "node = first_value(node) OVER (ORDER BY node_end DESC, node"
        " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS ref",
    )


def queries(ops: DataFrame, micro: DataFrame, ev: Evidence) -> dict[str, DataFrame]:
    """The control plane's Spark queries, for the check's one collect (checkers/parts.py). Of
    `micro` (the history's sends and polls), only the ok sends' partitions are read: when the first
    write after each fault came (`send_queries`); every other rule reads the evidence and the
    nemesis's operations alone."""
    out: dict[str, DataFrame] = {}
    malformed: list[DataFrame] = []  # each file's lines that place nothing (lines.py)
    samples = None
    if ev.has_replication:
        samples, bad = lines.read(ops, [ev.run.quorum_replication], SAMPLE_SCHEMA, cp_rules.REPLICATION)
        malformed.append(bad)
        out["cp_samples"] = samples.select("time", "leader_id", "leader_epoch", "high_watermark", "error")
        out["cp_members"] = samples.where("error IS NULL").selectExpr(
            "time",
            "high_watermark",
            "leader_id",
            "inline(concat(coalesce(voters, array()), coalesce(observers, array())))",
        )
    views = None
    if ev.has_views:
        views, bad = lines.read(ops, [ev.run.quorum_views], VIEW_SCHEMA, cp_rules.VIEWS)
        malformed.append(bad)
        out["cp_views"] = views.select("time", "node", "node_id", "leader_id", "leader_epoch", "error", "written")
        out["cp_regressions"] = epoch_regressions(views, ops)
    claims = []
    if views is not None:
        claims.append(
            views.where(CLAIMS_TO_LEAD_SQL).selectExpr(
                "leader_epoch AS epoch", "leader_id AS leader", "node", "time", "'quorum-state' AS source"
            )
        )
    if ev.logs:
        parsed, bad = lines.read(ops, list(ev.logs.values()), RECORD_SCHEMA, cp_rules.METADATA, node_from_file=True)
        malformed.append(bad)
        recs = _records(parsed)
        out["cp_replay"] = recs.groupBy("node").applyInPandas(
            metadata_rules.node_pass(ev.bump_on_shrink), metadata_rules.OUT
        )
        out["cp_leader_changes"] = recs.where(
            "ref AND upper(regexp_replace(type, '_', '')) LIKE 'LEADERCHANGE%' AND batch_epoch IS NOT NULL"
        ).selectExpr(
            "batch_epoch AS epoch",
            "CAST(get_json_object(data, '$.leaderId') AS INT) AS leader",
            "`offset`",
            "time",
        )
        out["cp_logs"] = recs.groupBy("node").agg(
            F.count("*").alias("records"), F.max("offset").alias("end"), F.max(F.col("ref").cast("int")).alias("ref")
        )
        claims.append(
            recs.where("upper(regexp_replace(type, '_', '')) LIKE 'LEADERCHANGE%' AND batch_epoch IS NOT NULL")
            .selectExpr(
                "batch_epoch AS epoch",
                "CAST(get_json_object(data, '$.leaderId') AS INT) AS leader",
                "node",
                "time",
                "concat('LeaderChange at offset ', `offset`) AS source",
            )
            .where("leader IS NOT NULL")
        )
        if samples is not None:
            out["cp_divergence"] = divergence(recs, samples)
    out.update(send_queries(ops, micro))
    if claims:
        every = claims[0] if len(claims) == 1 else claims[0].unionByName(claims[1])
        # Each leader's first claim of the epoch: the example shows both sides, however many times
        # one of them was sampled before the other claimed.
        firsts = every.groupBy("epoch", "leader").agg(
            F.expr("min_by(named_struct('time', time, 'leader', leader, 'node', node, 'source', source), time)").alias(
                "first"
            )
        )
        out["cp_double"] = (
            firsts.groupBy("epoch")
            .agg(F.count("*").alias("leaders"), F.expr("slice(array_sort(collect_list(first)), 1, 20)").alias("claims"))
            .where("leaders > 1")
        )
    if malformed:
        out["cp_malformed"] = lines.union(malformed)
    return out


def send_queries(ops: DataFrame, micro: DataFrame) -> dict[str, DataFrame]:
    """When the first ok send to each partition invoked at or after each nemesis operation took
    effect completed (stale-isr-member counts from there: ../shared/anomalies.md, amended
    2026-12-06): exactly, within the operation's own second (`cp_first_sends`), and the first of
    every second (`cp_send_seconds`) for the later ones, without a range join over every send."""
    sent = micro.where("kind = 'send' AND `type` = 'ok'").select("key", "op").distinct()
    timed = ops.where("`type` = 'ok' AND itime IS NOT NULL AND ctime IS NOT NULL").select("op", "itime", "ctime")
    sends = sent.join(timed, "op").selectExpr("key", "itime", "ctime", "floor(itime / 1000000000) AS second")
    marks = ops.where(f"process = '{NEMESIS}' AND `type` = 'ok' AND ctime IS NOT NULL").selectExpr(
        "ctime AS mark", "floor(ctime / 1000000000) AS second"
    )
    first = (
        sends.join(F.broadcast(marks.distinct()), "second")
        .where("itime >= mark")
        .groupBy("key", "mark")
        .agg(F.expr("min_by(ctime, itime)").alias("done"))
    )
    seconds = sends.groupBy("key", "second").agg(F.expr("min_by(ctime, itime)").alias("done"))
    return {"cp_first_sends": first, "cp_send_seconds": seconds}


def divergence(recs: DataFrame, samples: DataFrame) -> DataFrame:
    """Offsets at which two nodes' logs hold different records, below the quorum's high watermark
    in the last replication sample that has one (the contract's "at the end of the run"): every
    node's log is compared up to there; which differences count (the same epoch, or a node that
    fetched past the offset from the final leader) is decided in the driver (rules.divergence)."""
    good = samples.where("error IS NULL AND high_watermark IS NOT NULL")
    final_hw = good.selectExpr("max_by(high_watermark, time) AS final_hw")
    below = recs.crossJoin(F.broadcast(final_hw)).where("`offset` < final_hw")
    return (
        below.groupBy("offset")
        .agg(
            F.expr("size(collect_set(fingerprint))").alias("kinds"),
            F.first("final_hw").alias("final_hw"),
            F.expr(
                "array_sort(collect_list(named_struct('node', node, 'fingerprint', fingerprint, 'type', type,"
                " 'data', substr(coalesce(data, raw), 1, 200), 'batch_epoch', batch_epoch)))"
            ).alias("records"),
        )
        .where("kinds > 1")
        .orderBy("offset")
    )


def epoch_regressions(views: DataFrame, ops: DataFrame) -> DataFrame:
    """Views whose epoch is below the node's previous one since the node was last wiped: each view
    joined with the history's wipes of its node (a wiped node starts again from nothing; a view
    taken while the wipe ran is of neither life)."""
    wipe = f"get_json_object(nvalue, '$.effect') = '{node_faults.WIPE}'"
    wipes = ops.where(f"process = '{NEMESIS}' AND {wipe} AND `type` != 'fail'").selectExpr(
        "explode(from_json(get_json_object(nvalue, '$.nodes'), 'array<string>')) AS wiped",
        "itime AS wiped_at",
        "coalesce(ctime, itime) AS wipe_done",
    )
    held = views.where("error IS NULL AND leader_epoch IS NOT NULL").select("time", "node", "leader_epoch")
    since = (
        held.join(wipes, (held["node"] == wipes["wiped"]) & (wipes["wiped_at"] <= held["time"]), "left")
        .groupBy("time", "node", "leader_epoch")
        .agg(
            F.coalesce(F.max("wiped_at"), F.lit(-1)).alias("since"),
            F.expr("max(CAST(time <= wipe_done AS INT))").alias("during"),
        )
        .where("during IS NULL OR during = 0")
    )
    return since.selectExpr(
        "time",
        "node",
        "leader_epoch",
        "lag(leader_epoch) OVER (PARTITION BY node, since ORDER BY time) AS previous",
        "lag(time) OVER (PARTITION BY node, since ORDER BY time) AS previous_time",
    ).where("leader_epoch < previous")


def _s(t: Any) -> float | None:
    return None if t is None else round(int(t) / 1e9, 3)


def _entry(name: str, examples: list[dict[str, Any]]) -> dict[str, Any]:
    error = is_error(Fact(name))
    shown = [ex if error else {**ex, "allowed": True} for ex in examples[:MAX_EXAMPLES]]
    return {"count": len(examples), "errors": len(examples) if error else 0, "examples": shown}


@dataclass
class Judged:
    anomalies: dict[str, dict[str, Any]]
    summary: dict[str, Any]  # results.json's control_plane object
    #: node -> its timeline for the report (`timelines`)
    timelines: dict[str, dict[str, Any]] = field(default_factory=dict)


def timelines(
    aliases: dict[str, int], views: list[dict[str, Any]], states: list[dict[str, Any]], members: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Per node, what the report draws: the epoch it held and whether it led (its views), when its
    broker was fenced (the reference log's records), and its metadata lag (replication samples)."""
    out: dict[str, dict[str, Any]] = {}
    for alias, nid in sorted(aliases.items()):
        mine = sorted((v for v in views if v["node"] == alias), key=lambda v: v["time"])
        epochs = [(v["time"] / 1e9, v["leader_epoch"]) for v in mine if v["error"] is None]
        led = [(v["time"] / 1e9, v["leader_epoch"]) for v in mine if quorum_rules.leads(v)]
        fenced, since = [], None
        for s in sorted(
            (s for s in states if s["kind"] == "broker" and s["subject"] == str(nid)), key=lambda s: s["offset"]
        ):
            t = (s["time"] or 0) / 1e9
            if s["fenced"] and since is None:
                since = t
            elif not s["fenced"] and since is not None:
                fenced.append((since, t))
                since = None
        lag = sorted(
            (m["time"] / 1e9, max(0, m["high_watermark"] - m["log_end_offset"]))
            for m in members
            if m["id"] == nid and m["log_end_offset"] is not None and m["log_end_offset"] >= 0
        )
        out[alias] = {"epochs": epochs, "led": led, "fenced": fenced, "fenced_since": since, "lag": lag}
    return out


def not_checked(why: str) -> dict[str, Any]:
    """The control_plane object of a run whose control plane was not checked."""
    return {"checked": False, "why": why}


def _faultless(ops: list[node_faults.NemesisOp]) -> str | None:
    unknown = node_faults.faultless(ops)
    if not unknown:
        return None
    names = ", ".join(sorted({f"{op.f} (op {op.op})" for op in unknown})[:3])
    return f"nemesis operations that do not say their effect on their nodes: {names}"


def _absent(
    ev: Evidence, got: dict[str, list[dict[str, Any]]], samples: list[dict[str, Any]], ops: list[node_faults.NemesisOp]
) -> dict[str, str | None]:
    """Each kind of evidence (checkers/control_plane/rules.py) -> why it is missing, or None: it is there."""
    logs = got.get("cp_logs", [])
    views = [v for v in got.get("cp_views", []) if v["error"] is None]
    have: dict[str, str | None] = {
        cp_rules.VIEWS: None if views else ("no readable quorum view" if ev.has_views else "no quorum-views.jsonl"),
        cp_rules.METADATA: None
        if any(r["records"] for r in logs)
        else ("no metadata log holds a record" if ev.logs else "no metadata log"),
        cp_rules.REPLICATION: None
        if samples
        else ("no quorum-replication sample" if ev.has_replication else "no quorum-replication.jsonl"),
        cp_rules.IDS: None
        if any("id" in n for n in ev.nodes.values())
        else "no node ids in nodes.json: the faulted nodes' ids are unknown",
        cp_rules.NEMESIS: _faultless(ops),
    }
    return have


def judge(got: dict[str, list[dict[str, Any]]], nemesis_rows: list[dict[str, Any]], ev: Evidence, end: int) -> Judged:
    """Every control-plane anomaly and the object results.json holds beside them, from the
    collected queries and the nemesis's operations: the rules of checkers/control_plane/rules.py, run in turn."""
    views = got.get("cp_views", [])
    # The evidence goes on past the history's last event (sampling after the last heal): a fault
    # never undone stays to the end of the evidence, not of the history.
    end = max([end, *(v["time"] for v in views), *(s["time"] for s in got.get("cp_samples", []))])
    ops = node_faults.nemesis_ops(nemesis_rows)
    ws = node_faults.windows(ops, end)
    samples = [s for s in got.get("cp_samples", []) if s["error"] is None and s["high_watermark"] is not None]
    replay = got.get("cp_replay", [])
    logs = got.get("cp_logs", [])
    aliases = {a: int(n["id"]) for a, n in ev.nodes.items() if "id" in n}
    by_id = {i: a for a, i in aliases.items()}
    states = [r for r in replay if r["kind"] != "hit"]
    members = got.get("cp_members", [])
    brokers = [a for a, n in ev.nodes.items() if "broker" in (n.get("roles") or [])]
    voters = [by_id[v] for v in ev.voter_ids if v in by_id]
    timing = fault_timing.Evidence(ws, aliases, brokers, voters, ev.settings, views, samples, members, states, end)
    timing.wakes = ev.wakes
    timing.sends = first_sends(got)
    timing.leader_changes = sorted(got.get("cp_leader_changes", []), key=lambda r: r["offset"])
    if ev.quorum == "dynamic":
        timing.lost = node_faults.seats_lost(ws, voters)
    ctx = cp_rules.Context(got, ops, timing, ev.logs)
    gaps = lines.gaps(ev.gaps, got, _paths(ev), ev.nodes)  # the run's, and what its lines show
    found = cp_rules.judge(ctx, _absent(ev, got, samples, ops), gaps)
    faults = fault_timing.reaction_times(timing) if aliases else []

    anomalies = {name: _entry(name, found[name]) for name in CONTROL_NAMES if found.get(name)}
    missing = {name: ctx.not_checked[name] for name in CONTROL_NAMES if name in ctx.not_checked}
    summary = {
        "checked": True,
        "slack_s": SLACK_S,
        "settings": dict(ev.settings),
        "settings_from": dict(ev.sources),
        "bounds_s": cp_rules.bounds(ev.settings),
        "metadata_version": ev.metadata_version,
        "kafka_version": ev.kafka_version,
        "leader_epoch_bump_on_isr_shrink": ev.bump_on_shrink,
        "logs": {r["node"]: {"records": r["records"], "end": r["end"]} for r in sorted(logs, key=lambda r: r["node"])},
        "reference_log": next((r["node"] for r in logs if r["ref"]), None),
        "final_high_watermark": max(samples, key=lambda s: s["time"])["high_watermark"] if samples else None,
        "faults": faults,
        "heals": _heals(ops, views, end),
        "metadata_lag": _lag(members, by_id),
        "host_stall": {
            "probe": ev.wakes is not None,
            "wakes": len(ev.wakes or []),
            # past the probe's last wake (a probe that ended early) a window gets S alone
            "until_s": None if not ev.wakes else round(covered_until(ev.wakes) / 1e9, 3),
        },
        "judged_windows": {
            name: sorted(entries, key=lambda e: not e["found"])[:MAX_WINDOWS]
            for name, entries in sorted(timing.judged.items())
        },
        "rules": len(CONTROL_NAMES),
        "rules_checked": len(CONTROL_NAMES) - len(missing),
        "not_checked": missing,
    }
    return Judged(anomalies, summary, timelines(aliases, views, states, members))


def first_sends(got: dict[str, list[dict[str, Any]]]) -> fault_timing.FirstSends | None:
    """The collected `send_queries`; None when they were not asked (no such rows at all means no ok
    send after any fault, which is known)."""
    if "cp_first_sends" not in got:
        return None
    seconds: dict[str, list[tuple[int, int]]] = {}
    for r in got.get("cp_send_seconds", []):
        seconds.setdefault(r["key"], []).append((int(r["second"]), int(r["done"])))
    return fault_timing.FirstSends(
        {(r["key"], int(r["mark"])): int(r["done"]) for r in got["cp_first_sends"]},
        {k: sorted(v) for k, v in seconds.items()},
    )


def _heals(ops: list[node_faults.NemesisOp], views: list[dict[str, Any]], end: int) -> list[dict[str, Any]]:
    out = []
    for i, op in enumerate(ops):
        if op.heals is None or op.type == "fail":
            continue
        nxt = next((o.itime for o in ops[i + 1 :]), end)
        until = min(nxt, (op.ctime or op.itime) + int(HEAL_SETTLE_S * 1e9))
        out.append(
            {
                "op": op.op,
                "f": op.f,
                "nodes": op.nodes,
                "at_s": _s(op.itime),
                **quorum_rules.heal_epochs(views, op.itime, until),
            }
        )
    return out


def _lag(members: list[dict[str, Any]], by_id: dict[int, str]) -> dict[str, dict[str, Any]]:
    """Each node's largest metadata lag: the quorum's high watermark less its log end offset, in records."""
    out: dict[str, dict[str, Any]] = {}
    for m in members:
        if m["log_end_offset"] is None or m["high_watermark"] is None or m["log_end_offset"] < 0:
            continue
        node = by_id.get(m["id"], str(m["id"]))
        lag = max(0, m["high_watermark"] - m["log_end_offset"])
        if node not in out or lag > out[node]["records"]:
            out[node] = {"records": lag, "at_s": _s(m["time"])}
    return dict(sorted(out.items()))
