"""How far a run got toward a loss: progress ladders, each a chain of waypoints toward one of the
invariants the checker judges, read from the evidence every run already records (the metadata log,
the quorum's views and replication samples, the history), never from the verdict. `explore`
(runs/explore.py) favours the schedules that climb furthest, and places a mutation's new move at
the deepest waypoint's moment, on its nodes' roles.

The ladders (issue 61), each rung reached only after the one before it:
- `data` (acknowledged data on fewer replicas, toward `lost-write`): a workload partition's ISR
  below its replicas -> the ISR left with one replica holding acknowledged writes past its flushed
  point (it alone is sure to hold them, and a power loss of it would take them) -> that replica lost
  its unflushed writes (a power loss, a wiped disk) while it was still the whole ISR -> it led the
  partition again. The third rung is also reached when the replica lost its unflushed writes
  before it was left alone, while in the ISR, and stayed in it until then: a restarted broker
  keeps its place until its session ends, and may be left the last member before it fetched what
  it lost. A kill is not the third rung: the page cache outlives the process, so the
  replica comes back with every write it acknowledged, and leading again loses nothing; nor is a
  fence, which loses no data either.
  Kafka acknowledges before it flushes, and by default flushes a log only when a segment rolls or
  the broker shuts down cleanly (the recovery point moves only then; an unclean restart does not
  move it). So a write is past the replica's flushed point when it was acknowledged after the
  replica's last clean stop; none is when the run flushes every message
  (`log.flush.interval.messages=1`). Rolls are not followed (a segment is 1 GiB by default; a
  tiered topic's roll every second, and flushes by time, are not modelled).
- `quorum` (toward `quorum-split-brain`): a fault that pauses the quorum's leader or cuts it from a
  voter (read from the cut's grudge, whichever nodes it names: a bridge names its bridge) -> a new
  quorum leader elected while the old one runs -> two nodes up each holding itself leader in
  different epochs.
- `voter` (toward `metadata-divergence`): a voter's disk wiped -> a quorum election after it ->
  a quorum leader whose high watermark is below the highest one before the wipe.

Each waypoint carries its time (ns on the history's clock) and the nodes it is about.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_chaos.checkers.measures.states import (
    Faults,
    Nodes,
    elected,
    epoch_leaders,
    is_leader_change,
    read_faults,
    read_records,
)
from kafka_chaos.history import faults as model
from kafka_chaos.history.events import OK, PAUSED, WRITES
from kafka_chaos.history.file import read_history
from kafka_chaos.history.metadata_replay import Replay, bumps_on_isr_shrink
from kafka_chaos.history.quorum_view import claims_to_lead
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.run_dir import RunDir

DATA, QUORUM, VOTER = "data", "quorum", "voter"
#: Each ladder's rungs, in order.
LADDERS: dict[str, tuple[str, ...]] = {
    DATA: ("isr-shrunk", "isr-one-past-flush", "last-replica-lost-unflushed", "leads-again"),
    QUORUM: ("leader-isolated", "elected-beside-it", "two-claims"),
    VOTER: ("voter-emptied", "election-after", "leader-below-hw"),
}


@dataclass(frozen=True)
class Waypoint:
    ladder: str
    rung: int  # 1-based: how many rungs of the ladder are reached with it
    time: int
    nodes: tuple[str, ...]

    @property
    def name(self) -> str:
        return LADDERS[self.ladder][self.rung - 1]

    def to_json(self) -> dict[str, Any]:
        return {
            "ladder": self.ladder,
            "rung": self.rung,
            "name": self.name,
            "time": self.time,
            "nodes": list(self.nodes),
        }


@dataclass
class Climb:
    """A run's waypoints: per ladder, the rungs it reached (the first time each was reached)."""

    waypoints: list[Waypoint] = field(default_factory=list)

    def depth(self, ladder: str) -> int:
        return max((w.rung for w in self.waypoints if w.ladder == ladder), default=0)

    @property
    def depths(self) -> dict[str, int]:
        return {ladder: self.depth(ladder) for ladder in LADDERS}

    @property
    def deepest(self) -> Waypoint | None:
        """The waypoint furthest up any ladder, as a share of its length (the earliest of ties)."""
        return max(self.waypoints, key=lambda w: (w.rung / len(LADDERS[w.ladder]), -w.time), default=None)


