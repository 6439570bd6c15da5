"""`kafka-chaos run`: a cluster, a workload, a run directory with everything needed to check it.

store/<name>/<timestamp>/
    history.jsonl   the history (../shared/history-format.md), written as it happens
    config.json     the cluster and workload options, and the effective producer config
    summary.json    operation counts, throughput, timings (written at the end)
    scenario.json   a scenario's script: its roles, steps and how it ended (scenario runs)
    results.json, report.html   the check (checkers/), when the run is checked
    cluster/<node>/ each node's server.properties, data and logs (not on a shared cluster)
    control-plane/  the quorum sampled while the history was open (and after a faulted run's last
                    heal, for stuck-broker-metadata's window), every node's metadata log decoded
                    afterwards, gaps.json when some of it could not be collected
                    (harness/control_plane.py; not on a shared cluster)
store/<name>/latest -> <timestamp>
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from kafka_chaos.checkers.check import check_history
from kafka_chaos.checkers.measures import group_coverage, liveness
from kafka_chaos.harness.admin import log_starts_from, topic_metadata_from
from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.control_plane import ControlPlaneSampler
from kafka_chaos.harness.evidence_gaps import record_gap, undecoded_logs
from kafka_chaos.harness.logdump import DumpRequest, dump_all
from kafka_chaos.harness.metadata_log import node_logs_request, timeline_request, write_node_logs, write_timeline
from kafka_chaos.harness.names import group_id, new_run_id
from kafka_chaos.harness.replica_logs import replicas_request, write_replicas
from kafka_chaos.harness.tiered import ReadSources, local_log_starts, log_starts, lowest_local_starts, retention_margin
from kafka_chaos.harness.tiered import topic_config as tiered_topic_config
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.history.reporter import Reporter
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.run_dir import GAP_METADATA, RunDir
from kafka_chaos.history.tiered import LogStarts
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.plan import NemesisPlan
from kafka_chaos.nemesis.schedule import Schedule
from kafka_chaos.runs.result import RunResult
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.clients import open_client
from kafka_chaos.workloads.clients.java import build_driver
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.group import start_group
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.registry import get as get_workload
from kafka_chaos.workloads.runner import Runner, WorkloadSummary


def make_run_dir(store: Path, name: str) -> Path:
    """store/<name>/<timestamp>/ (unique), with store/<name>/latest pointing at it."""
    base = store.resolve() / name
    stamp = datetime.now().strftime("%Y%m%dT%H%M%S")
    run_dir, n = base / stamp, 1
    while run_dir.exists():
        n += 1
        run_dir = base / f"{stamp}-{n}"
    run_dir.mkdir(parents=True)
    latest = base / "latest"
    tmp = base / f".latest-{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(run_dir.name)
    os.replace(tmp, latest)
    return run_dir


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def create_topic(cluster: KafkaCluster, opts: WorkloadOptions) -> dict[str, str]:
    """The workload's topic: one partition per key; it must not exist yet. On a tiered cluster
    it is tiered, with retention that cannot delete what the run writes (harness/tiered.py).
    The workload's own `topic_config` goes over both. The settings it was created with."""
    configs = {"min.insync.replicas": str(opts.min_insync_replicas)}
    if cluster.tiered:
        configs.update(tiered_topic_config(opts.rate, opts.time_limit))
    configs.update({name: str(value) for name, value in opts.topic_config.items()})
    cluster.create_topic(opts.topic, opts.keys, opts.replication_factor, configs, timeout_ms=15000, exist_ok=False)
    return configs


