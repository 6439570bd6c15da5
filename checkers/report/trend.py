"""`kafka-chaos trend STORE`: the history of many runs, per Kafka version, nemesis, client and day.

A nightly job leaves one run directory per run (runs/run.py). This Spark job reads every
run directory under STORE, however deep, from two small files: `config.json` (Kafka version,
nemesis, client library, start time, run id) and `results.json` (the checker's verdict and anomaly counts).
Histories are not read, so a store of stripped run directories (the nightly workflow keeps
only these files between nights) gives the same trend.

A run counts once even when a `latest` link makes it visible twice (runs are told apart by
their run id). Its verdict is valid, invalid or unknown as the checker said; "unchecked" when it
has no results.json (never checked, or it did not complete).

Output, in `--out` (default STORE/trend/): trend.md and trend.csv (one row per version, nemesis,
client and day; a run from before the client axis counts as kafka-python's), trend.json (those
rows and the invalid runs with their reports), trend.svg and trend.html (the table and plots of
the invalid share and the run count per day and version).
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kafka_chaos.checkers import spark as spark_session
from kafka_chaos.checkers.anomalies import CONTROL_NAMES
from kafka_chaos.checkers.errors import BadHistory, first_line
from kafka_chaos.checkers.load import is_uri
from kafka_chaos.checkers.report.svg import PALETTE, Chart
from kafka_chaos.history.run_dir import CONFIG, RESULTS, SUMMARY
from kafka_chaos.history.versions import release_key

VERDICTS = ("valid", "invalid", "unknown", "unchecked")
_names = "(" + ", ".join(f"'{n}'" for n in CONTROL_NAMES) + ")"  # as SQL
_ANOMALIES = T.MapType(T.StringType(), T.StructType([T.StructField("errors", T.LongType())]))
_FAULTS = T.ArrayType(T.StringType())
_SVG_STYLE = (
    "<style>svg{font:11px sans-serif}.grid{stroke:#eee}.frame{fill:none;stroke:#999}"
    ".title{font-size:13px;font-weight:600}</style>"
)


@dataclass
class TrendRow:
    day: str
    version: str
    nemesis: str
    runs: int
    valid: int = 0
    invalid: int = 0
    unknown: int = 0
    unchecked: int = 0
    #: Runs whose workload stalled after a fault (a liveness warning: checkers/measures/liveness.py).
    stalled: int = 0
    #: Median over the runs of ok operations/s between faults / before the first fault.
    kept: float | None = None
    #: Median over the group runs of the share of the workload in which every key was held by
    #: some member (checkers/measures/group_coverage.py); None when no run had group members.
    held: float | None = None
    #: Runs whose control plane was checked (results.json's `control_plane`), and those of them
    #: with a control-plane error.
    control_checked: int = 0
    control_invalid: int = 0
    #: Runs that expected their control plane checked and had a rule that could not be
    #: (results.json's `control_plane.rules_checked` under its `rules`; their verdict is unknown
    #: unless an error was found).
    control_incomplete: int = 0
    #: anomaly -> {"runs": runs that had it as an error, "errors": its error instances in them}
    anomalies: dict[str, dict[str, int]] = field(default_factory=dict)
    #: The client library the runs spoke (config.json's `client`; kafka-python before it was recorded).
    client: str = "kafka-python"

    @property
    def invalid_share(self) -> float:
        checked = self.valid + self.invalid + self.unknown
        return self.invalid / checked if checked else 0.0


@dataclass
class Trend:
    store: str
    rows: list[TrendRow]
    #: Every invalid run: day, version, nemesis, client, run directory, its error anomalies.
    invalid_runs: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "runs": sum(r.runs for r in self.rows),
            "rows": [asdict(r) for r in self.rows],
            "invalid_runs": self.invalid_runs,
        }


def _files(spark: SparkSession, store: str) -> DataFrame:
    """(dir, name, text) of every config.json, results.json and summary.json under `store`, at any depth: one
    listing of the store (which also holds histories and node logs) and one read, materialized."""
    df = (
        spark.read.option("recursiveFileLookup", "true")
        .option("pathGlobFilter", "{" + ",".join((CONFIG, RESULTS, SUMMARY)) + "}")
        .text(store, wholetext=True)
    )
    path = F.input_file_name()
    return spark_session.materialize(
        df.select(
            F.regexp_replace(path, "/[^/]*$", "").alias("dir"),
            F.regexp_extract(path, "([^/]*)$", 1).alias("name"),
            "value",
        )
    )


def runs_frame(spark: SparkSession, store: str) -> DataFrame:
    """One row per run: dir, run_id, version, nemesis, client, day, verdict, anomalies (map of error counts),
    kept (between-faults / before-faults ok operations/s) and stalled (a liveness warning)."""
    j = lambda col, path: F.get_json_object(F.col(col), path)  # noqa: E731
    files = _files(spark, store)
    configs = files.where(F.col("name") == CONFIG).select("dir", F.col("value").alias("config"))
    configs = configs.where(j("config", "$.kafka_version").isNotNull())
    scenario, script = j("config", "$.nemesis.scenario"), j("config", "$.nemesis.script")
    faults = F.from_json(j("config", "$.nemesis.faults"), _FAULTS)
    started_ms = j("config", "$.history_started_unix_ms").cast("long")
    stamp = F.regexp_extract("dir", r"/(\d{8})T\d{6}[^/]*$", 1)
    runs = configs.select(
        "dir",
        F.coalesce(j("config", "$.run_id"), F.col("dir")).alias("run_id"),
        j("config", "$.kafka_version").alias("version"),
        F.when(scenario.isNotNull(), F.concat(F.lit("scenario:"), scenario))
        .when(script.isNotNull(), F.lit("script"))
        .when(
            F.size(faults) > 0,
            # The overlapping mix's runs are a row of their own: the same faults, another search.
            F.concat(
                F.array_join(faults, ","),
                F.when(j("config", "$.nemesis.mix") == "overlap", F.lit(" (overlap)")).otherwise(F.lit("")),
            ),
        )
        .otherwise(F.lit("none"))
        .alias("nemesis"),
        F.coalesce(j("config", "$.client"), F.lit("kafka-python")).alias("client"),
        F.coalesce(
            F.date_format(F.timestamp_millis(started_ms), "yyyy-MM-dd"),
            F.date_format(F.to_date(F.when(stamp != "", stamp), "yyyyMMdd"), "yyyy-MM-dd"),
            F.lit("unknown"),
        ).alias("day"),
    )
    # A `latest` link shows a run twice: keep the path without it. A run with no run id (its
    # cluster never started) is known by its directory, so its `latest` view is dropped outright:
    # make_run_dir always creates the timestamped directory beside the link.
    is_link = F.col("dir").endswith("/latest")
    runs = runs.where(~(is_link & (F.col("run_id") == F.col("dir"))))
    pick = Window.partitionBy("run_id").orderBy(is_link.cast("int"), "dir")
    runs = runs.withColumn("_n", F.row_number().over(pick)).where("_n = 1").drop("_n")
    kept, warning = "$.liveness.ratios.ops_per_s.between_faults", "$.liveness.warning"
    held = "$.group_coverage.every_key_share"
    cp_rules_checked = "$.control_plane.rules_checked"
    results = files.where(F.col("name") == RESULTS).select(
        "dir",
        j("value", "$.valid").alias("valid"),
        F.from_json(j("value", "$.anomalies"), _ANOMALIES).alias("anomalies"),
        j("value", kept).cast("double").alias("r_kept"),
        j("value", warning).alias("r_warning"),
        j("value", "$.liveness").isNotNull().alias("r_live"),
        j("value", held).cast("double").alias("r_held"),
        (j("value", "$.control_plane.checked") == "true").alias("control_checked"),
        (
            (j("value", "$.control_plane.expected") == "true")
            & (j("value", cp_rules_checked).cast("int") < j("value", "$.control_plane.rules").cast("int"))
        ).alias("control_incomplete"),
    )
    # Liveness from the checker, else from the run's own summary (a run never checked).
    summaries = files.where(F.col("name") == SUMMARY).select(
        "dir",
        j("value", kept).cast("double").alias("s_kept"),
        j("value", warning).alias("s_warning"),
        j("value", held).cast("double").alias("s_held"),
    )
    verdict = (
        F.when(F.col("valid") == "true", "valid")
        .when(F.col("valid") == "false", "invalid")
        .when(F.col("valid") == "unknown", "unknown")
        .otherwise("unchecked")
    )
    return (
        runs.join(results, "dir", "left")
        .join(summaries, "dir", "left")
        .select(
            "dir",
            "run_id",
            "version",
            "nemesis",
            "client",
            "day",
            verdict.alias("verdict"),
            "anomalies",
            F.coalesce("control_checked", F.lit(False)).alias("control_checked"),
            F.coalesce("control_incomplete", F.lit(False)).alias("control_incomplete"),
            F.coalesce(
                F.expr(f"exists(map_entries(anomalies), e -> e.key IN {_names} AND e.value.errors > 0)"), F.lit(False)
            ).alias("control_invalid"),
            F.when(F.col("r_live"), F.col("r_kept")).otherwise(F.col("s_kept")).alias("kept"),
            F.when(F.col("r_live"), F.col("r_warning")).otherwise(F.col("s_warning")).isNotNull().alias("stalled"),
            F.coalesce("r_held", "s_held").alias("held"),
        )
    )


def aggregate(runs: DataFrame) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any]]:
    """Collected rows: verdict counts per group, anomaly counts per group, and the invalid runs."""
    keys = ["day", "version", "nemesis", "client"]
    counts = runs.groupBy(*keys).agg(
        F.count(F.lit(1)).alias("runs"),
        *[F.sum((F.col("verdict") == v).cast("int")).alias(v) for v in VERDICTS],
        F.sum(F.col("stalled").cast("int")).alias("stalled"),
        F.sum(F.col("control_checked").cast("int")).alias("control_checked"),
        F.sum(F.col("control_invalid").cast("int")).alias("control_invalid"),
        F.sum(F.col("control_incomplete").cast("int")).alias("control_incomplete"),
        F.percentile_approx("kept", 0.5).alias("kept"),
        F.percentile_approx("held", 0.5).alias("held"),
    )
    errors = (
        runs.select(*keys, "dir", F.explode("anomalies").alias("name", "a"))
        .where(F.col("a.errors") > 0)
        .select(*keys, "dir", "name", F.col("a.errors").alias("errors"))
    )
    per_anomaly = errors.groupBy(*keys, "name").agg(
        F.countDistinct("dir").alias("runs"), F.sum("errors").alias("errors")
    )
    by_run = errors.groupBy("dir").agg(F.map_from_entries(F.collect_list(F.struct("name", "errors"))).alias("e"))
    invalid = runs.where(F.col("verdict") == "invalid").join(by_run, "dir", "left").select(*keys, "dir", "e")
    return (
        [r.asDict() for r in counts.collect()],
        [r.asDict() for r in per_anomaly.collect()],
        invalid.collect(),
    )


def _version_key(text: str) -> tuple:
    """Releases in order, anything else after them."""
    try:
        return release_key(text)
    except ValueError:
        return (999, 0, 0, str(text))


def trend(store: str | Path, master: str | None = None, session: SparkSession | None = None) -> Trend:
    """The trend of every run under `store` (a local directory, or a URI Spark reads: file://,
    hdfs://, s3a://...); BadHistory when there is none."""
    if is_uri(store):
        where = str(store)  # listed by Spark on the cluster's file system; nothing to look at here first
    else:
        path = Path(store)
        if not path.is_dir():
            raise BadHistory(f"{store}: not a directory")
        if not any(path.rglob(CONFIG)):
            raise BadHistory(f"{store}: no run directories (no config.json under it)")
        where = str(path.resolve())
    sp = session or spark_session.session(master)
    spark_session.tune(sp, 0)  # one row per run: a small table, whose time goes to planning, not computing
    # The three aggregations start from the runs as read once, not from the files each time.
    try:
        runs = spark_session.materialize(runs_frame(sp, where))
    except Exception as exc:  # Spark's error for a path it cannot list, as one line
        if is_uri(store):
            raise BadHistory(f"{store}: cannot read it: {first_line(exc)}") from None
        raise
    counts, per_anomaly, invalid = aggregate(runs)
    rows = {(c["day"], c["version"], c["nemesis"], c["client"]): TrendRow(**c) for c in counts}
    for a in per_anomaly:
        key = (a["day"], a["version"], a["nemesis"], a["client"])
        rows[key].anomalies[a["name"]] = {"runs": a["runs"], "errors": a["errors"]}
    for row in rows.values():
        row.anomalies = dict(sorted(row.anomalies.items(), key=lambda kv: (-kv[1]["runs"], kv[0])))
    ordered = sorted(rows.values(), key=lambda r: (r.day, _version_key(r.version), r.nemesis, r.client))
    bad = [
        {
            "day": r["day"],
            "version": r["version"],
            "nemesis": r["nemesis"],
            "client": r["client"],
            "run_dir": _local(r["dir"]),
            "errors": dict(sorted((r["e"] or {}).items())),
        }
        for r in sorted(invalid, key=lambda r: (r["day"], _version_key(r["version"]), r["dir"]))
    ]
    if not ordered:
        raise BadHistory(f"{store}: no run directories (no config.json with a Kafka version under it)")
    return Trend(str(store) if is_uri(store) else str(Path(store)), ordered, bad)


def _local(uri: str) -> str:
    return uri.removeprefix("file://") if uri.startswith("file:///") else uri.removeprefix("file:")


def _control_cell(row: TrendRow) -> str:
    """Runs with a control-plane error, of the runs whose control plane was checked; and how many
    runs could not have every rule checked though they expected it."""
    if not row.control_checked and not row.control_incomplete:
        return "-"
    cell = f"{row.control_invalid} of {row.control_checked}"
    return cell + (f", {row.control_incomplete} incomplete" if row.control_incomplete else "")


def _anomaly_cell(row: TrendRow) -> str:
    return ", ".join(f"{n} {a['runs']} ({a['errors']:,})" for n, a in row.anomalies.items()) or "-"


def _cells(r: TrendRow) -> tuple:
    kept = "" if r.kept is None else f"{r.kept:.0%}"
    return (
        r.day,
        r.version,
        r.nemesis,
        r.client,
        r.runs,
        r.valid,
        r.invalid,
        r.unknown,
        r.unchecked,
        r.stalled,
        kept,
        "" if r.held is None else f"{r.held:.0%}",
        _control_cell(r),
        _anomaly_cell(r),
    )


HEADER = (
    "day",
    "Kafka",
    "nemesis",
    "client",
    "runs",
    "valid",
    "invalid",
    "unknown",
    "unchecked",
    "stalled",
    "kept between faults (median)",
    "every key held (median of group runs)",
    "control plane: invalid of checked (incomplete)",
    "anomalies: runs (instances)",
)


def markdown(t: Trend) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in t.rows:
        lines.append("| " + " | ".join(str(c) for c in _cells(r)) + " |")
    if t.invalid_runs:
        lines += ["", "Invalid runs:", ""]
        for b in t.invalid_runs:
            errors = ", ".join(f"{n} {c:,}" for n, c in b["errors"].items())
            lines.append(f"- {b['day']} Kafka {b['version']} {b['nemesis']} {b['client']}: {errors} ({b['run_dir']})")
    return "\n".join(lines) + "\n"


def charts(t: Trend) -> list[str]:
    """SVG: the share of checked runs that were invalid, and the number of runs, per day and version."""
    days = sorted({r.day for r in t.rows})
    versions = sorted({r.version for r in t.rows}, key=_version_key)
    x = {d: i + 0.5 for i, d in enumerate(days)}  # each day in the middle of its band
    share: dict[str, dict[str, list[int]]] = {v: {} for v in versions}  # version -> day -> [invalid, checked, runs]
    for r in t.rows:
        acc = share[r.version].setdefault(r.day, [0, 0, 0])
        acc[0] += r.invalid
        acc[1] += r.valid + r.invalid + r.unknown
        acc[2] += r.runs
    x_max = len(days)
    step = max(1, len(days) // 10)  # at most about ten day labels
    short = len(days) > 1 and all(d[:4].isdigit() for d in days)  # 11-23 when every label is a date
    ticks = [(x[d], d[5:] if short else d) for i, d in enumerate(days) if i % step == 0]
    inv = Chart("invalid runs / checked runs, per day", x_max, 1.0, "day", "share invalid", x_labels=ticks)
    cnt = Chart(
        "runs per day", x_max, max(a[2] for s in share.values() for a in s.values()), "day", "runs", x_labels=ticks
    )
    for i, v in enumerate(versions):
        colour = PALETTE[i % len(PALETTE)]
        pts = [(x[d], a[0] / a[1]) for d, a in sorted(share[v].items()) if a[1]]  # days with checked runs
        inv.line(pts, f"Kafka {v}", colour).dots(pts, "", colour, r=2.5)
        runs = [(x[d], a[2]) for d, a in sorted(share[v].items())]
        cnt.line(runs, f"Kafka {v}", colour).dots(runs, "", colour, r=2.5)
    for chart in (inv, cnt):
        chart.legend = [entry for entry in chart.legend if entry[1]]
    return [inv.render(), cnt.render()]


def write(t: Trend, out: Path) -> dict[str, Path]:
    """trend.md, trend.csv, trend.json, trend.svg and trend.html in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {k: out / f"trend.{k}" for k in ("md", "csv", "json", "svg", "html")}
    paths["md"].write_text(markdown(t))
    with paths["csv"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            ["day", "version", "nemesis", "client", "runs", *VERDICTS, "stalled", "kept", "held", "control_checked"]
            + ["control_invalid", "anomalies"]
        )
        for r in t.rows:
            w.writerow(
                [
                    r.day,
                    r.version,
                    r.nemesis,
                    r.client,
                    r.runs,
                    r.valid,
                    r.invalid,
                    r.unknown,
                    r.unchecked,
                    r.stalled,
                    "" if r.kept is None else r.kept,
                    "" if r.held is None else r.held,
                    r.control_checked,
                    r.control_invalid,
                    ";".join(f"{n}={a['runs']}/{a['errors']}" for n, a in r.anomalies.items()),
                ]
            )
    paths["json"].write_text(json.dumps(t.to_json(), indent=2) + "\n")
    svgs = charts(t)
    paths["svg"].write_text(svgs[0].replace(">", ">" + _SVG_STYLE, 1))
    rows = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in _cells(r)) + "</tr>" for r in t.rows)
    invalid = "".join(
        f"<li>{escape(b['day'])} Kafka {escape(b['version'])} {escape(b['nemesis'])} {escape(b['client'])}: "
        f"{escape(', '.join(f'{n} {c:,}' for n, c in b['errors'].items()))} "
        f'(<a href="{escape(Path(b["run_dir"]).as_uri() if b["run_dir"].startswith("/") else b["run_dir"])}'
        f'/report.html">report</a>)</li>'
        for b in t.invalid_runs
    )
    paths["html"].write_text(
        "<!doctype html><meta charset=utf-8><title>kafka-chaos trend</title>"
        "<style>body{font:13px sans-serif;margin:20px}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}</style>"
        + _SVG_STYLE
        + f"<h1>kafka-chaos trend</h1><p>{escape(t.store)}: {sum(r.runs for r in t.rows)} runs</p>"
        + "".join(svgs)
        + "<table><tr>"
        + "".join(f"<th>{escape(h)}</th>" for h in HEADER)
        + f"</tr>{rows}</table>"
        + (f"<h2>Invalid runs</h2><ul>{invalid}</ul>" if invalid else "")
    )
    return paths