@dataclass
class _Log:
    """The longest metadata log, replayed: each workload partition's (time, ISR, leader, replicas)
    after every change, the quorum's leader changes."""

    partitions: dict[str, list[tuple[int, tuple[int, ...], int, int]]] = field(default_factory=dict)
    elections: list[tuple[int, int]] = field(default_factory=list)  # (time, new quorum leader)


def _replay(path: Path, topic: str, bump: bool, leaders: dict[int, int]) -> _Log:
    out, replay, prefix = _Log(), Replay(bump), f"{topic}/"
    for rec in read_records(path):
        kind, data, t = rec.get("type"), rec["data"], rec.get("time")
        if t is None:
            continue
        if is_leader_change(kind):
            leader = elected(rec, leaders)
            if leader is not None:
                out.elections.append((int(t), leader))
            continue
        step = replay.step(int(rec.get("offset", -1)), kind, data)
        if step.broker is not None:
            continue
        if step.partition and step.partition.startswith(prefix) and step.after is not None:
            after = step.after
            out.partitions.setdefault(step.partition, []).append(
                (int(t), tuple(after.isr), after.leader, len(after.replicas))
            )
    return out


def _acks(history: Path) -> dict[str, list[int]]:
    """key -> the completion times of its acknowledged sends."""
    out: dict[str, list[int]] = {}
    for e in read_history(history):
        if e["type"] != OK or e["f"] not in WRITES or not isinstance(e.get("value"), list):
            continue
        for mop in e["value"]:
            if isinstance(mop, list) and len(mop) >= 2 and mop[0] == "send":
                out.setdefault(str(mop[1]), []).append(int(e["time"]))
    return out


def _lost_unflushed(faults: Faults, alias: str, after: int) -> list[int]:
    """When faults that lose a node's unflushed writes (a power loss, a wiped disk) hit `alias` at
    or after `after` (their invokes)."""
    return sorted(
        w.start for w in faults.windows if alias in w.nodes and w.effect in model.LOSES_DATA and w.start >= after
    )


def _isr_at(changes: list[tuple[int, tuple[int, ...], int, int]], times: list[int], t: int) -> tuple[int, ...] | None:
    i = bisect.bisect_right(times, t) - 1
    return changes[i][1] if i >= 0 else None


def flushes_every_message(config: dict[str, Any]) -> bool:
    """Whether the brokers fsync every message (`log.flush.interval.messages=1`): then no
    acknowledged write is past a replica's flushed point."""
    try:
        return int(config.get("log.flush.interval.messages", 0)) == 1
    except (TypeError, ValueError):
        return False


def _flushed_at(faults: Faults, alias: str, t: int) -> int:
    """When `alias`'s logs were last known flushed by `t`: its latest clean stop (a broker shutting
    down cleanly flushes them), else never (-1)."""
    return max((w.start for w in faults.windows if w.f == "stop" and alias in w.nodes and w.start <= t), default=-1)


def _past_flush(
    changes: list[tuple[int, tuple[int, ...], int, int]], since: int, acks: list[int], faults: Faults, nodes: Nodes
) -> Waypoint | None:
    """The first moment from `since` that a partition's ISR is one replica holding a write
    acknowledged after that replica's flushed point (`acks`: completion times, sorted)."""
    for i, (t, isr, _, _) in enumerate(changes):
        if t < since or len(isr) != 1:
            continue
        until = changes[i + 1][0] if i + 1 < len(changes) else float("inf")
        alias = nodes.alias(isr[0])
        after = bisect.bisect_right(acks, _flushed_at(faults, alias, t))
        if after < len(acks) and acks[after] < until:
            return Waypoint(DATA, 2, max(t, acks[after]), (alias,))
    return None