class WorkloadPhase:
    """The workload phase on a started cluster: the topic, the history, the workload and its
    nemesis (`run()`; a bench runs one phase after another on one cluster). What it learns is
    kept on it as it goes, so that a phase that raised still tells its run how far it got (the
    history's time 0, the schedule's report). `control_plane`: sample the quorum into the run
    directory while the history is open, and until the window after the last heal (the final read
    overlaps it; harness/control_plane.py)."""

    def __init__(
        self,
        cluster: KafkaCluster,
        opts: WorkloadOptions,
        run_dir: Path,
        reporter: Reporter | None = None,
        seed: int | None = None,
        plan: NemesisPlan | None = None,
        run_id: str | None = None,
        control_plane: bool = False,
    ) -> None:
        self.cluster, self.opts, self.run_dir = cluster, opts, RunDir(run_dir)
        self.control_plane = control_plane
        #: What the phase names its group, transactional and client ids after: the cluster's run
        #: id, or the run's own on a cluster that several runs share.
        self.run_id = run_id or cluster.run_id
        self.reporter, self.seed, self.plan = reporter, seed, plan
        #: Wall-clock time of the history's time 0 (config.json's history_started_unix_ms).
        self.started_unix_ms: int | None = None
        #: The client library the phase spoke, and its version (config.json's client, client_version).
        self.client: tuple[str, str] | None = None
        self.schedule: Schedule | None = None
        #: The run's consumer group or share group (config.json's group_id), when its consumers
        #: subscribe or share: the share checker reads only that group's reloads (checkers/share).
        self.group_id: str | None = None
        #: A tiered run's proof that retention could delete nothing (config.json's tiered.retention).
        self.tiered_retention: dict[str, Any] | None = None

    def run(self) -> WorkloadSummary:
        workload = get_workload(self.opts.workload)
        started = time.monotonic()
        topic_config = create_topic(self.cluster, self.opts)
        if workload.prepare is not None:
            workload.prepare(self.cluster.bootstrap_servers, self.opts, self.run_id)
        if self.opts.grouped:
            start_group(self.cluster.bootstrap_servers, self.opts, self.run_id)
        if self.opts.grouped or self.opts.shares:
            self.group_id = group_id(self.run_id)
        client = open_client(self.opts, self.cluster.bootstrap_servers, self.cluster.version, self.run_dir.path)
        self.client = (client.name, client.version)
        try:
            counter = liveness.EventCounter()
            taps: list[Callable[[dict[str, Any]], None]] = [counter.add]
            coverage = group_coverage.CoverageCounter(self.opts.key_names) if self.opts.grouped else None
            if coverage is not None:
                taps.append(coverage.add)
            sources = ReadSources() if self.cluster.tiered else None
            if sources is not None:
                taps.append(sources.add)
            sampler = None
            if self.control_plane:
                sampler = ControlPlaneSampler(self.cluster, self.run_dir, self.reporter or print)
                taps.append(sampler.saw)

            def tap(event: dict[str, Any]) -> None:
                for each in taps:
                    each(event)

            with (
                HistoryWriter(self.run_dir.history, tap=tap) as history,
                sampler.running(history) if sampler is not None else contextlib.nullcontext(),
            ):
                self.started_unix_ms = round(history.started_unix_ms)
                ctx = RunContext(
                    history=history,
                    opts=self.opts,
                    bootstrap_servers=self.cluster.bootstrap_servers,
                    run_id=self.run_id,
                    isolation_level=workload.isolation_level,
                    client=client,
                )
                if self.plan is not None:
                    nemesis = Nemesis(self.cluster, history, self.seed, reporter=self.reporter, clients=ctx.stalls)
                    self.schedule = self.plan.schedule(nemesis, self.seed)
                before_final = self._tiered_starts(sources) if sources is not None else None
                summary = Runner(ctx, self.reporter, self.seed, self.schedule, before_final=before_final).run()
        finally:
            client.close()
        # Counted as the history was written, as the checker counts it from the file (checkers/measures/liveness.py).
        summary.liveness = liveness.measure(counter.counts())
        if summary.liveness["warning"] and self.reporter is not None:
            self.reporter(f"warning: {summary.liveness['warning']}")
        if sources is not None:
            summary.tiered_reads = sources.measure()
            self._record_log_starts()
            data_dirs = [node.data_dir for node in self.cluster.brokers]
            self.tiered_retention = retention_margin(
                topic_config, data_dirs, self.cluster.remote_dir, self.opts.key_names, time.monotonic() - started
            )
            if not self.tiered_retention["nothing_deletable"] and self.reporter is not None:
                self.reporter(
                    f"warning: retention could have deleted what this tiered run wrote: {self.tiered_retention}"
                )
        if coverage is not None:
            summary.group_coverage = coverage.measure()
            if summary.group_coverage and summary.group_coverage["warning"] and self.reporter is not None:
                self.reporter(f"warning: {summary.group_coverage['warning']}")
        return summary

    def _record_log_starts(self) -> None:
        """log-starts.json: each replica's and remote storage's start of every partition, now that
        the final read is done. Whatever fails here is said and leaves no file, so the check says
        the starts could not be judged, and the run goes on."""
        try:
            starts = self._log_starts()
            self.run_dir.log_starts.write_text(json.dumps(starts.to_json(), indent=2, sort_keys=True) + "\n")
        except Exception as exc:
            if self.reporter is not None:
                self.reporter(
                    f"warning: the tiered run's log starts could not be recorded: {type(exc).__name__}: {exc}"
                )

    def _log_starts(self) -> LogStarts:
        """Every replica's start of every partition and remote storage's, asked now
        (harness/tiered.py `log_starts`, each broker through harness/admin.py `log_starts_from`)."""
        brokers = [node.node_id for node in self.cluster.brokers]
        admin, failed = None, None
        try:
            admin = self.cluster.admin(request_timeout_ms=8000)
        except Exception as exc:  # every broker is then unanswered, and the file says why
            failed = exc

        def ask(broker: int) -> dict[str, Any]:
            if admin is None:
                raise failed or RuntimeError("no admin client")
            return log_starts_from(admin, broker, {self.opts.topic: list(range(self.opts.keys))})

        try:
            assignment = self._assignment(admin, brokers) if admin is not None else None
            return log_starts(ask, assignment, brokers, self.opts.key_names, self.cluster.remote_dir)
        finally:
            if admin is not None:
                admin.close()

    def _assignment(self, admin: Any, brokers: list[int]) -> dict[str, list[int]] | None:
        """Each key's replicas, from the metadata of the first broker that answers; None when none does."""
        for broker in brokers:
            try:
                described = topic_metadata_from(admin, broker, self.opts.topic)
            except Exception:  # the next broker, then every broker asked for every key (log_starts)
                continue
            topic = self.opts.topic
            return {f"{topic}/{p['partition_index']}": list(p["replica_nodes"]) for p in described["partitions"]}
        return None

    def _tiered_starts(self, sources: ReadSources) -> Callable[[], None]:
        """What tells `sources` the local log starts as the final read begins: each key's lowest
        local log start its replicas answer (`_log_starts`), else its lowest segment file on any
        broker's disk. The replicas' answer comes first: a node restarted by a fault may keep a
        segment file its log no longer counts (lose-unflushed leaves one)."""
        data_dirs = [node.data_dir for node in self.cluster.brokers]
        keys = self.opts.key_names

        def begin() -> None:
            on_disk = local_log_starts(data_dirs, keys)
            try:
                answered = lowest_local_starts(self._log_starts())
            except Exception:  # the segment files on disk are then the measure
                answered = {}
            sources.begin({key: answered.get(key, on_disk[key]) for key in keys})

        return begin


