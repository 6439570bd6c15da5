"""`check`: a history file in, a verdict, results.json and report.html out.

Four steps, each a function: the facts (`run_rules`: every rule over every key, in Spark), the
instances (`count_instances`: each anomaly counted, its examples picked, the transaction cycles
searched), the verdict (`verdict`, after `with_run_facts`: the rules of ../shared/anomalies.md in
order; any error instance makes `valid` false, otherwise with no acknowledged send or no ok poll
nothing was proved and `valid` is "unknown", and so it is when the run expected its control plane
to be checked and a control-plane rule could not be; otherwise true), and the report (`build_report`,
`write_report`: results.json and report.html). Whether an instance is an error is the anomaly
table's to say (checkers/anomalies.py `is_error`).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kafka_chaos.checkers import load, parts, spark, stats, tables, tiered
from kafka_chaos.checkers.anomalies import INSTANCES, NAMES, Fact, is_error, pending_warnings
from kafka_chaos.checkers.control_plane import judge as control_plane
from kafka_chaos.checkers.data_plane import per_key, tallies
from kafka_chaos.checkers.errors import BadHistory
from kafka_chaos.checkers.measures import group_coverage, liveness, share_coverage
from kafka_chaos.checkers.measures.faults import MAX_NEMESIS_OPS, colours_of
from kafka_chaos.checkers.report import page as report_page
from kafka_chaos.checkers.report import root_cause, series
from kafka_chaos.checkers.result import (
    CONTROL_PLANE_INCOMPLETE,
    NOTHING_PROVED,
    TIERED_INCOMPLETE,
    UNKNOWN,
    CheckResult,
    control_plane_skipped,
    describe_cycle,
    describe_example,
    with_coverage,
)
from kafka_chaos.checkers.share import context as share_context
from kafka_chaos.checkers.share import leaders as share_leaders
from kafka_chaos.checkers.share.summary import format_share, share_summary, share_verdict
from kafka_chaos.checkers.sql import literal
from kafka_chaos.checkers.txn import cycles
from kafka_chaos.history import faults as fault_model
from kafka_chaos.history.events import NEMESIS, SHARE_POLL
from kafka_chaos.history.reporter import Reporter
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.run_dir import REPORT, RESULTS

MAX_EXAMPLES = 10


def all_instances(
    micro: DataFrame, evidenced: Collection[int], width: int, share: share_context.ShareContext | None = None
) -> DataFrame:
    """Every anomaly instance and every key's tallies (checkers/data_plane/tallies.py): one shuffle by key,
    every per-key rule in one pandas pass per key; `share`: a share-group run's context."""
    return micro.groupBy("key").applyInPandas(per_key.key_pass(evidenced, width, share), INSTANCES)


def ranked(found: DataFrame, limit: int = MAX_EXAMPLES) -> DataFrame:
    """Each anomaly's first `limit` instances, each with its anomaly's count and errors."""
    by_name = "OVER (PARTITION BY name)"
    return (
        found.where(f"NOT startswith(name, {literal(tallies.PREFIX)})")
        .where(f"NOT startswith(name, {literal(cycles.PREFIX)})")
        .selectExpr(
            "*",
            "row_number() OVER (PARTITION BY name ORDER BY allowed, key, ops, `values`) AS rank",
            f"count(1) {by_name} AS count",
            f"sum(CAST(NOT allowed AS BIGINT)) {by_name} AS errors",
        )
        .where(f"rank <= {int(limit)}")
    )


def summed_tallies(found: DataFrame) -> DataFrame:
    """The keys' tallies summed: name, slot, n."""
    mine = found.where(f"startswith(name, {literal(tallies.PREFIX)})")
    slots = mine.selectExpr("name", "inline(arrays_zip(offsets, `values`)) AS (slot, v)")
    return slots.groupBy("name", "slot").agg(F.expr("sum(v)").alias("n"))