def _lost_before(
    changes: list[tuple[int, tuple[int, ...], int, int]],
    times: list[int],
    acks: list[int],
    faults: Faults,
    alias: str,
    sole_id: int,
    alone_at: int,
) -> bool:
    """Whether the replica left alone in the ISR at `alone_at` had lost its unflushed writes before:
    a power loss while it was in the ISR, of writes acknowledged past its flushed point, and in the
    ISR without a break from then on (out of it and back would mean it caught up again). Kafka
    keeps a restarted replica in the ISR until its broker's session ends, so it may be left the
    last member before it fetched what it lost."""
    for lost in _lost_unflushed(faults, alias, 0):
        if lost >= alone_at:
            break
        flushed = _flushed_at(faults, alias, lost)
        if not any(flushed < t < lost for t in acks):
            continue
        first = bisect.bisect_right(times, lost) - 1
        span = [changes[first]] if first >= 0 else []
        span += [c for c in changes if lost < c[0] <= alone_at]
        if span and all(sole_id in isr for _, isr, _, _ in span):
            return True
    return False


def data_ladder(
    log: _Log, acks: dict[str, list[int]], faults: Faults, nodes: Nodes, every_message: bool = False
) -> list[Waypoint]:
    """The deepest climb of any workload partition up the `data` ladder (`every_message`: the
    brokers flush every message, so the second rung is out of reach)."""
    best: list[Waypoint] = []
    for key, changes in log.partitions.items():
        got: list[Waypoint] = []
        shrunk = next(((t, isr) for t, isr, _, n in changes if 0 < len(isr) < n), None)
        if shrunk is None:
            continue
        got.append(Waypoint(DATA, 1, shrunk[0], tuple(nodes.alias(i) for i in shrunk[1])))
        times = [c[0] for c in changes]
        acked = sorted(acks.get(key, []))
        alone_past = None if every_message else _past_flush(changes, shrunk[0], acked, faults, nodes)
        if alone_past is not None:
            got.append(alone_past)
        if len(got) == 2:
            sole_id = changes[bisect.bisect_right(times, got[1].time) - 1][1][0]
            alias = got[1].nodes[0]

            alone = (sole_id,)
            downs = [t for t in _lost_unflushed(faults, alias, got[1].time) if _isr_at(changes, times, t) == alone]
            if _lost_before(changes, times, acked, faults, alias, sole_id, got[1].time):
                downs.append(got[1].time)
            if downs:
                down = min(downs)
                got.append(Waypoint(DATA, 3, down, (alias,)))
                previous = changes[bisect.bisect_right(times, down) - 1][2]
                for t, _, leader, _ in changes:
                    if t > down and leader == sole_id and previous != sole_id:
                        got.append(Waypoint(DATA, 4, t, (alias,)))
                        break
                    if t > down:
                        previous = leader
        if len(got) > len(best):
            best = got
    return best


def _voters(log: _Log, samples: list[dict[str, Any]], nodes: Nodes) -> set[str]:
    """The quorum's voters: those its replication samples list, and every node that led it."""
    voters = {nodes.alias(m["id"]) for s in samples for m in (s.get("voters") or []) if isinstance(m, dict)}
    return voters | {nodes.alias(leader) for _, leader in log.elections}