class Run:
    """One run from its spec: like a testcontainers container, the constructor only records;
    `execute()` makes the run directory, starts the cluster, runs the workload phase, writes
    config.json, summary.json and (for a scenario) scenario.json once, reads the evidence and
    checks when the spec asks. `result` fills as it goes: a run that raised still has its
    directory in it.

    `cluster`: one its caller started and stops, shared by fault-free runs one after another (a
    3-node start costs some 8 s of CPU, and a test suite's fault-free runs need no fresh one).
    It must be the cluster the spec describes (RunSpec.check_shared); the run gets its own run
    id (config.json's `run_id`; `cluster_run_id` is the containers') for its group, transactional
    and client ids, and each run on it needs its own topic (`WorkloadOptions.topic`)."""

    def __init__(self, spec: RunSpec, reporter: Reporter = print, *, cluster: KafkaCluster | None = None) -> None:
        self.spec, self.reporter, self.shared = spec, reporter, cluster
        self.result: RunResult | None = None
        #: config.json as written (`_write`), passed on to what reads it after the run
        self.config: RunConfig | None = None

    def execute(self) -> RunResult:
        spec = self.spec = self.spec.validate().with_seed()
        if self.shared is not None:
            spec.check_shared(self.shared)
            spec = self.spec = replace(spec, control_plane=False)  # the nodes' data is not this run's
        # Built (once per version) before any cluster starts: the Java client's, and the admin a
        # share run of another client asks for its group's start offsets (librdkafka_share.py).
        if spec.workload.client == "java" or spec.workload.consumer == "share":
            build_driver(spec.workload.java_version(KafkaVersion.parse(spec.cluster.version)), self.reporter)
        cluster = self.shared if self.shared is not None else spec.build_cluster()
        run_dir = make_run_dir(spec.store, spec.run_name)
        self.result = result = RunResult(run_dir, spec)
        learned: dict[str, Any] = {}
        if self.shared is None:
            cluster.with_workdir(RunDir(run_dir).cluster).with_log(self.reporter)
            run_id, owned = cluster.run_id, cluster
        else:
            run_id, owned = new_run_id(), contextlib.nullcontext()
            learned["cluster_run_id"] = cluster.run_id
        started = time.monotonic()
        phase = WorkloadPhase(
            cluster, spec.workload, run_dir, self.reporter, spec.seed, spec.nemesis, run_id, spec.control_plane
        )
        try:
            with owned:
                learned.update(cluster_id=cluster.cluster_id, run_id=run_id)
                ready_s = time.monotonic() - started
                where = "on the shared cluster" if self.shared is not None else f"cluster ready in {ready_s:.1f} s"
                self.reporter(f"{where}; running {spec.workload.workload} for {spec.workload.time_limit:g} s")
                result.summary = phase.run()
        finally:
            result.scenario = phase.schedule.report() if phase.schedule is not None else None
            self._write(result, cluster, phase, learned, time.monotonic() - started)
        config = self.config
        if spec.evidence or spec.control_plane:
            collect_evidence(
                run_dir, cluster.version, self.reporter, scenario=spec.evidence, nodes=spec.control_plane, config=config
            )
        if spec.check:
            result.check = check_history(
                run_dir, master=spec.spark_master, report=spec.report, progress=self.reporter, config=config
            )
        result.wall_s = round(time.monotonic() - started, 1)
        return result

    def _write(
        self, result: RunResult, cluster: KafkaCluster, phase: WorkloadPhase, learned: dict, wall_s: float
    ) -> None:
        """config.json, summary.json and scenario.json, each written once, whatever happened."""
        files = RunDir(result.run_dir)
        config = self.spec.describe(cluster) | learned
        if phase.started_unix_ms is not None:
            config["history_started_unix_ms"] = phase.started_unix_ms
        if phase.client is not None:
            config["client"], config["client_version"] = phase.client
        if phase.group_id is not None:
            config["group_id"] = phase.group_id
        if phase.tiered_retention is not None and config.get("tiered"):
            config["tiered"] = {**config["tiered"], "retention": phase.tiered_retention}
        if result.summary is not None:
            config["effective_producer_config"] = result.summary.effective_producer_config
            config["effective_consumer_config"] = result.summary.effective_consumer_config
            if result.summary.effective_member_config:
                config["effective_member_config"] = result.summary.effective_member_config
        self.config = RunConfig.from_json(config)
        _write_json(files.config, self.config.to_json())
        summary = {} if result.summary is None else result.summary.to_json()
        _write_json(files.summary, {"complete": result.summary is not None, "wall_s": round(wall_s, 3), **summary})
        if result.scenario is not None:
            cluster_spec = self.spec.cluster
            head = {
                "scenario": self.spec.nemesis.label if self.spec.nemesis else None,
                "version": cluster_spec.version,
                "metadata_version": cluster_spec.metadata_version,
            }
            files.scenario.write_text(json.dumps({**head, **result.scenario}, indent=2) + "\n")


