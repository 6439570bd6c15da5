"""config.json, typed: what a run was (the cluster, the workload, the nemesis, what the run
learned as it went), written once by the run (runs/run.py) and read once by whoever holds the
run directory, then passed on: the evidence's writers (harness/metadata_log.py,
harness/replica_logs.py) and the check (checkers/check.py) take the object, not the file.

It lives on the history's floor, beside the run directory's names (history/run_dir.py), because
both the harness and the checkers read it. A field a reader does not know stays in `extra` and
is written back as it was; a run directory without config.json (a bare history) reads as the
empty config, whose every field says "not known".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from kafka_chaos.history.kraft import STATIC
from kafka_chaos.history.run_dir import RunDir

#: Fields written only when the run learned them (the order is config.json's).
_OPTIONAL = (
    "cluster_id",
    "run_id",
    "cluster_run_id",
    "history_started_unix_ms",
    "client",
    "client_version",
    "group_id",
    "effective_producer_config",
    "effective_consumer_config",
    "effective_member_config",
    "tiered",
)


@dataclass(frozen=True)
class RunConfig:
    """One run's config.json."""

    name: str | None = None
    kafka_version: str | None = None
    shape: dict[str, Any] = field(default_factory=dict)
    #: the brokers' configuration as the run set it (the user's, over the run's defaults)
    broker_config: dict[str, Any] = field(default_factory=dict)
    metadata_version: str | None = None
    quorum: str = STATIC
    disk: str | None = None
    workload: dict[str, Any] = field(default_factory=dict)
    #: the nemesis plan (nemesis/plan.py describe): its faults, schedule and colours
    nemesis: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    #: whether the run took control-plane evidence: True, False (turned off, or a shared cluster's
    #: run), None (not said: a run directory from before it was recorded)
    control_plane: bool | None = None
    cluster_id: str | None = None
    run_id: str | None = None
    cluster_run_id: str | None = None
    #: wall-clock time of the history's time 0
    history_started_unix_ms: float | None = None
    client: str | None = None
    client_version: str | None = None
    group_id: str | None = None
    effective_producer_config: dict[str, Any] | None = None
    effective_consumer_config: dict[str, Any] | None = None
    effective_member_config: dict[str, Any] | None = None
    #: a tiered cluster's remote storage (harness/tiered.py): `storage`, what implements it
    #: (LocalTieredStorage, or FolderRemoteStorageManager, ours), `release`, the Kafka release its
    #: jar is from or was built against, and `retention`; absent when the cluster had none
    tiered: dict[str, Any] | None = None
    #: fields this class does not name, kept as written
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunConfig:
        names = {f.name for f in fields(cls)} - {"extra"}
        known = {k: v for k, v in data.items() if k in names and v is not None}
        return cls(**known, extra={k: v for k, v in data.items() if k not in names})

    @classmethod
    def load(cls, run_dir: Path | None) -> RunConfig:
        """The run directory's config.json; the empty config when there is none or it is not a
        JSON object (a history checked on its own)."""
        path = RunDir(run_dir).config if run_dir is not None else None
        if path is None or not path.is_file():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        return cls.from_json(data) if isinstance(data, dict) else cls()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "extra":
                continue
            value = getattr(self, f.name)
            if f.name in _OPTIONAL and value is None:
                continue
            out[f.name] = value
        return {**out, **self.extra}

    def write(self, run_dir: Path) -> Path:
        path = RunDir(run_dir).config
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n")
        return path

    @property
    def known(self) -> bool:
        """Whether a config.json was read (a bare history's is not)."""
        return self != RunConfig()

    @property
    def topic(self) -> str:
        """The workload's topic; "chaos", the default, when it names none."""
        return str(self.workload.get("topic", "chaos"))

    @property
    def keys(self) -> list[str] | None:
        """The workload's keys ("topic/partition"); None when it does not say how many."""
        n = self.workload.get("keys")
        return [f"{self.topic}/{p}" for p in range(n)] if isinstance(n, int) else None

    @property
    def shared_cluster(self) -> bool:
        """Whether the run ran on a cluster another started (it takes no control-plane evidence)."""
        return self.cluster_run_id is not None
