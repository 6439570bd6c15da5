"""A run directory's files, named in one place.

`kafka-chaos run` writes one directory per run (store/<name>/<timestamp>/); the checker, `trend`,
`reproduce` and the scenarios read it, and users' scripts do too, so its layout is an interface.
This module is the only place where the name of one of its files is spelled. It lives on the
history's floor, below every reader and writer of a run directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HISTORY = "history.jsonl"  # the run's evidence (../shared/history-format.md)
HISTORY_COLUMNS = "history.parquet"  # its columnar copy, what the checker reads (history/columns.py)
CONFIG = "config.json"  # what ran: version, shape, broker config, workload, nemesis, seed
SUMMARY = "summary.json"  # how the run went: counts, timings, liveness
RESULTS = "results.json"  # the check's verdict and anomalies
REPORT = "report.html"  # the check's page
SCENARIO = "scenario.json"  # a scenario's script: its steps, roles and outcome
TIMELINE = "metadata-timeline.json"  # the KRaft metadata log, decoded (harness/metadata_log.py)
REPLICAS = "replicas.json"  # each replica's log against what clients saw (harness/replica_logs.py)
LOG_STARTS = (
    "log-starts.json"  # a tiered run's log start offsets at its end, per replica and remote (harness/tiered.py)
)
CLUSTER = "cluster"  # one folder per node: config/, data/, logs/
CONTROL_PLANE = "control-plane"  # the quorum and the metadata log, on the history's clock (harness/control_plane.py)
CONTROL_PLANE_NODES = "nodes.json"  # every node's id and roles, the voters, the timing settings
QUORUM_VIEWS = "quorum-views.jsonl"  # each node's own quorum-state, sampled
QUORUM_REPLICATION = "quorum-replication.jsonl"  # DescribeQuorum, sampled
HOST_STALL = "host-stall.jsonl"  # the stall probe's wakes, on the history's clock (history/stall.py)
CONTROL_PLANE_GAPS = "gaps.json"  # evidence expected but not collected whole: {"metadata"|"views"|"replication": why}
METADATA_LOGS = "metadata"  # <alias>.jsonl: each node's metadata log, decoded (harness/metadata_log.py)

#: The kinds of control-plane evidence gaps.json names (harness/evidence_gaps.py writes it): the
#: nodes' decoded metadata logs, each node's quorum views, the quorum's replication samples.
GAP_METADATA, GAP_VIEWS, GAP_REPLICATION = "metadata", "views", "replication"
GAP_KINDS = (GAP_METADATA, GAP_VIEWS, GAP_REPLICATION)


@dataclass(frozen=True)
class RunDir:
    """One run directory; each property is the path of one of its files."""

    path: Path

    @property
    def history(self) -> Path:
        return self.path / HISTORY

    @property
    def history_columns(self) -> Path:
        return self.path / HISTORY_COLUMNS

    @property
    def config(self) -> Path:
        return self.path / CONFIG

    @property
    def summary(self) -> Path:
        return self.path / SUMMARY

    @property
    def results(self) -> Path:
        return self.path / RESULTS

    @property
    def report(self) -> Path:
        return self.path / REPORT

    @property
    def scenario(self) -> Path:
        return self.path / SCENARIO

    @property
    def timeline(self) -> Path:
        return self.path / TIMELINE

    @property
    def replicas(self) -> Path:
        return self.path / REPLICAS

    @property
    def log_starts(self) -> Path:
        return self.path / LOG_STARTS

    @property
    def cluster(self) -> Path:
        return self.path / CLUSTER

    @property
    def control_plane(self) -> Path:
        return self.path / CONTROL_PLANE

    @property
    def control_plane_nodes(self) -> Path:
        return self.control_plane / CONTROL_PLANE_NODES

    @property
    def control_plane_gaps(self) -> Path:
        return self.control_plane / CONTROL_PLANE_GAPS

    @property
    def host_stall(self) -> Path:
        return self.control_plane / HOST_STALL

    @property
    def quorum_views(self) -> Path:
        return self.control_plane / QUORUM_VIEWS

    @property
    def quorum_replication(self) -> Path:
        return self.control_plane / QUORUM_REPLICATION

    def metadata_log(self, alias: str) -> Path:
        """One node's metadata log, decoded."""
        return self.control_plane / METADATA_LOGS / f"{alias}.jsonl"

    def metadata_logs(self) -> dict[str, Path]:
        """alias -> its decoded metadata log, for each node whose log was decoded, by alias."""
        return {p.stem: p for p in sorted((self.control_plane / METADATA_LOGS).glob("*.jsonl"))}

    def node_data_dirs(self) -> list[Path]:
        """Each node's data folder (its log directory), in node order."""
        return sorted(self.cluster.glob("*/data"))
