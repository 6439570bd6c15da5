"""`kafka-chaos run`: a cluster, a workload, a run directory with everything needed to check it.

store/<name>/<timestamp>/
    history.jsonl   the history (../shared/history-format.md), written as it happens
    config.json     the cluster and workload options, and the effective producer config
    summary.json    operation counts, throughput, timings (written at the end)
    cluster/<node>/ each node's server.properties, data and logs
store/<name>/latest -> <timestamp>
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kafka_chaos.checkers import liveness
from kafka_chaos.checkers.run_dir import RunDir
from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.config import FAULT_DETECTION
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.history import HistoryWriter, read_history
from kafka_chaos.harness.images import Log
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.schedule import (
    RandomSchedule,
    Schedule,
    ScriptedSchedule,
    Step,
    load_script,
    parse_fault_list,
    parse_script,
)
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.runner import Progress, Runner, WorkloadSummary


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


def create_topic(cluster: KafkaCluster, opts: WorkloadOptions) -> None:
    """The workload's topic: one partition per key; it must not exist yet."""
    configs = {"min.insync.replicas": str(opts.min_insync_replicas)}
    cluster.create_topic(opts.topic, opts.keys, opts.replication_factor, configs, timeout_ms=15000, exist_ok=False)


@dataclass
class NemesisPlan:
    """What the nemesis does during a run: a random mix, or a script (nemesis/schedule.py)."""

    faults: list[str] = field(default_factory=list)
    interval: float = 10.0
    script: list[Step] | None = None
    #: A schedule of its own (a scenario's script, scenarios/), built on the run's nemesis.
    custom: Callable[[Nemesis], Schedule] | None = None
    label: str | None = None

    def schedule(self, nemesis: Nemesis, seed: int | None) -> Schedule | None:
        if self.custom is not None:
            return self.custom(nemesis)
        if self.script is not None:
            return ScriptedSchedule(nemesis, self.script)
        if self.faults:
            return RandomSchedule(nemesis, self.faults, self.interval, seed)
        return None

    def broker_defaults(self) -> dict[str, str]:
        """Broker settings this plan needs unless the user set them: fast failure detection
        (harness/config.py) for random and scripted faults; a scenario brings its own."""
        return {} if self.custom is not None else dict(FAULT_DETECTION)

    def describe(self) -> dict[str, Any]:
        if self.custom is not None:
            return {"scenario": self.label}
        if self.script is not None:
            return {"script": [asdict(step) for step in self.script]}
        return {"faults": self.faults, "interval": self.interval} if self.faults else {}


def nemesis_plan(
    faults: str | list[str] | None, interval: float, script: list[dict] | str | Path | None
) -> NemesisPlan | None:
    """A run's nemesis from its options (the command line's, chaos_run's): faults mixed at random
    every `interval` s, or a script (a JSON file or its decoded steps); None: no nemesis."""
    if faults and script is not None:
        raise UsageError("a fault list (--nemesis) and a script (--nemesis-script) exclude each other")
    if not interval > 0:
        raise UsageError(f"the nemesis interval must be greater than 0, got {interval:g}")
    if script is not None:
        return NemesisPlan(script=parse_script(script) if isinstance(script, list) else load_script(Path(script)))
    if faults:
        return NemesisPlan(faults=parse_fault_list(faults if isinstance(faults, str) else ",".join(faults)),
                           interval=interval)  # fmt: skip
    return None


def run_workload(
    cluster: KafkaCluster,
    opts: WorkloadOptions,
    run_dir: Path,
    progress: Progress | None = None,
    seed: int | None = None,
    plan: NemesisPlan | None = None,
    notes: dict[str, Any] | None = None,
) -> WorkloadSummary:
    """Create the topic, run the workload (and the nemesis) against a started cluster, write the history.

    `notes` receives `history_started_unix_ms`, the wall-clock time of the history's time 0."""
    create_topic(cluster, opts)
    with HistoryWriter(RunDir(run_dir).history) as history:
        if notes is not None:
            notes["history_started_unix_ms"] = round(history.started_unix_ms)
        ctx = RunContext(history=history, opts=opts, bootstrap_servers=cluster.bootstrap_servers, run_id=cluster.run_id)
        schedule = plan.schedule(Nemesis(cluster, history, seed, observe=progress), seed) if plan else None
        summary = Runner(ctx, progress, seed, schedule).run()
    # Measured from the history file, as the checker measures it (checkers/liveness.py).
    summary.liveness = liveness.measure(liveness.count_events(read_history(RunDir(run_dir).history)))
    if summary.liveness["warning"] and progress is not None:
        progress(f"warning: {summary.liveness['warning']}")
    return summary


def check_fits(cluster: KafkaCluster, opts: WorkloadOptions) -> None:
    brokers = cluster.shape.brokers
    if opts.replication_factor > brokers:
        raise UsageError(f"replication factor {opts.replication_factor} needs at least as many brokers ({brokers})")
    if opts.min_insync_replicas > opts.replication_factor:
        raise UsageError("min.insync.replicas cannot exceed the replication factor")


def run(
    cluster: KafkaCluster,
    opts: WorkloadOptions,
    store: Path,
    name: str | None = None,
    log: Log = print,
    progress: Progress | None = None,
    seed: int | None = None,
    plan: NemesisPlan | None = None,
) -> tuple[Path, WorkloadSummary | None]:
    """The whole run; the run directory keeps the history even when interrupted."""
    opts.validate()
    check_fits(cluster, opts)
    if plan is not None:
        for key, value in plan.broker_defaults().items():
            cluster.config.setdefault(key, value)
    run_dir = make_run_dir(store, name or opts.workload)
    cluster.with_workdir(RunDir(run_dir).cluster).with_log(log)
    config = {
        "name": name or opts.workload,
        "kafka_version": str(cluster.version),
        "shape": asdict(cluster.shape),
        "broker_config": cluster.config,
        "metadata_version": cluster.metadata_version,
        "workload": opts.to_dict(),
        "nemesis": plan.describe() if plan else {},
        "seed": seed,
    }
    _write_json(RunDir(run_dir).config, config)
    started = time.monotonic()
    summary: WorkloadSummary | None = None
    try:
        with cluster:
            config["cluster_id"] = cluster.cluster_id
            config["run_id"] = cluster.run_id
            ready_s = time.monotonic() - started
            log(f"cluster ready in {ready_s:.1f} s; running {opts.workload} for {opts.time_limit:g} s")
            summary = run_workload(cluster, opts, run_dir, progress, seed, plan, config)
    finally:
        if summary is not None:
            config["effective_producer_config"] = summary.effective_producer_config
        _write_json(RunDir(run_dir).config, config)
        _write_json(
            RunDir(run_dir).summary,
            {
                "complete": summary is not None,
                "wall_s": round(time.monotonic() - started, 3),
                **({} if summary is None else summary.to_json()),
            },
        )
    return run_dir, summary
