"""The control plane checked: the run directory's `control-plane/` evidence against the rules of
../shared/anomalies.md ("Control plane"), on the history's clock.

On Spark (`queries`, collected with the check's other small results in its one action): every
node's decoded metadata log is one DataFrame, replayed per node by applyInPandas (the record
rules, checkers/metadata_rules.py) and compared offset by offset below the quorum's final high
watermark (`metadata-divergence`); each node's quorum views are joined with the history's wipes
(`quorum-epoch-regression`: a wiped node starts again from nothing) and grouped by epoch with the
logs' LeaderChange records (`quorum-double-leader`). In the driver (`judge`), over the collected
samples (a few thousand rows): the fault windows of the nemesis's operations
(checkers/node_faults.py), `quorum-split-brain` (checkers/quorum_rules.py) and the timing rules
(checkers/fault_timing.py), and the `control_plane` object of results.json.

A run directory without the evidence is checked as before: `absent` says why, and the summary
says "control plane: not checked".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_chaos.checkers import fault_timing, metadata_rules, node_faults, quorum_rules
from kafka_chaos.checkers.anomalies import CONTROL_NAMES, Fact, is_error
from kafka_chaos.checkers.metadata_replay import bumps_on_isr_shrink
from kafka_chaos.history.events import NEMESIS
from kafka_chaos.history.kraft import KAFKA_TIMING_DEFAULTS as DEFAULTS
from kafka_chaos.history.kraft import SLACK_S
from kafka_chaos.history.run_dir import RunDir

#: How long after a heal completed its epochs are counted (unless the next nemesis operation comes first).
HEAL_SETTLE_S = 10.0
MAX_EXAMPLES = 10

RECORD = (
    "`offset` long, batch_epoch int, create_time_ms long, time long, type string, version int, data string, raw string"
)
VIEW = "time long, node string, node_id int, leader_id int, leader_epoch int, voted_id int, after long, error string"
MEMBER = "struct<id:int, log_end_offset:long, last_fetch_unix_ms:long, last_caught_up_unix_ms:long>"
SAMPLE = (
    "time long, leader_id int, leader_epoch int, high_watermark long,"
    f" voters array<{MEMBER}>, observers array<{MEMBER}>, error string"
)


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


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def evidence(run_dir: Path) -> Evidence:
    run = RunDir(run_dir)
    described = _read_json(run.control_plane_nodes)
    config = _read_json(run.config)
    broker_config = config.get("broker_config") if isinstance(config.get("broker_config"), dict) else {}
    given = described.get("settings") if isinstance(described.get("settings"), dict) else {}
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
    nodes = described.get("nodes") if isinstance(described.get("nodes"), dict) else {}
    return Evidence(
        run,
        {str(a): n for a, n in nodes.items() if isinstance(n, dict)},
        [int(v) for v in described.get("voters") or []],
        settings,
        sources,
        config.get("metadata_version"),
        config.get("kafka_version"),
        run.metadata_logs() if run.control_plane.is_dir() else {},
        str(described.get("quorum") or "static"),
    )


def _lines(ops: DataFrame, paths: list[Path], schema: str, node_from_file: bool = False) -> DataFrame:
    """JSON lines parsed by Spark (`node`: the file's name, a metadata log's alias)."""
    text = ops.sparkSession.read.text([str(p) for p in paths])
    cols = [F.from_json("value", schema).alias("r")]
    if node_from_file:
        cols.append(F.regexp_extract("_metadata.file_name", r"^(.+)\.jsonl$", 1).alias("node"))
    parsed = text.select(*cols).where("r IS NOT NULL")
    return parsed.select("r.*", *(["node"] if node_from_file else []))


def _records(ops: DataFrame, ev: Evidence) -> DataFrame:
    """Every node's records, with the reference mark (the longest log: the timing rules read its states)."""
    recs = _lines(ops, list(ev.logs.values()), RECORD, node_from_file=True).where("`offset` IS NOT NULL")
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


