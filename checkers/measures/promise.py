"""What a configuration promises to survive, and whether the faults a run applied went past it
(`beyond_promise`): a loss there is the configuration's limit, not a Kafka bug. The rules, and why
each is what Kafka promises, are in docs/nemesis.md ("Shrinking, and faults beyond what a
configuration promises"). Read by shrinking and explore (runs/shrink.py, runs/explore.py); the
faults are the one model of the nemesis's operations (history/faults.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_chaos.history import events
from kafka_chaos.history import faults as model
from kafka_chaos.history.file import read_history
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.run_dir import RunDir

#: The effect of each disk fault of a history written before operations recorded their effect
#: (nemesis/bounds.py DISK_FAULTS: a wipe empties the disk, a lose-unflushed restarts the node).
_DISK_FAULT_EFFECTS = {"wipe": events.WIPED, "lose-unflushed": events.RESTARTED}


@dataclass(frozen=True)
class Applied:
    """One fault as a run's history recorded it: the nodes it hit, from its invoke to its
    completion (seconds from the history's start), and its effect (history/events.py)."""

    fault: str
    nodes: tuple[str, ...]
    start: float
    end: float
    effect: str | None = None

    @property
    def means(self) -> model.Meaning:
        effect = self.effect if self.effect is not None else _DISK_FAULT_EFFECTS.get(self.fault)
        return model.meaning(effect)

    @property
    def loses_data(self) -> bool:
        """It emptied a disk or dropped what was not fsynced (a wipe, a power loss)."""
        return self.means.loses_unflushed or self.means.empties

    @property
    def wipes(self) -> bool:
        return self.means.empties


#: The operator's forced unclean election (scenarios/script.py), recorded as a nemesis operation.
ELECT_UNCLEAN = "elect-unclean"


def applied_faults(history: Iterable[Mapping[str, Any]]) -> list[Applied]:
    """The faults a history's nemesis applied (history/faults.py `pair`), in invoke order: each
    completed (`ok` or `info`) operation, from its invoke to its completion. Undos and failed
    operations are not faults, and neither is a node's own exit (`exit`, recorded by the nemesis
    for a process that ended itself): no fault applied it, so it cannot count toward what a
    configuration promises to survive, and shrinking cannot remove it."""
    return [
        Applied(op.f, tuple(op.nodes), op.itime / 1e9, op.ctime / 1e9, op.effect)
        for op in model.pair(history)
        if op.type != events.FAIL and op.ctime is not None and not op.heals and not op.means.undo and not op.means.own
    ]


def _setting(config: RunConfig, workload_key: str, broker_key: str, default: Any) -> Any:
    if config.workload.get(workload_key) is not None:
        return config.workload[workload_key]
    return config.broker_config.get(broker_key, default)


def _at_once(windows: list[tuple[float, float, str]]) -> tuple[set[str], float]:
    """The most distinct nodes whose windows hold at one instant, and that instant."""
    best: set[str] = set()
    at = 0.0
    for start, _, _ in windows:
        now = {node for s, e, node in windows if s <= start <= e}
        if len(now) > len(best):
            best, at = now, start
    return best, at


def beyond_promise(steps_applied: Iterable[Applied], config: RunConfig | Mapping[str, Any]) -> list[str]:
    """Why the faults a run applied went past what its configuration promises to survive (empty:
    they did not, and a loss is Kafka's to answer for). The rules, and why each is what Kafka
    promises, are in docs/nemesis.md ("Shrinking, and faults beyond what a configuration
    promises")."""
    cfg = config if isinstance(config, RunConfig) else RunConfig.from_json(dict(config))
    applied = list(steps_applied)
    reasons: list[str] = []
    acks = str(cfg.workload.get("acks", "all")).lower()
    min_isr = int(_setting(cfg, "min_insync_replicas", "min.insync.replicas", 1))
    flush_every = str(cfg.broker_config.get("log.flush.interval.messages", ""))
    lag_s = float(cfg.broker_config.get("replica.lag.time.max.ms", 30000)) / 1000
    unclean = str(cfg.broker_config.get("unclean.leader.election.enable", "false")).lower() == "true"
    controllers = int(cfg.shape.get("controllers", 0) or 0)
    voters_n = controllers or int(cfg.shape.get("brokers", 0) or 0)

    def is_voter(node: str) -> bool:
        return node.startswith("controller-") if controllers else True

    def is_broker(node: str) -> bool:
        return not (controllers and node.startswith("controller-"))

    disrupted = sorted(
        {n for a in applied if a.effect in model.DISRUPTS or a.loses_data for n in a.nodes if is_broker(n)}
    )
    if acks not in ("all", "-1") and disrupted:
        reasons.append(
            f"acks={acks} acknowledges a write its leader alone may hold, and faults took brokers "
            f"{', '.join(disrupted)} away: a failover may lose acknowledged writes by design"
        )
    if unclean and disrupted:
        reasons.append(
            "unclean.leader.election.enable=true lets a replica that lacks acknowledged writes lead, "
            f"and faults took brokers {', '.join(disrupted)} away"
        )
    if any(a.fault == ELECT_UNCLEAN for a in applied):
        reasons.append(
            "an unclean leader election was forced (elect-unclean): it may elect a replica that lacks "
            "acknowledged writes, which no configuration promises to survive"
        )
    # A replica that lost its log lacks what it lost until it has fetched it again: as long as Kafka
    # gives any follower to catch up (replica.lag.time.max.ms) after it is back.
    losses = [
        (a.start, a.end + lag_s, n)
        for a in applied
        if a.loses_data and (a.wipes or flush_every != "1")
        for n in a.nodes
        if is_broker(n)
    ]
    lost, at = _at_once(losses)
    if acks in ("all", "-1") and len(lost) >= min_isr:
        rf = int(_setting(cfg, "replication_factor", "default.replication.factor", 0) or 0)
        brokers = int(cfg.shape.get("brokers", 0) or 0)
        may = f" (replication factor {rf} of {brokers} brokers: if they held its replicas)" if 0 < rf < brokers else ""
        reasons.append(
            f"{len(lost)} replica(s) ({', '.join(sorted(lost))}) lost their unflushed writes or their disk "
            f"at once (around {at:g} s), and min.insync.replicas={min_isr} leaves an acknowledged write on "
            f"only {min_isr} replica(s): none need keep it{may}"
        )
    wiped = [(a.start, a.end + lag_s, n) for a in applied if a.wipes for n in a.nodes if is_voter(n)]
    gone, at = _at_once(wiped)
    majority = voters_n // 2 + 1
    if voters_n and len(gone) >= majority:
        reasons.append(
            f"{len(gone)} of {voters_n} KRaft voters ({', '.join(sorted(gone))}) lost their disks at once "
            f"(around {at:g} s): a committed metadata record is kept by a majority ({majority}) only"
        )
    return reasons


def beyond_promise_of_run(run_dir: Path) -> list[str]:
    """`beyond_promise` of a run directory: its history's faults against its config.json."""
    config = RunConfig.load(run_dir)
    return beyond_promise(applied_faults(read_history(RunDir(run_dir).history)), config)