def run(spec: RunSpec, reporter: Reporter = print, *, cluster: KafkaCluster | None = None) -> RunResult:
    """The whole run (runs/spec.py describes it, the check included); `cluster`: a started cluster
    its caller shares between fault-free runs (see Run). The run directory keeps the history even
    when interrupted."""
    return Run(spec, reporter, cluster=cluster).execute()


def collect_evidence(
    run_dir: Path,
    version: KafkaVersion,
    log: Reporter,
    *,
    scenario: bool = True,
    nodes: bool = False,
    config: RunConfig | None = None,
) -> None:
    """What the run's nodes left, decoded by one throwaway container: `scenario`, the metadata
    timeline and replicas.json beside the history; `nodes`, every node's metadata log into
    control-plane/metadata/ (the timeline is then read from the same decoding). A failure here
    is logged, not fatal; the nodes' metadata logs not decoded, all or one, are also recorded in
    control-plane/gaps.json (harness/evidence_gaps.py): the rules that read them are not checked.
    A gap that gaps.json cannot take (GapNotRecorded) ends the run: no verdict beats a wrong one."""
    files = RunDir(run_dir)
    cfg = config if config is not None else RunConfig.load(run_dir)
    jobs: list[tuple[str, DumpRequest | None, Callable[[Any], Any]]] = []
    logs = node_logs_request(run_dir) if nodes else None
    if nodes:  # a None request too: every node gets its (empty) file
        jobs.append((NODE_LOGS, logs, lambda out: write_node_logs(run_dir, out, cfg)))
    if scenario:
        timeline = logs or timeline_request(run_dir)
        if timeline is not None:
            jobs.append(("metadata timeline", timeline, lambda out: write_timeline(run_dir, version, out, cfg)))
        replicas = replicas_request(run_dir, cfg)
        if replicas is not None:
            jobs.append(("replica logs", replicas, lambda out: write_replicas(run_dir, out, cfg)))
    requests = list(dict.fromkeys(request for _, request, _ in jobs if request is not None))
    try:
        outputs = dict(zip(requests, dump_all(version, files.cluster, requests), strict=True))
    except Exception as exc:  # evidence is a bonus; the verdict stands without it
        log(f"could not decode the nodes' logs: {type(exc).__name__}: {exc}")
        if nodes:
            record_gap(files, GAP_METADATA, f"metadata not decoded: {type(exc).__name__}: {exc}")
        return
    decoded = nodes
    for what, request, write in jobs:
        try:
            output = None if request is None else outputs[request]
            if isinstance(output, Exception):
                raise output
            write(output)
        except Exception as exc:
            log(f"could not read the {what}: {type(exc).__name__}: {exc}")
            if what == NODE_LOGS:
                record_gap(files, GAP_METADATA, f"metadata not decoded: {type(exc).__name__}: {exc}")
                decoded = False
    if decoded:
        _record_undecoded(files, logs is None)


#: The job that decodes every node's metadata log (control-plane/metadata/), by its name in the log.
NODE_LOGS = "nodes' metadata logs"


def _record_undecoded(files: RunDir, no_log: bool) -> None:
    """gaps.json's "metadata" for a node whose log held data that decoded to nothing, and for a
    run none of whose nodes left a metadata log at all."""
    if no_log:
        record_gap(files, GAP_METADATA, "metadata not decoded: no node left a metadata log")
        return
    missing = undecoded_logs(files)
    if missing:
        record_gap(files, GAP_METADATA, f"metadata not decoded for {', '.join(missing)}: no record came out")