def quorum_ladder(
    log: _Log, run: RunDir, faults: Faults, nodes: Nodes, samples: list[dict[str, Any]]
) -> list[Waypoint]:
    """The `quorum` ladder: the active controller isolated, a new one elected while it runs, two claims."""
    got: list[Waypoint] = []
    elections = sorted(log.elections)
    if not elections:
        return got
    times = [t for t, _ in elections]
    voters = _voters(log, samples, nodes)

    def leader_at(t: int) -> int | None:
        i = bisect.bisect_right(times, t) - 1
        return elections[i][1] if i >= 0 else None

    for w in sorted(faults.windows, key=lambda w: w.start):
        leader = leader_at(w.start)
        if leader is None:
            continue
        alias = nodes.alias(leader)
        paused = w.effect == PAUSED and alias in w.nodes
        cut = w.f == "partition" and w.name != "partition:replication" and w.parts(alias, voters)
        if paused or cut:
            got.append(Waypoint(QUORUM, 1, w.start, (alias,)))
            break
    if not got:
        return got
    old = got[0].nodes[0]
    for t, new in elections:
        if t > got[0].time and nodes.alias(new) != old and not faults.down(old, t):
            got.append(Waypoint(QUORUM, 2, t, (old, nodes.alias(new))))
            break
    if len(got) == 2 and run.quorum_views.is_file():
        claims: dict[str, int] = {}
        for v in read_records(run.quorum_views):
            node, t, epoch = v.get("node"), v.get("time"), v.get("leader_epoch")
            if v.get("error") or node is None or t is None or not isinstance(epoch, int):
                continue
            if claims_to_lead(v) and not faults.from_the_dead(node, t, v.get("written")):
                claims[node] = epoch
            else:
                claims.pop(node, None)
            up = {n: e for n, e in claims.items() if not faults.down(n, t)}
            if t >= got[1].time and len(set(up.values())) > 1:
                got.append(Waypoint(QUORUM, 3, t, tuple(sorted(up))))
                break
    return got


def voter_ladder(log: _Log, faults: Faults, nodes: Nodes, samples: list[dict[str, Any]]) -> list[Waypoint]:
    """The `voter` ladder: a voter wiped, an election after it, a leader below the old high watermark
    (`samples`: the quorum's replication samples)."""
    voters = _voters(log, samples, nodes)
    got: list[Waypoint] = []
    wipe = next(
        (w for w in sorted(faults.windows, key=lambda w: w.start) if w.effect in model.EMPTIES and w.nodes & voters),
        None,
    )
    if wipe is None:
        return got
    got.append(Waypoint(VOTER, 1, wipe.start, tuple(sorted(wipe.nodes & voters))))
    election = next(((t, n) for t, n in sorted(log.elections) if t > wipe.start), None)
    if election is None:
        return got
    got.append(Waypoint(VOTER, 2, election[0], (nodes.alias(election[1]),)))
    before = [
        s["high_watermark"] for s in samples if s.get("time", 0) < wipe.start and s.get("high_watermark") is not None
    ]
    if before:
        top = max(before)
        for s in samples:
            hw, t = s.get("high_watermark"), s.get("time", 0)
            if t >= election[0] and s.get("leader_id") == election[1] and hw is not None and hw < top:
                got.append(Waypoint(VOTER, 3, t, (nodes.alias(election[1]),)))
                break
    return got


def climb(run_dir: str | Path) -> Climb:
    """Every ladder's waypoints a run directory's files show (none when it has none of them)."""
    run = RunDir(Path(run_dir))
    cfg = RunConfig.load(run.path)
    faults = read_faults(read_history(run.history)) if run.history.is_file() else Faults()
    nodes = Nodes.load(run)
    logs = run.metadata_logs()
    log = _Log()
    if logs:
        longest = max(logs.values(), key=lambda p: p.stat().st_size)
        bump = bumps_on_isr_shrink(cfg.metadata_version, cfg.kafka_version)
        log = _replay(longest, cfg.topic, bump, epoch_leaders(run))
    acks = _acks(run.history) if run.history.is_file() and log.partitions else {}
    every = flushes_every_message(cfg.broker_config)
    samples = list(read_records(run.quorum_replication)) if run.quorum_replication.is_file() else []
    found = data_ladder(log, acks, faults, nodes, every) + quorum_ladder(log, run, faults, nodes, samples)
    return Climb(found + voter_ladder(log, faults, nodes, samples))