def summarize(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """name -> {count, errors, examples}, from `ranked`'s rows."""
    out: dict[str, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: (r["name"], r["rank"])):
        entry = out.setdefault(row["name"], {"count": row["count"], "errors": row["errors"], "examples": []})
        example = {"key": row["key"], "offsets": row["offsets"], "values": row["values"], "ops": row["ops"]}
        if row["process"] is not None:
            example["process"] = int(row["process"]) if row["process"].lstrip("-").isdigit() else row["process"]
        if row["allowed"]:
            example["allowed"] = True
        entry["examples"].append(example)
    return _in_order(out)


def _in_order(anomalies: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name: anomalies[name] for name in NAMES if name in anomalies}


def facts_query(ops: DataFrame) -> DataFrame:
    """One row: the first broken pairing (by invoke; a line with no index first), the history's
    end and processes, the workload's span (checkers/measures/liveness.py), whether a poll was ok."""
    problem = "named_struct('i', invoke IS NOT NULL, 'invoke', invoke, 'problem', problem)"
    return ops.selectExpr(
        f"min(CASE WHEN problem IS NOT NULL THEN {problem} END) AS problem",
        "max(coalesce(ctime, itime)) AS `end`",
        # Not count(DISTINCT): that plans an extra shuffle of every operation for a handful of processes.
        "size(collect_set(process)) AS processes",
        f"max(CAST(f IN ('poll', '{SHARE_POLL}') AND `type` = 'ok' AS INT)) AS ok_poll",
        f"max(CAST(f = '{SHARE_POLL}' AS INT)) AS shares",
        "max(CAST(f = 'txn' AS INT)) AS txns",
        "max(CAST(f = 'subscribe' AS INT)) AS groups",
        *[f"{c} AS {name}" for name, c in liveness.span_columns().items()],
    )


def nemesis_query(ops: DataFrame) -> DataFrame:
    """The nemesis's first operations in invoke order (f, type, itime, ctime, and its value's fields
    that the one model of the nemesis's operations reads: history/faults.py `from_rows`)."""
    nemesis = ops.where(F.col("process") == NEMESIS).selectExpr(
        "op",
        "f",
        "`type`",
        "itime",
        "ctime",
        "get_json_object(nvalue, '$.heals') AS heals",
        "get_json_object(nvalue, '$.undone_by') AS undone_by",
        "get_json_object(nvalue, '$.nodes') AS nodes",
        "get_json_object(nvalue, '$.grudge') AS grudge",
        "get_json_object(nvalue, '$.listener') AS listener",
        "get_json_object(nvalue, '$.effect') AS effect",
    )
    return nemesis.orderBy("itime").limit(MAX_NEMESIS_OPS)


def with_run_facts(anomalies: dict[str, dict[str, Any]], ok_poll: bool) -> dict[str, dict[str, Any]]:
    """Every anomaly's errors judged again with what is known only of the whole run (the table's
    `is_error`): with no ok poll at all, `unseen` is reported but is no error (verdict step 2)."""
    out = {}
    for name, a in anomalies.items():
        if a["errors"] and not is_error(Fact(name, ok_poll=ok_poll)):
            a = {**a, "errors": 0, "examples": [{**ex, "allowed": True} for ex in a["examples"]]}
        out[name] = a
    return out


def verdict(
    anomalies: dict[str, dict[str, Any]],
    acknowledged: int,
    ok_poll: bool,
    control_incomplete: bool = False,
    tiered_incomplete: bool = False,
) -> tuple[bool | str, str | None]:
    """The verdict rules of ../shared/anomalies.md, in order, over anomalies judged `with_run_facts`,
    and why it is "unknown" (checkers/result.py UNKNOWN_REASONS; None when it is not).
    `control_incomplete`: the run expected its control plane checked, and a rule could not be;
    `tiered_incomplete`: a tiered run's log starts could not be judged (checkers/tiered.py)."""
    if any(a["errors"] for a in anomalies.values()):
        return False, None
    if not acknowledged or not ok_poll:
        return UNKNOWN, NOTHING_PROVED
    if control_incomplete:
        return UNKNOWN, CONTROL_PLANE_INCOMPLETE
    if tiered_incomplete:
        return UNKNOWN, TIERED_INCOMPLETE
    return True, None


def default_out(history: Path, given: str | Path | None) -> Path:
    return Path(given) if given else history.parent


def check_history(
    path: str | Path,
    out: str | Path | None = None,
    master: str | None = None,
    report: bool = True,
    session: SparkSession | None = None,
    progress: Reporter | None = None,
    cycles: bool = True,
    config: RunConfig | None = None,
) -> CheckResult:
    """Check one history; writes results.json (and report.html) into `out`. `progress` hears of
    each phase (a large history takes minutes). `cycles=False` skips the transaction cycle search
    (checkers/txn/cycles.py; bench/check_scale.py's baseline). `config`: the run's config.json, when
    the caller holds it (a run passes on what it wrote); read once from the run directory otherwise."""
    say = progress or (lambda message: None)
    starting = f"check: starting Spark ({master or spark.DEFAULT_MASTER})" if session is None else "check: starting"
    if load.is_uri(path):
        # Spark reads it (Hadoop's file systems); Python writes results only to a local directory.
        local = load.local_of(path)
        if out is None and local is None:
            raise BadHistory(f"{path}: a history at a URI needs --out (a local directory for the results)")
        say(starting)
        sp = session or spark.session(master)
        source = load.open_uri(sp, str(path))
        load.precheck(source)
        history: Path | str = source.name
        size = source.size
        run_dir = load.local_of(source.name)
        run_dir = run_dir.parent if run_dir is not None else None
        out_dir = Path(out) if out else run_dir
    else:
        history = source = load.resolve(path)
        load.precheck(history)
        size = history.stat().st_size
        run_dir = history.parent
        out_dir = default_out(history, out)
        say(starting)
        sp = session or spark.session(master, size)
    chosen = load.copy_for(history, size, load.is_uri(path))  # the columnar copy, written now when missing or stale
    copy = chosen.path
    say(chosen.said)
    spark.tune(sp, size)
    spark.warm_python(sp)
    if copy is not None:
        # The history's columnar copy (history/columns.py): the flat table as the run wrote it,
        # read again by each job (quicker than building the cache: docs/measurements.md).
        loaded = load.Loaded(None, history)
        rows = load.columnar(sp, copy)
        paired = None  # a copy was made only of a history whose every event pairs
    else:
        loaded = load.load(sp, source)
        if loaded.empty:
            result = CheckResult(UNKNOWN, {}, {}, loaded.warnings, history)
            result.control_plane = control_plane.not_checked("the history is empty")
            return write_report(result, out_dir, None, report)
        paired = tables.pair(loaded.events)
        # Built from the JSON at some cost: kept for the check's later jobs.
        rows = tables.flat(paired).persist(StorageLevel.MEMORY_AND_DISK)
    fl = tables.split(rows)
    cached = [fl.ops, fl.micro, rows]
    pairing = paired if paired is not None else fl.ops
    try:
        cfg = config if config is not None else RunConfig.load(run_dir)
        result, plots = _check(loaded, cached, report, say, run_dir, pairing, cycles, cfg)
    finally:
        for df in cached:
            df.unpersist()
    return write_report(result, out_dir, plots, report)


def _check(
    loaded: load.Loaded,
    cached: list[DataFrame],
    report: bool,
    say: Reporter,
    run_dir: Path | None,
    paired: DataFrame,
    search_cycles: bool,
    config: RunConfig,
) -> tuple[CheckResult, series.Series | None]:
    """The check proper, in four steps: the rules' facts, the anomalies' instances, the verdict,
    the report. `cached` holds the tables (ops, micro, then any other the caller persisted; it
    unpersists them all); `paired` is the uncached pairing, for a history too broken to build them
    (its first problem then says why)."""
    facts = run_rules(loaded, cached, report, say, paired, search_cycles, run_dir, config)
    anomalies = with_run_facts(count_instances(facts, say), facts.ok_poll)
    anomalies, control = check_control_plane(facts, anomalies, run_dir, config)
    incomplete = bool(control.summary.get("expected") and control_plane_skipped(control.summary))
    moved, tiered_summary = tiered.judge(run_dir, config)
    anomalies = _in_order({**anomalies, **moved})
    tiered_incomplete = tiered_summary is not None and not tiered_summary["checked"]
    valid, why = verdict(anomalies, facts.counts["acknowledged"], facts.ok_poll, incomplete, tiered_incomplete)
    valid, why = share_verdict(valid, why, facts.share, facts.slots)
    result, plots = build_report(loaded, facts, anomalies, valid, report, say, run_dir, config)
    result.unknown_reason = why
    result.control_plane = control.summary
    result.tiered = tiered_summary
    if plots is not None:
        plots.control = control.timelines
    return result, plots


def check_control_plane(
    facts: Facts, anomalies: dict[str, dict[str, Any]], run_dir: Path | None, config: RunConfig
) -> tuple[dict[str, dict[str, Any]], control_plane.Judged]:
    """The control plane's anomalies joined to the history's, with results.json's `control_plane`
    object and the report's timelines (checkers/control_plane/judge.py); a run without the evidence is
    not checked, and says why. The object also says whether the run expected its control plane
    checked (`expected_control_plane`), and how many of the rules were (`with_coverage`)."""
    expected = expected_control_plane(config, run_dir)
    if facts.control is None:
        why = _turned_off(config) or control_plane.absent(run_dir) or "no evidence"
        judged = control_plane.Judged({}, control_plane.not_checked(why))
    else:
        judged = control_plane.judge(facts.got, facts.got["nemesis"], facts.control, facts.end_ns)
        anomalies = _in_order({**anomalies, **judged.anomalies})
    judged.summary = with_coverage(judged.summary, expected)
    return anomalies, judged


def expected_control_plane(config: RunConfig, run_dir: Path | None) -> bool:
    """Whether the run's control-plane evidence was expected (../shared/anomalies.md, "Control
    plane", amended 2026-12-06): its config.json asks for it (`kafka-chaos run` writes
    `control_plane`), or the run directory holds any of it (its control-plane folder), unless the
    user turned it off. A silent or unreadable config.json (read as the empty config) does not make
    missing evidence unexpected: evidence that is there says the run meant to take it."""
    if config.control_plane is False:
        return False
    return config.control_plane is True or control_plane.absent(run_dir) is None


def _turned_off(config: RunConfig) -> str | None:
    """Why a run took no control-plane evidence on purpose; None when it did not say so."""
    if config.control_plane is not False:
        return None
    return "a run on a shared cluster takes none" if config.shared_cluster else "turned off"


@dataclass
class Facts:
    """What the rules found in one history, before anything is judged of the run as a whole."""

    run: dict[str, Any]  # facts_query's row
    evidenced: list[int]  # the info operations an ok poll proved committed
    ops: DataFrame
    micro: DataFrame
    found: DataFrame  # every instance and the keys' tallies (cached)
    got: dict[str, list[dict[str, Any]]]  # the rows of every small query (parts.collect)
    cycles: bool  # whether the transaction cycles are to be searched
    slots: dict[str, dict[int, int]]  # the keys' tallies summed, by name and slot
    control: control_plane.Evidence | None = None  # the run's control-plane evidence, when it has some
    share: share_context.ShareContext | None = None  # a share-group run's context (checkers/share/)

    @property
    def end_ns(self) -> int:
        return self.run["end"] or 0

    @property
    def counts(self) -> dict[str, int]:
        return tallies.named(self.slots[tallies.VALUES])

    @property
    def ok_poll(self) -> bool:
        """Whether the run had an ok poll (one that read in a transaction counts)."""
        return bool(self.run["ok_poll"]) or self.counts["ok_txn_reads"] > 0


def run_rules(
    loaded: load.Loaded,
    cached: list[DataFrame],
    report: bool,
    say: Reporter,
    paired: DataFrame,
    search_cycles: bool,
    run_dir: Path | None,
    config: RunConfig,
) -> Facts:
    """Facts: every rule over the history, in two Spark actions for a valid history (the history's
    own facts, then every small result at once; checkers/parts.py)."""
    history = loaded.path
    ops, micro = cached[:2]
    try:
        first = parts.collect({"facts": facts_query(ops), "evidenced": tables.evidenced_ops(micro)})
    except Exception:
        first = None  # a history broken enough to fail the micro-ops: its first problem says why
    run = (first or parts.collect({"facts": facts_query(paired)}))["facts"][0]
    if run["problem"] is not None:
        raise BadHistory(f"{history}: {run['problem']['problem']}")
    if first is None:
        raise BadHistory(f"{history}: its operations could not be read (Spark's output: {spark.log_path()})")
    ops = ops.drop("problem")
    evidenced = [r["op"] for r in first["evidenced"]]
    end_ns = run["end"] or 0
    absent = run_dir is None or control_plane.absent(run_dir) is not None
    control = None if absent else control_plane.evidence(run_dir, config)
    share = None
    if run["shares"]:
        leaders = share_leaders.of_run(control.logs if control is not None else None, run_dir, config)
        share = share_context.from_rows(parts.collect(share_context.queries(ops)), end_ns, leaders)
    say("check: version orders and every anomaly rule")
    width = series.bucket_width_ns(end_ns)
    found = all_instances(micro, evidenced, width, share).persist(StorageLevel.MEMORY_AND_DISK)
    cached.append(found)
    queries = {
        "instances": ranked(found),
        "tallies": summed_tallies(found),
        "liveness": liveness.bucket_query(ops, run["live_start"], run["live_end"]),
        "nemesis": nemesis_query(ops),
        **stats.queries(ops),
        **(series.queries(ops, end_ns) if report else {}),
    }
    if run["groups"]:
        queries.update(group_coverage.query(ops, micro))
    if run["shares"]:
        queries.update(share_coverage.query(ops, micro))
    txns = search_cycles and bool(run["txns"])
    if txns:
        queries.update(cycles.queries(found, ops))
    if control is not None:
        say("check: the control plane")
        queries.update(control_plane.queries(ops, micro, control))
    got = parts.collect(queries)
    slots: dict[str, dict[int, int]] = {tallies.VALUES: {}, tallies.ACKED: {}, tallies.SEEN: {}}
    for row in got["tallies"]:
        slots.setdefault(row["name"], {})[int(row["slot"])] = int(row["n"])
    return Facts(run, evidenced, ops, micro, found, got, txns, slots, control, share)


def count_instances(facts: Facts, say: Reporter) -> dict[str, dict[str, Any]]:
    """Instances: each anomaly's count, errors and examples (ranked in Spark, `ranked`), with the
    transaction cycles searched in the driver."""
    anomalies = summarize(facts.got["instances"])
    if facts.cycles:
        say("check: transaction cycles")
        g = cycles.graph(facts.got, facts.evidenced)
        anomalies = _in_order({**anomalies, **cycles.entries(g, cycles.search(g, MAX_EXAMPLES))})
    return anomalies


def build_report(
    loaded: load.Loaded,
    facts: Facts,
    anomalies: dict[str, dict[str, Any]],
    valid: bool | str,
    report: bool,
    say: Reporter,
    run_dir: Path | None,
    config: RunConfig,
) -> tuple[CheckResult, series.Series | None]:
    """Report: the result results.json holds (stats, liveness, warnings, the lost writes' root
    causes), and report.html's plots when asked for (a third Spark action draws the offset
    timelines of anomalous keys)."""
    history, got, ops = loaded.path, facts.got, facts.ops
    st = stats.summary(got, facts.run, facts.counts)
    st["values"]["lost"] = anomalies.get("lost-write", {}).get("count", 0)
    st["values"]["unseen"] = anomalies.get("unseen", {}).get("count", 0)
    result = CheckResult(valid, anomalies, st)
    nemesis = fault_model.from_rows(got["nemesis"])
    live_start, live_end = facts.run["live_start"], facts.run["live_end"]
    result.liveness = liveness.measure(liveness.counts_from(got["liveness"], live_start, live_end, nemesis))
    result.warnings = loaded.warnings + _warnings(st, facts.ok_poll)
    if result.liveness["warning"]:
        result.warnings.append(result.liveness["warning"])
    if facts.share is not None:
        result.share = share_summary(facts.slots, facts.share.leaders)
        if facts.share.leaders.bare:
            result.warnings.append(
                "share groups judged as if no partition's leader changed: the run left no metadata log to read"
            )
        elif facts.share.unknown:
            result.warnings.append(f"share groups: {facts.share.unknown}")
        blind = facts.share.blind_to_concurrency()
        if blind:
            result.warnings.append(blind)
    if facts.run["groups"] or facts.run["shares"]:
        measured = group_coverage if facts.run["groups"] else share_coverage
        result.group_coverage = measured.from_rows(got, config.keys)
        if result.group_coverage and result.group_coverage["warning"]:
            result.warnings.append(result.group_coverage["warning"])
    result.history = history
    lost = facts.found.where(F.col("name") == "lost-write").select(
        "key", F.col("values")[0].alias("value"), F.col("ops")[0].alias("op"), "offsets"
    )
    groups = lambda events: root_cause.lost_write_groups(lost, ops, events)  # noqa: E731 (bound to this check)
    if run_dir is not None:  # its metadata timeline and replica logs, when the run left them
        result.root_cause = root_cause.build(run_dir, anomalies, run_dir / Path(str(history)).name, groups)
    plots = None
    if report:
        say("check: the report's plots")
        colours = colours_of(config.to_json()) if config.known else {}
        plots = series.build(got, facts.end_ns, facts.slots[tallies.ACKED], facts.slots[tallies.SEEN], nemesis, colours)
        if any(a["errors"] for a in anomalies.values()):
            plots.timelines = series.timelines(facts.micro, anomalies)
    return result, plots


def _warnings(st: dict[str, Any], ok_poll: bool) -> list[str]:
    out = []
    if not st["values"]["acknowledged"]:
        out.append("no send was acknowledged: nothing can be proved lost")
    if not ok_poll:
        out.append("no poll succeeded: nothing was read, so unseen values are reported but are not errors")
    return out + pending_warnings(st.get("operations", {}))


def write_report(result: CheckResult, out_dir: Path, plots: series.Series | None, report: bool) -> CheckResult:
    """results.json, and report.html when asked for, into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    result.results_path = out_dir / RESULTS
    tmp = result.results_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result.to_json(), indent=2, sort_keys=False) + "\n", encoding="utf-8")
    tmp.replace(result.results_path)
    if report:
        result.report_path = report_page.write(out_dir / REPORT, result, plots)
    return result


def format_summary(result: CheckResult) -> str:
    """The one-screen summary `kafka-chaos check` prints."""
    lines = [f"history: {result.history}", f"verdict: {result.label}"]
    lines.append(f"control plane: {result.control_plane_status}")
    lines += [f"warning: {w}" for w in result.warnings]
    if result.liveness:
        lines.append(liveness.format_liveness(result.liveness, warning=False))
    if result.group_coverage:
        lines.append(group_coverage.format_coverage(result.group_coverage))
    if result.share:
        lines.append(format_share(result.share))
    if result.tiered is not None:
        said = (tiered.format_reads(result.tiered.get("reads")), tiered.format_status(result.tiered))
        lines += [line for line in said if line]
    for name, a in result.anomalies.items():
        ex = a["examples"][0]
        if "edges" in ex:
            where = f"cycle {describe_cycle(ex)}"
        elif "key" in ex:
            where = f"key {ex['key']} offsets {ex['offsets']} values {ex['values']} ops {ex['ops']}"
        else:
            where = describe_example(ex)
        if a["errors"] == a["count"]:
            kind = "error"
        else:
            kind = "allowed" if not a["errors"] else f"{a['errors']} errors"
        lines.append(f"  {name:<22} {a['count']:>8} ({kind})  e.g. {where}")
    v = result.stats.get("values")
    if v:
        lines.append(
            f"values: acknowledged {v['acknowledged']}, read {v['read']}, lost {v['lost']}, unseen {v['unseen']}, "
            f"indeterminate {v['indeterminate']}, failed {v['failed']}"
        )
        ops = result.stats["operations"]
        lines.append(
            "operations: " + "; ".join(f"{f} " + " ".join(f"{t} {n}" for t, n in c.items()) for f, c in ops.items())
        )
        for f, q in result.stats["latency_ms"].items():
            lines.append(f"latency ok {f}: p50 {q['p50']} ms, p99 {q['p99']} ms, max {q['max']} ms")
    lines.append(f"results: {result.results_path}")
    if result.report_path:
        lines.append(f"report: {result.report_path}")
    return "\n".join(lines)