def first_writes(ops: DataFrame, micro: DataFrame) -> DataFrame:
    """Per nemesis operation that completed ok and per key (a topic-partition): the invoke of the
    first acknowledged send to that key invoked after it completed (`stale-isr-member` measures a
    follower's lag from there: checkers/fault_timing.py). The nemesis's operations are few: they
    are broadcast to the sends."""
    faults = ops.where(f"process = '{NEMESIS}' AND `type` = 'ok'").selectExpr("op AS nop", "ctime AS effect")
    sends = micro.where("kind = 'send' AND `type` = 'ok'").select("op", "key").distinct()
    invoked = sends.join(ops.select("op", "itime"), "op")
    return (
        invoked.join(F.broadcast(faults), invoked["itime"] >= faults["effect"])
        .groupBy("nop", "key")
        .agg(F.min("itime").alias("first"))
    )


def queries(ops: DataFrame, micro: DataFrame, ev: Evidence) -> dict[str, DataFrame]:
    """The control plane's Spark queries, for the check's one collect (checkers/parts.py)."""
    out: dict[str, DataFrame] = {"cp_writes": first_writes(ops, micro)}
    samples = None
    if ev.has_replication:
        samples = _lines(ops, [ev.run.quorum_replication], SAMPLE)
        out["cp_samples"] = samples.select("time", "leader_id", "leader_epoch", "high_watermark", "error")
        out["cp_members"] = samples.where("error IS NULL").selectExpr(
            "time",
            "high_watermark",
            "inline(concat(coalesce(voters, array()), coalesce(observers, array())))",
        )
    views = None
    if ev.has_views:
        views = _lines(ops, [ev.run.quorum_views], VIEW)
        out["cp_views"] = views.select("time", "node", "node_id", "leader_id", "leader_epoch", "error")
        out["cp_regressions"] = epoch_regressions(views, ops)
    claims = []
    if views is not None:
        claims.append(
            views.where("error IS NULL AND leader_id = node_id AND leader_epoch IS NOT NULL").selectExpr(
                "leader_epoch AS epoch", "leader_id AS leader", "node", "time", "'quorum-state' AS source"
            )
        )
    if ev.logs:
        recs = _records(ops, ev)
        out["cp_replay"] = recs.groupBy("node").applyInPandas(
            metadata_rules.node_pass(ev.bump_on_shrink), metadata_rules.OUT
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
            ids = {a: int(n["id"]) for a, n in ev.nodes.items() if "id" in n}
            out["cp_divergence"] = divergence(recs, samples, ids)
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
    return out


def divergence(recs: DataFrame, samples: DataFrame, ids: dict[str, int]) -> DataFrame:
    """Offsets at which two nodes' logs hold different records, below the final high watermark.

    Each node's log is compared up to the lesser of the final high watermark and its log end offset
    in the last sample: below the offset a node last fetched up to, Raft has made its log the
    leader's (a fetch that diverges is answered with the offset to truncate to, and not counted),
    while a node restarted late, not yet fetching, may still hold an uncommitted tail of an old
    epoch (it is not compared, as a node the last sample does not list). And, whatever the last
    sample says of it, up to the highest high watermark the samples gave while that node led the
    quorum: what it held below there was committed, and no node may later hold something else
    there (a voter back with an empty disk that elects a leader without those records, KAFKA-14077;
    the node that held them dies on the truncation below its high watermark and keeps them)."""
    good = samples.where("error IS NULL AND high_watermark IS NOT NULL")
    last = good.selectExpr(
        "max_by(named_struct('hw', high_watermark, 'members',"
        " concat(coalesce(voters, array()), coalesce(observers, array()))), time) AS s"
    )
    final_hw = last.selectExpr("s.hw AS final_hw")
    fetched = last.selectExpr("inline(s.members)").selectExpr("id", "log_end_offset AS leo")
    led = (
        good.where("leader_id IS NOT NULL")
        .groupBy(F.col("leader_id").alias("id"))
        .agg(F.max("high_watermark").alias("led_hw"))
    )
    aliases = recs.sparkSession.createDataFrame(list(ids.items()) or [("", -1)], "node string, id int")
    limits = (
        aliases.join(fetched, "id", "left")
        .join(led, "id", "left")
        .crossJoin(final_hw)
        .selectExpr(
            "node",
            "final_hw",
            "least(final_hw, greatest(coalesce(leo, -1), coalesce(led_hw, -1))) AS upto",
        )
    )
    below = recs.join(F.broadcast(limits), "node").where("`offset` < upto")
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
    wipes = ops.where(f"process = '{NEMESIS}' AND f = '{node_faults.WIPE}' AND `type` != 'fail'").selectExpr(
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


def _record_hits(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The record rules' hits, one per record however many nodes' logs hold it."""
    merged: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        if r["kind"] != "hit":
            continue
        key = (r["name"], r["subject"], r["offset"], r["record"], r["detail"])
        if key not in merged:
            detail = json.loads(r["detail"]) if r["detail"] else {}
            merged[key] = {
                "partition": r["subject"],
                "offset": r["offset"],
                "time_s": _s(r["time"]),
                "record": r["record"],
                **detail,
                "nodes": [],
            }
        merged[key]["nodes"] = sorted({*merged[key]["nodes"], r["node"]})
    out: dict[str, list[dict[str, Any]]] = {}
    for (name, *_), ex in sorted(merged.items(), key=lambda kv: (kv[0][0], kv[1]["offset"])):
        out.setdefault(name, []).append(ex)
    return out


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


def judge(got: dict[str, list[dict[str, Any]]], nemesis_rows: list[dict[str, Any]], ev: Evidence, end: int) -> Judged:
    """Every control-plane anomaly and the object results.json holds beside them, from the
    collected queries and the nemesis's operations."""
    missing: dict[str, str] = {}
    found: dict[str, list[dict[str, Any]]] = {}
    slack = int(SLACK_S * 1e9)
    fetch = ev.settings["controller.quorum.fetch.timeout.ms"]
    bounds = {
        "quorum-split-brain": 1.5 * fetch / 1000 + SLACK_S,
        "unfenced-down-broker": ev.settings["broker.session.timeout.ms"] / 1000 + SLACK_S,
        "stale-isr-member": 1.5 * ev.settings["replica.lag.time.max.ms"] / 1000 + SLACK_S,
        "stuck-broker-metadata": 30 + SLACK_S,
    }
    ops = node_faults.nemesis_ops(nemesis_rows)
    ws = node_faults.windows(ops, end)
    views = got.get("cp_views", [])
    samples = [s for s in got.get("cp_samples", []) if s["error"] is None and s["high_watermark"] is not None]
    replay = got.get("cp_replay", [])
    logs = got.get("cp_logs", [])
    aliases = {a: int(n["id"]) for a, n in ev.nodes.items() if "id" in n}
    by_id = {i: a for a, i in aliases.items()}

    if not ev.has_views:
        for name in ("quorum-split-brain", "quorum-epoch-regression"):
            missing[name] = "no quorum-views.jsonl"
        if not ev.logs:
            missing["quorum-double-leader"] = "no quorum-views.jsonl and no metadata log"
    if not any(r["records"] for r in logs):
        why = "no metadata log holds a record" if ev.logs else "no metadata log"
        for name in (
            "leader-not-in-isr",
            "partition-epoch-regression",
            "inactive-leader",
            "fenced-in-isr",
            "metadata-divergence",
            "unfenced-down-broker",
            "stale-isr-member",
        ):
            missing[name] = why
    if not samples:
        why = "no quorum-replication sample" if ev.has_replication else "no quorum-replication.jsonl"
        for name in ("metadata-divergence", "unfenced-down-broker", "stale-isr-member", "stuck-broker-metadata"):
            missing.setdefault(name, why)
    if not aliases:
        for name in ("unfenced-down-broker", "stale-isr-member", "stuck-broker-metadata"):
            missing.setdefault(name, "no nodes.json: the faulted nodes' ids are unknown")

    if views:
        found["quorum-split-brain"] = quorum_rules.split_brain(views, ws, int(bounds["quorum-split-brain"] * 1e9))
    found["quorum-double-leader"] = [
        {
            "epoch": r["epoch"],
            "leaders": sorted({c["leader"] for c in r["claims"]}),
            "claims": [
                {"node": c["node"], "leader": c["leader"], "time_s": _s(c["time"]), "source": c["source"]}
                for c in r["claims"][:6]
            ],
        }
        for r in sorted(got.get("cp_double", []), key=lambda r: r["epoch"])
    ]
    found["quorum-epoch-regression"] = [
        {
            "node": r["node"],
            "epochs": [r["previous"], r["leader_epoch"]],
            "from_s": _s(r["previous_time"]),
            "time_s": _s(r["time"]),
        }
        for r in sorted(got.get("cp_regressions", []), key=lambda r: (r["time"], r["node"]))
    ]
    found["metadata-divergence"] = [
        {
            "offset": r["offset"],
            "high_watermark": r["final_hw"],
            "records": {
                x["node"]: f"{x['type']} {x['data']}"
                + (f" (epoch {x['batch_epoch']})" if x["batch_epoch"] is not None else "")
                for x in r["records"]
            },
        }
        for r in sorted(got.get("cp_divergence", []), key=lambda r: r["offset"])
    ]
    found.update(_record_hits(replay))

    states = [r for r in replay if r["kind"] != "hit"]
    members = got.get("cp_members", [])
    brokers = [a for a, n in ev.nodes.items() if "broker" in (n.get("roles") or [])]
    voters = [by_id[v] for v in ev.voter_ids if v in by_id]
    writes = {(r["nop"], r["key"]): r["first"] for r in got.get("cp_writes", [])}
    timing = fault_timing.Evidence(
        ws, aliases, brokers, voters, ev.settings, slack, views, samples, members, states, end, writes
    )
    if ev.quorum == "dynamic":
        timing.lost = node_faults.seats_lost(ws, voters)
    faults: list[dict[str, Any]] = []
    if aliases:
        if "unfenced-down-broker" not in missing:
            found["unfenced-down-broker"] = fault_timing.unfenced_down_broker(timing, missing)
        if "stale-isr-member" not in missing:
            found["stale-isr-member"] = fault_timing.stale_isr_member(timing, missing)
        if "stuck-broker-metadata" not in missing:
            undos = [op for op in ops if op.heals is not None and op.type != "fail"]
            open_at_end = any(w.undone >= end and w.f not in node_faults.RESTARTS for w in ws)
            restarts = [w.healed for w in ws if w.f in node_faults.RESTARTS]  # a wiped node fetches from nothing
            last = None if open_at_end else max([*(op.ctime or op.itime for op in undos), *restarts], default=0)
            found["stuck-broker-metadata"] = fault_timing.stuck_broker_metadata(timing, last)
        faults = fault_timing.reaction_times(timing)

    anomalies = {name: _entry(name, found[name]) for name in CONTROL_NAMES if found.get(name)}
    summary = {
        "checked": True,
        "slack_s": SLACK_S,
        "settings": dict(ev.settings),
        "settings_from": dict(ev.sources),
        "bounds_s": bounds,
        "metadata_version": ev.metadata_version,
        "kafka_version": ev.kafka_version,
        "leader_epoch_bump_on_isr_shrink": ev.bump_on_shrink,
        "logs": {r["node"]: {"records": r["records"], "end": r["end"]} for r in sorted(logs, key=lambda r: r["node"])},
        "reference_log": next((r["node"] for r in logs if r["ref"]), None),
        "final_high_watermark": max(samples, key=lambda s: s["time"])["high_watermark"] if samples else None,
        "faults": faults,
        "heals": _heals(ops, views, end),
        "metadata_lag": _lag(members, by_id),
        "not_checked": {name: missing[name] for name in CONTROL_NAMES if name in missing},
    }
    return Judged(anomalies, summary, timelines(aliases, views, states, members))


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
