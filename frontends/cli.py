"""The `kafka-chaos` command line.

Exit codes: 0 success, 1 the job ran and found a problem, 2 bad input (one line on stderr,
nothing left running), 3 a check that could prove nothing, 4 a check whose control plane could
not be fully checked (checkers/result.py EXIT_CODES), 130 interrupted. Ctrl-C and SIGTERM tear the
cluster down.

Each command imports what it runs inside its own function: `kafka-chaos --help`, `clean` or a
usage error should not pay for Spark, kafka-python and testcontainers (0.14 s against 0.8 s here). No
import cycle is dodged this way (tests/unit/test_layers.py).
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import logging
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docker.errors import DockerException

from kafka_chaos.harness.errors import KafkaChaosError, UsageError
from kafka_chaos.harness.fsync_disk import FSYNC_TRACKED, PAGE_CACHE
from kafka_chaos.harness.versions import DEFAULT_VERSION, KafkaVersion
from kafka_chaos.history.kraft import STATIC

if TYPE_CHECKING:  # imported where used: every command starts without them
    from kafka_chaos.harness.cluster_spec import ClusterSpec


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


#: --quiet: no progress or chatter on stderr (errors still print).
_quiet = False


def _say(message: str) -> None:
    if not _quiet:
        print(f"kafka-chaos: {message}", file=sys.stderr, flush=True)


def _error(message: str) -> None:
    print(f"kafka-chaos: error: {message}", file=sys.stderr, flush=True)


def _emit_json(data: dict[str, Any]) -> None:
    """--json: one JSON document on stdout, the only thing there (human text goes to stderr)."""
    print(json.dumps(data, sort_keys=True, default=str), flush=True)


def _progress():
    """Live progress on stderr (harness/progress.py), or none with --quiet."""
    from kafka_chaos.harness.progress import LiveProgress

    return None if _quiet else LiveProgress(prefix="kafka-chaos: ")


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress on stderr (errors and the result still print)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON document on stdout")


def _parser_of(cast: Callable[[str], Any], what: str) -> Callable[[str], Any]:
    """An argparse type whose mistakes are UsageErrors (one line, exit 2)."""

    def parse(text: str) -> Any:
        try:
            return cast(text)
        except ValueError:
            raise UsageError(f"expected {what}, got {text!r}") from None

    return parse


_int = _parser_of(int, "a whole number")
_number = _parser_of(float, "a number")


def _add_cluster_options(p: argparse.ArgumentParser, workdir: bool = True) -> None:
    """`workdir`: whether the command takes --workdir (`run` does not: its cluster's files go in
    its run directory, where the checker's evidence readers find them)."""
    p.add_argument("--kafka", default=DEFAULT_VERSION, metavar="VERSION", help=f"release (default {DEFAULT_VERSION})")
    p.add_argument("--nodes", type=_int, default=3, help="combined broker+controller nodes (default 3)")
    p.add_argument("--controllers", type=_int, default=0, help="dedicated controllers (with --brokers)")
    p.add_argument("--brokers", type=_int, help="brokers, when controllers are dedicated")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE", help="config override (repeatable)")
    p.add_argument("--metadata-version", help="format storage at this metadata version, e.g. 3.4-IV0")
    p.add_argument(
        "--quorum",
        default=STATIC,
        help="static (controller.quorum.voters, the default) or dynamic (KIP-853, Kafka 3.9.0 on)",
    )
    p.add_argument(
        "--disk",
        default=PAGE_CACHE,
        help=f"{PAGE_CACHE} (the host's folder, the default) or {FSYNC_TRACKED} (a FUSE layer, so that "
        "lose-unflushed drops exactly what was not fsynced; needs root and libfuse2)",
    )
    p.add_argument(
        "--tiered",
        action="store_true",
        help="tiered storage (KIP-405, Kafka 3.6.0 on): the brokers share one remote storage over a folder of "
        "the run, Kafka's LocalTieredStorage or, where Maven Central lacks it (4.4.0), kafka-chaos's own",
    )
    p.add_argument("--port-base", type=_int, help="publish brokers on 127.0.0.1:PORT, PORT+1, ...")
    if workdir:
        p.add_argument("--workdir", type=Path, help="where configs, data and logs go (default store/<command>/<time>/)")


def _bool(text: str) -> bool:
    if text.lower() in ("true", "on", "yes", "1"):
        return True
    if text.lower() in ("false", "off", "no", "0"):
        return False
    raise UsageError(f"expected true or false, got {text!r}")


#: How a WorkloadOptions field's annotation is parsed from its flag (str needs nothing).
_PARSERS: dict[str, Callable[[str], Any]] = {"int": _int, "int | None": _int, "float": _number, "bool": _bool}


class _HelpFromRecords(str):
    """A help text made only when help is shown: `run --help` lists what nemesis/faults.py's records
    say, while every other command starts without importing the nemesis (0.14 s instead of 0.8 s).
    argparse reads a help text with `strip()` and `%`; both make the text."""

    def __new__(cls, make: Callable[[], str]) -> _HelpFromRecords:
        text = super().__new__(cls, "(see --help)")
        text.make = make  # type: ignore[attr-defined]
        return text

    def strip(self, chars: str | None = None) -> str:
        return self.make().strip(chars)  # type: ignore[attr-defined]

    def __mod__(self, params: object) -> str:
        return self.make() % params  # type: ignore[attr-defined]


def _random_faults_help() -> str:
    from kafka_chaos.nemesis.faults import RANDOM

    return f"faults to mix at random: {','.join(RANDOM)}"


def _add_workload_options(p: argparse.ArgumentParser) -> None:
    """Workload options: one flag per WorkloadOptions field that names one (workloads/options.py,
    where the defaults, the safe configuration, live too), then the run's own options."""
    from kafka_chaos.workloads.options import WorkloadOptions as W

    for option in fields(W):
        if "flag" not in option.metadata:
            continue
        flag, parse = option.metadata["flag"], _PARSERS.get(option.type)
        p.add_argument(
            flag,
            dest=option.name,
            metavar=flag.lstrip("-").replace("-", "_").upper(),
            default=option.default,
            help=option.metadata["help"],
            **({"type": parse} if parse else {}),
        )
    p.add_argument("--nemesis", help=_HelpFromRecords(_random_faults_help))
    p.add_argument("--nemesis-interval", type=_number, default=10.0, help="quiet and hold periods (s, default 10)")
    p.add_argument(
        "--nemesis-start",
        type=_number,
        default=None,
        help="quiet seconds before the first fault (default: the interval); the liveness baseline is its second half",
    )
    p.add_argument(
        "--nemesis-targets",
        default="any",
        metavar="any|brokers|controllers",
        help="where the random faults that name no target aim (default any node; controllers: the quorum too)",
    )
    p.add_argument(
        "--nemesis-mix",
        default="serial",
        metavar="serial|overlap",
        help="serial: one random fault at a time (default); overlap: each fault family on its own clock, "
        "up to 3 faults at once on nodes drawn by role, the timeline drawn from the seed (docs/nemesis.md)",
    )
    p.add_argument(
        "--nemesis-script",
        type=Path,
        help="JSON list of timed steps, which may overlap, or a run's config.json to play its timeline again "
        "(see nemesis/schedule.py)",
    )
    p.add_argument("--store", type=Path, default=Path("store"), help="where run directories go (default store/)")
    p.add_argument("--name", help="run name (default: the workload's)")
    p.add_argument("--seed", type=_int, help="random seed of the generators")


def _cluster_spec(args: argparse.Namespace) -> ClusterSpec:
    from kafka_chaos.harness.cluster_spec import ClusterSpec
    from kafka_chaos.harness.config import parse_overrides

    if args.controllers and args.brokers is None:
        raise UsageError("--controllers needs --brokers (dedicated controllers plus brokers)")
    if args.brokers is not None and not args.controllers:
        raise UsageError("--brokers goes with --controllers; use --nodes for combined nodes")
    return ClusterSpec(
        args.kafka,
        nodes=args.nodes,
        controllers=args.controllers,
        brokers=args.brokers or 0,
        config=parse_overrides(args.config),
        metadata_version=args.metadata_version,
        quorum=args.quorum,
        disk=args.disk,
        tiered=args.tiered,
    )


def _cluster(args: argparse.Namespace, command: str):
    cluster = _cluster_spec(args).build().with_log(_say)
    if args.port_base:
        cluster.with_port_base(args.port_base)
    workdir = getattr(args, "workdir", None) or Path("store") / command / datetime.now().strftime("%Y%m%dT%H%M%S")
    return cluster.with_workdir(workdir)


def cmd_up(args: argparse.Namespace) -> int:
    cluster = _cluster(args, "up")
    started = time.monotonic()
    with cluster:
        _say(f"ready in {time.monotonic() - started:.1f} s; logs and data in {cluster.workdir}")
        for node in cluster.nodes:
            where = f"127.0.0.1:{node.external_port}" if node.external_port else "(controller only)"
            _say(f"  node {node.node_id} {node.alias}: {where}")
        print(cluster.bootstrap_servers, flush=True)
        _say("running until Ctrl-C (nodes you stop or kill meanwhile stay as you leave them)")
        while True:
            time.sleep(3600)


def cmd_demo(args: argparse.Namespace) -> int:
    from kafka_chaos.harness.smoke import produce_and_read_back

    if args.records < 1:
        raise UsageError(f"--records must be at least 1, got {args.records}")
    cluster = _cluster(args, "demo")
    started = time.monotonic()
    with cluster:
        _say(f"ready in {time.monotonic() - started:.1f} s; bootstrap {cluster.bootstrap_servers}")
        result = produce_and_read_back(cluster, count=args.records)
    print(f"Kafka {cluster.version}, {cluster.shape.describe()}: {result.account()}")
    if result.missing:
        print(f"missing values (first 20): {result.missing[:20]}")
    _say(f"cluster removed; logs in {cluster.workdir}")
    return 0 if result.ok else 1


def _workload_options(args: argparse.Namespace):
    from kafka_chaos.workloads.options import WorkloadOptions

    flagged = {f.name: getattr(args, f.name) for f in fields(WorkloadOptions) if "flag" in f.metadata}
    return WorkloadOptions(**flagged)


def _run_spec(args: argparse.Namespace):
    """The run the flags describe (Run.execute validates it before anything starts: bad input exits 2)."""
    from kafka_chaos.nemesis.plan import nemesis_plan
    from kafka_chaos.runs.spec import RunSpec

    plan = nemesis_plan(
        args.nemesis,
        args.nemesis_interval,
        args.nemesis_script,
        args.nemesis_start,
        args.nemesis_targets,
        args.nemesis_mix,
    )
    return RunSpec(
        _cluster_spec(args),
        _workload_options(args),
        plan,
        seed=args.seed,
        name=args.name,
        store=args.store,
        port_base=args.port_base,
        check=args.check,
        spark_master=args.spark_master,
        control_plane=args.control_plane,
    )


def cmd_run(args: argparse.Namespace) -> int:
    from kafka_chaos.checkers.check import format_summary
    from kafka_chaos.checkers.errors import BadHistory
    from kafka_chaos.checkers.measures.group_coverage import format_coverage
    from kafka_chaos.checkers.measures.liveness import format_liveness
    from kafka_chaos.checkers.tiered import format_reads
    from kafka_chaos.runs.run import run

    spec = _run_spec(args)
    progress = _progress()
    try:
        result = run(spec, progress or _say)
    except BadHistory as exc:
        raise UsageError(str(exc)) from None
    finally:
        if progress is not None:
            progress.close()
    run_dir, summary = result.run_dir, result.summary
    counts = summary.counts
    line = (
        f"{run_dir}: {summary.operations} operations in the {summary.workload_s:.1f} s workload phase "
        f"({summary.ops_per_s:.0f}/s): ok {counts.get('ok', 0)}, fail {counts.get('fail', 0)}, "
        f"info {counts.get('info', 0)}; final read {'complete' if summary.final_read_complete else 'INCOMPLETE'} "
        f"in {summary.final_read_s:.1f} s"
    )
    if summary.liveness:
        line += "\n" + format_liveness(summary.liveness)
    if summary.group_coverage:
        line += "\n" + format_coverage(summary.group_coverage)
    if summary.tiered_reads:
        line += "\n" + format_reads(summary.tiered_reads)
    out: dict[str, Any] = {"run_dir": str(run_dir), "workload": summary.to_json()}
    checked = result.check
    if checked is not None:
        out["check"] = checked.brief()
    if args.json:
        _say(line)
        _emit_json(out)
    else:
        print(line)
        if checked is not None:
            print(format_summary(checked))
    return checked.exit_code if checked is not None else 0


def _checked(path: str | Path, out: str | None, master: str | None, report: bool):
    from kafka_chaos.checkers.check import check_history
    from kafka_chaos.checkers.errors import BadHistory

    try:
        return check_history(path, out, master, report=report, progress=_progress())
    except BadHistory as exc:
        raise UsageError(str(exc)) from None


def cmd_check(args: argparse.Namespace) -> int:
    from kafka_chaos.checkers.check import format_summary

    result = _checked(args.path, args.out, args.spark_master, report=not args.no_report)
    if args.json:
        _emit_json(result.brief())
    else:
        print(format_summary(result))
    return result.exit_code


def cmd_scenarios(args: argparse.Namespace) -> int:
    from kafka_chaos.scenarios.registry import SCENARIOS

    for name, scenario in SCENARIOS.items():
        mark = f" [not reproduced: {scenario.not_reproduced}]" if scenario.not_reproduced else ""
        print(f"{name:<26} {scenario.one_line()}{mark}")
    return 0


def _shows(text: str | None) -> tuple[str, ...]:
    return tuple(n.strip() for n in (text or "").split(",") if n.strip())


def _add_script_options(p: argparse.ArgumentParser) -> None:
    """A nemesis script in place of a scenario (a finding's, shrunk: runs/shrink.py)."""
    p.add_argument(
        "--like",
        type=Path,
        metavar="RUN_DIR",
        help="with a nemesis script: the cluster, broker settings and workload of this run (its config.json)",
    )
    p.add_argument(
        "--shows",
        metavar="ANOMALY[,ANOMALY]",
        help="with a nemesis script: the anomalies that count as reproduced (default: any error anomaly)",
    )


def cmd_reproduce(args: argparse.Namespace) -> int:
    from kafka_chaos.runs.reproduce import markdown, parse_targets, reproduce, scenario_of

    scenario = scenario_of(args.scenario, args.like, _shows(args.shows))
    targets = parse_targets(args.kafka)
    progress = _progress()
    try:
        client = {k: v for k in ("client", "client_version") if (v := getattr(args, k)) is not None}
        rows, out = reproduce(
            scenario, targets, args.runs, args.store, progress or _say, args.spark_master, args.out, client or None
        )
    finally:
        if progress is not None:
            progress.close()
    ok = all(row.as_expected for row in rows)
    if args.json:
        _emit_json({"scenario": scenario.name, "as_expected": ok, "rows": [r.to_json() for r in rows], "out": str(out)})
    else:
        print(markdown(scenario, rows), end="")
    _say(f"table: {out / 'reproduce.md'} and {out / 'reproduce.json'}")
    return 0 if ok else 1


def cmd_bisect(args: argparse.Namespace) -> int:
    from kafka_chaos.runs.bisect import bisect
    from kafka_chaos.runs.reproduce import scenario_of

    scenario = scenario_of(args.scenario, args.like, _shows(args.shows))
    progress = _progress()
    try:
        result = bisect(scenario, args.good, args.bad, args.runs, args.store, progress or _say, args.metadata_version)
    finally:
        if progress is not None:
            progress.close()
    if args.json:
        _emit_json(
            {
                "scenario": scenario.name,
                "first_good": result.first_good,
                "last_bad": result.last_bad,
                "problem": result.problem,
                "probes": {v: [o.table_row() for o in outcomes] for v, outcomes in result.probes.items()},
            }
        )
        return 1 if result.problem else 0
    for version, outcomes in result.probes.items():
        lost = sum(o.reproduced for o in outcomes)
        print(f"{version:<10} loss in {lost} of {len(outcomes)} run(s)")
    if result.problem:
        _say(f"bisect stopped: {result.problem}")
        return 1
    print(f"first good release: {result.first_good} (last bad: {result.last_bad})")
    return 0


def _budget(text: str) -> float:
    from kafka_chaos.runs.explore import parse_budget

    try:
        return parse_budget(text)
    except UsageError as exc:
        raise ValueError(str(exc)) from None


def cmd_explore(args: argparse.Namespace) -> int:
    """A campaign (runs/explore.py): new, or `--resume`d from its directory with its own settings."""
    from kafka_chaos.runs import explore

    if args.runs is None and args.budget is None:
        raise UsageError("explore needs a budget: --budget (e.g. 30m) or --runs N")
    if args.runs is not None and args.runs < 1:
        raise UsageError(f"--runs must be at least 1, got {args.runs}")
    if args.nemesis_script is not None:
        raise UsageError("explore draws its own schedules: --nemesis-script is for run, reproduce and bisect")
    if args.resume is not None:
        campaign = explore.Campaign.load(args.resume)
    else:
        from kafka_chaos.nemesis.schedule import check_pool

        if not args.nemesis_interval > 0:
            raise UsageError(f"the nemesis interval must be greater than 0, got {args.nemesis_interval:g}")
        check_pool(args.nemesis_targets)
        # The run options without a nemesis: the campaign draws its own (--nemesis names its faults).
        unfaulted = argparse.Namespace(**{**vars(args), "nemesis": None, "nemesis_start": None})
        unfaulted.nemesis_targets, unfaulted.nemesis_mix = "any", "serial"
        spec = _run_spec(unfaulted)
        baseline = {
            "faults": None,
            "interval": args.nemesis_interval,
            "start": args.nemesis_start,
            "targets": args.nemesis_targets,
        }
        faults = args.nemesis.split(",") if args.nemesis else None
        chosen = baseline if args.baseline else None
        campaign = explore.new_campaign(spec, faults, chosen, args.store, args.name, args.nemesis_start)
    progress = _progress()
    shrink_budget = None if args.no_shrink else explore.parse_budget(args.shrink_budget)
    try:
        campaign = explore.run_campaign(
            campaign, runs=args.runs, budget_s=args.budget, reporter=progress or _say, shrink_budget_s=shrink_budget
        )
    finally:
        if progress is not None:
            progress.close()
    doc = campaign.document()
    if args.json:
        _emit_json(doc)
    else:
        print(
            f"{campaign.dir}: {doc['runs']} runs, {doc['states']} distinct states, {len(doc['findings'])} finding(s)"
            + (" (interrupted)" if campaign.interrupted else "")
        )
        for f in doc["findings"]:
            print(f"  {', '.join(f['anomalies'])}: {f['run']} (script {f['script']}, reproduced {f['reproduced']})")
    _say(f"table and plot: {campaign.dir / 'explore.md'}, {campaign.dir / 'states.svg'}")
    return 130 if campaign.interrupted else doc["exit_code"]


def cmd_trend(args: argparse.Namespace) -> int:
    from kafka_chaos.checkers.errors import BadHistory
    from kafka_chaos.checkers.load import is_uri, local_of
    from kafka_chaos.checkers.report import trend

    store = local_of(args.store) if is_uri(args.store) else Path(args.store)
    if args.out is None and store is None:
        raise UsageError(f"{args.store}: a store at a URI needs --out (a local directory for the trend's files)")
    _say(f"reading the run directories under {args.store}")
    try:
        t = trend.trend(args.store, args.spark_master)
    except BadHistory as exc:
        raise UsageError(str(exc)) from None
    out = args.out or store / "trend"
    paths = trend.write(t, out)
    if args.json:
        _emit_json({**t.to_json(), "files": {k: str(p) for k, p in paths.items()}})
    else:
        print(trend.markdown(t), end="")
    _say(f"table and plot: {paths['md']}, {paths['html']} ({paths['svg'].name}, {paths['csv'].name}, json)")
    return 0


def cmd_images_build(args: argparse.Namespace) -> int:
    from kafka_chaos.harness.engine import docker_client
    from kafka_chaos.harness.images import ensure_image

    version = KafkaVersion.parse(args.kafka)
    started = time.monotonic()
    tag = ensure_image(docker_client(), version, _say, rebuild=args.rebuild)
    print(tag)
    _say(f"{tag} ready in {time.monotonic() - started:.1f} s")
    return 0


def cmd_clean(args: argparse.Namespace) -> int:
    from kafka_chaos.harness.cleanup import remove_by_label, remove_workdirs
    from kafka_chaos.harness.engine import docker_client
    from kafka_chaos.harness.fuse_layer import unmount_stale

    containers, networks, runs = remove_by_label(docker_client(start=False), args.run, everything=args.all)
    stale = unmount_stale()
    workdirs = remove_workdirs(runs)  # after the mounts: nothing under them is served any more
    print(
        f"removed {containers} container(s) and {networks} network(s)"
        + (f", {workdirs} temporary workdir(s)" if workdirs else "")
        + (f", unmounted {stale} dead FUSE mount(s)" if stale else "")
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kafka-chaos", description="Chaos testing for Apache Kafka in KRaft mode.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    up = sub.add_parser("up", help="start a cluster, print its bootstrap servers, run until Ctrl-C")
    _add_cluster_options(up)
    up.set_defaults(func=cmd_up)

    demo = sub.add_parser("demo", help="start a cluster, write acks=all records, read them back, tear down")
    _add_cluster_options(demo)
    demo.add_argument("--records", type=_int, default=5000, help="records to write (default 5000)")
    demo.set_defaults(func=cmd_demo)

    run = sub.add_parser("run", help="run a workload against a fresh cluster and record its history")
    _add_cluster_options(run, workdir=False)
    _add_workload_options(run)
    run.add_argument("--check", action="store_true", help="check the history when the run ends (exit code of check)")
    run.add_argument("--spark-master", help="Spark master URL for --check (default: local[2], embedded)")
    run.add_argument(
        "--no-control-plane",
        dest="control_plane",
        action="store_false",
        help="take no control-plane evidence (quorum samples, every node's metadata log): not checked "
        "then, and no effect on the verdict",
    )
    _add_output_options(run)
    run.set_defaults(func=cmd_run)

    check = sub.add_parser(
        "check",
        help="check a history: exit 0 valid, 1 anomalies found, 2 bad input, 3 unknown (nothing proved), "
        "4 unknown (the control plane not fully checked)",
        description="Check a run directory or history file; writes results.json and report.html.",
    )
    check.add_argument(
        "path",
        help="a run directory or a history file (history.jsonl); a local path or a URI (file://, hdfs://, s3a://)",
    )
    check.add_argument(
        "--out", help="where results.json and report.html go (default: beside the history; required for a remote URI)"
    )
    check.add_argument("--spark-master", help="Spark master URL (default: local[2], embedded)")
    check.add_argument("--no-report", action="store_true", help="write results.json only")
    _add_output_options(check)
    check.set_defaults(func=cmd_check)

    scenarios = sub.add_parser("scenarios", help="list the scenario library")
    scenarios.set_defaults(func=cmd_scenarios)

    rep = sub.add_parser(
        "reproduce",
        help="run a scenario on Kafka versions: version x outcome table (exit 1 unless every row is as expected)",
    )
    rep.add_argument(
        "scenario",
        help="a library scenario (kafka-chaos scenarios), a scenario file (.yaml/.json/.py) "
        "or a nemesis script (a JSON list of steps, as shrinking writes them)",
    )
    rep.add_argument("--kafka", required=True, help="versions, comma-separated; VERSION@METADATA_VERSION pins one")
    rep.add_argument("--runs", type=_int, default=1, help="runs per version (default 1)")
    rep.add_argument("--store", type=Path, default=Path("store"), help="where run directories go (default store/)")
    rep.add_argument("--out", type=Path, help="where reproduce.md/json go (default store/<scenario>/reproduce-<time>/)")
    rep.add_argument("--spark-master", help="Spark master URL for the checks (default: local[2], embedded)")
    rep.add_argument("--client", help="kafka-python, librdkafka or java (default: the scenario's client)")
    rep.add_argument("--client-version", help="the Java client's release (default: the cluster's)")
    _add_script_options(rep)
    _add_output_options(rep)
    rep.set_defaults(func=cmd_reproduce)

    bis = sub.add_parser("bisect", help="find the first released version where a scenario's loss is gone")
    bis.add_argument("scenario", help="a library scenario, a scenario file or a nemesis script (a JSON list of steps)")
    bis.add_argument("--good", required=True, metavar="VERSION", help="a version without the loss")
    bis.add_argument("--bad", required=True, metavar="VERSION", help="an older version with it")
    bis.add_argument("--runs", type=_int, default=1, help="runs per probed version (default 1)")
    bis.add_argument("--metadata-version", help="format every probed cluster at this metadata version")
    bis.add_argument("--store", type=Path, default=Path("store"))
    _add_script_options(bis)
    _add_output_options(bis)
    bis.set_defaults(func=cmd_bisect)

    ex = sub.add_parser(
        "explore",
        help="search fault schedules: short runs, kept and mutated by the states they reach (docs/explore.md)",
        description="A campaign of short runs against one version and shape; takes run's options. "
        "Exit code as check's: 1 when a run found an error anomaly; 130 when interrupted.",
    )
    _add_cluster_options(ex, workdir=False)
    _add_workload_options(ex)
    ex.add_argument("--budget", type=_parser_of(_budget, "a budget such as 30m, 90s or 1h"), help="e.g. 30m, 1h")
    ex.add_argument("--runs", type=_int, help="explore runs to make (with --budget: whichever ends first)")
    ex.add_argument(
        "--baseline", action="store_true", help="a run of today's random mix after each explore run, same budget"
    )
    ex.add_argument("--resume", type=Path, metavar="DIR", help="go on with the campaign in DIR (its own settings)")
    ex.add_argument("--spark-master", help="Spark master URL for the checks (default: local[2], embedded)")
    ex.add_argument("--no-shrink", action="store_true", help="write each finding's script as it ran")
    ex.add_argument("--shrink-budget", default="30m", help="time to shrink the findings in (default 30m)")
    ex.set_defaults(func=cmd_explore, check=False, control_plane=True)
    _add_output_options(ex)

    tr = sub.add_parser(
        "trend",
        help="verdicts and anomalies of many runs per Kafka version, nemesis and day (table and plot)",
        description="Read every run directory under STORE (config.json, results.json, summary.json) on Spark.",
    )
    tr.add_argument(
        "store",
        help="a directory of run directories, at any depth (e.g. store/ or nightly artifacts); a path or a URI",
    )
    tr.add_argument(
        "--out", type=Path, help="where trend.md/csv/json/svg/html go (default STORE/trend/; required for a remote URI)"
    )
    tr.add_argument("--spark-master", help="Spark master URL (default: local[2], embedded)")
    _add_output_options(tr)
    tr.set_defaults(func=cmd_trend)

    images = sub.add_parser("images", help="prepare broker images")
    images_sub = images.add_subparsers(dest="images_command", required=True, parser_class=_Parser)
    build = images_sub.add_parser("build", help="resolve (or build) the image of a Kafka version")
    build.add_argument("--kafka", default=DEFAULT_VERSION, metavar="VERSION")
    build.add_argument("--rebuild", action="store_true", help="build from Maven jars even if an image exists")
    build.set_defaults(func=cmd_images_build)

    clean = sub.add_parser(
        "clean",
        help="remove containers, networks and temporary workdirs that runs left behind, and unmount dead "
        "fsync-tracked disks",
    )
    clean.add_argument("--run", help="only this run id (live or not)")
    clean.add_argument(
        "--all",
        action="store_true",
        help="every kafka-chaos container and network, live runs' too (default: those whose creating process is gone)",
    )
    clean.set_defaults(func=cmd_clean)
    return parser


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _stack_dumps_on_sigusr1() -> None:
    """`kill -USR1 <pid>` prints every thread's stack to stderr: where a run that does not end hangs
    (the CLI tests ask for it before they give up on a process). Not where stderr is no file (the
    CLI called inside a test that captures output)."""
    try:
        faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True)
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError and a ValueError
        pass


def main(argv: list[str] | None = None) -> int:
    global _quiet
    signal.signal(signal.SIGTERM, _interrupt)
    _stack_dumps_on_sigusr1()
    _quiet = False
    try:
        args = build_parser().parse_args(argv)
        _quiet = bool(getattr(args, "quiet", False))
        logging.basicConfig(
            level=logging.DEBUG if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
        )
        if not args.verbose:
            logging.getLogger("kafka").setLevel(logging.CRITICAL)
        return args.func(args)
    except UsageError as exc:
        _error(str(exc))
        return 2
    except KafkaChaosError as exc:  # a cluster that did not start, an image that did not build
        _error(str(exc))
        return 1
    except DockerException as exc:
        _error(f"Docker: {str(exc).splitlines()[0]}")
        return 1
    except KeyboardInterrupt:
        print("kafka-chaos: interrupted; cluster removed", file=sys.stderr, flush=True)
        return 130


if __name__ == "__main__":
    sys.exit(main())
